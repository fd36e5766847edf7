/*
 * Attributes on the virtual ranks' communicators (attr.h).
 */
#include "virt/attr.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "virt/comm.h"
#include "virt/room.h"

/* The process's keyvals are numbered from here: clear of Open MPI's
   predefined keyvals (small numbers), of MPICH's (encoded handles) and of
   MPI_KEYVAL_INVALID. */
#define FIRST_KEYVAL 0x10000

typedef struct {
    MPI_Comm_copy_attr_function *copy; /* NULL: MPICH's MPI_COMM_NULL_COPY_FN */
    MPI_Comm_delete_attr_function *del;
    void *extra_state;
    int freed; /* no new value can be set with it */
} keyval_entry;

static pthread_mutex_t keyvals_mutex = PTHREAD_MUTEX_INITIALIZER;
static keyval_entry *keyvals;
static int n_keyvals, cap_keyvals;

/* The predefined attributes' values: any tag the runtime carries (an int),
   no host, every rank does I/O, clocks not synchronized, the job's world,
   one application. */
static int tag_ub = INT_MAX, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_is_global = 0,
           universe_size = 1, appnum = 0, last_used_code = 0;

void tdm_virt_attr_init(int world_size, int last)
{
    universe_size = world_size;
    last_used_code = last;
}

static int *predefined(int keyval)
{
    if (keyval == MPI_TAG_UB)
        return &tag_ub;
    if (keyval == MPI_HOST)
        return &host;
    if (keyval == MPI_IO)
        return &io;
    if (keyval == MPI_WTIME_IS_GLOBAL)
        return &wtime_is_global;
    if (keyval == MPI_UNIVERSE_SIZE)
        return &universe_size;
    if (keyval == MPI_APPNUM)
        return &appnum;
    if (keyval == MPI_LASTUSEDCODE)
        return &last_used_code;
    return NULL;
}

int tdm_virt_attr_predefined(int keyval)
{
    return predefined(keyval) != NULL;
}

/* A copy of keyval's entry in *out; 0 when it is none of the process's. */
static int entry_of(int keyval, keyval_entry *out)
{
    int i = keyval - FIRST_KEYVAL, found = 0;
    pthread_mutex_lock(&keyvals_mutex);
    if (i >= 0 && i < n_keyvals) {
        *out = keyvals[i];
        found = 1;
    }
    pthread_mutex_unlock(&keyvals_mutex);
    return found;
}

int tdm_virt_keyval_create(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                           void *extra_state, int *keyval)
{
    int err = MPI_SUCCESS;
    pthread_mutex_lock(&keyvals_mutex);
    keyval_entry *grown = tdm_virt_room(keyvals, n_keyvals, &cap_keyvals, sizeof *grown, 16);
    if (grown)
        keyvals = grown;
    else
        err = MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS) {
        keyvals[n_keyvals] = (keyval_entry){.copy = copy, .del = del, .extra_state = extra_state};
        *keyval = FIRST_KEYVAL + n_keyvals++;
    }
    pthread_mutex_unlock(&keyvals_mutex);
    return err;
}

/* The values set with it keep its callbacks; its number is not used again. */
int tdm_virt_keyval_free(int *keyval)
{
    int i = *keyval - FIRST_KEYVAL, err = MPI_ERR_KEYVAL;
    pthread_mutex_lock(&keyvals_mutex);
    if (i >= 0 && i < n_keyvals && !keyvals[i].freed) {
        keyvals[i].freed = 1;
        err = MPI_SUCCESS;
    }
    pthread_mutex_unlock(&keyvals_mutex);
    if (err == MPI_SUCCESS)
        *keyval = MPI_KEYVAL_INVALID;
    return err;
}

/* The index of keyval's value on c, or -1. */
static int find(const tdm_virt_comm *c, int keyval)
{
    for (int i = 0; i < c->n_attrs; i++)
        if (c->attrs[i].keyval == keyval)
            return i;
    return -1;
}

static int append(tdm_virt_comm *c, int keyval, void *value)
{
    tdm_virt_attr *grown = tdm_virt_room(c->attrs, c->n_attrs, &c->cap_attrs, sizeof *grown, 4);
    if (!grown)
        return MPI_ERR_NO_MEM;
    c->attrs = grown;
    c->attrs[c->n_attrs++] = (tdm_virt_attr){.keyval = keyval, .value = value};
    return MPI_SUCCESS;
}

static void take_out(tdm_virt_comm *c, int keyval)
{
    int i = c ? find(c, keyval) : -1;
    if (i < 0)
        return;
    memmove(&c->attrs[i], &c->attrs[i + 1], sizeof *c->attrs * (size_t)(c->n_attrs - i - 1));
    c->n_attrs--;
}

/* The delete callback of keyval's value on 'handle', if it has one. */
static int call_delete(const keyval_entry *e, MPI_Comm handle, int keyval, void *value)
{
    return e->del ? e->del(handle, keyval, value, e->extra_state) : MPI_SUCCESS;
}

int tdm_virt_attr_set(int local, int slot, MPI_Comm handle, int keyval, void *value)
{
    keyval_entry e;
    if (predefined(keyval) || !entry_of(keyval, &e) || e.freed)
        return MPI_ERR_KEYVAL;
    tdm_virt_comm *c = tdm_virt_comm_get(local, slot);
    if (!c)
        return MPI_ERR_COMM;
    int i = find(c, keyval);
    if (i >= 0) {
        int err = call_delete(&e, handle, keyval, c->attrs[i].value);
        if (err != MPI_SUCCESS)
            return err;
        c = tdm_virt_comm_get(local, slot); /* the callback may have moved the table */
        if (c && (i = find(c, keyval)) >= 0) {
            c->attrs[i].value = value;
            return MPI_SUCCESS;
        }
    }
    return c ? append(c, keyval, value) : MPI_ERR_COMM;
}

int tdm_virt_attr_get(int local, int slot, int keyval, void *value, int *flag)
{
    int *fixed = predefined(keyval);
    keyval_entry e;
    *flag = 0;
    if (fixed) {
        *(void **)value = fixed;
        *flag = 1;
        return MPI_SUCCESS;
    }
    if (!entry_of(keyval, &e) || e.freed)
        return MPI_ERR_KEYVAL;
    const tdm_virt_comm *c = tdm_virt_comm_get(local, slot);
    if (!c)
        return MPI_ERR_COMM;
    int i = find(c, keyval);
    if (i >= 0) {
        *(void **)value = c->attrs[i].value;
        *flag = 1;
    }
    return MPI_SUCCESS;
}

int tdm_virt_attr_delete(int local, int slot, MPI_Comm handle, int keyval)
{
    keyval_entry e;
    if (predefined(keyval) || !entry_of(keyval, &e))
        return MPI_ERR_KEYVAL;
    tdm_virt_comm *c = tdm_virt_comm_get(local, slot);
    if (!c)
        return MPI_ERR_COMM;
    int i = find(c, keyval);
    if (i < 0)
        return MPI_SUCCESS;
    int err = call_delete(&e, handle, keyval, c->attrs[i].value);
    if (err == MPI_SUCCESS)
        take_out(tdm_virt_comm_get(local, slot), keyval);
    return err;
}

int tdm_virt_attr_copy(int local, int from, MPI_Comm from_handle, int to)
{
    const tdm_virt_comm *c = tdm_virt_comm_get(local, from);
    if (!c || !c->n_attrs)
        return MPI_SUCCESS;
    int n = c->n_attrs;
    tdm_virt_attr *list = malloc(sizeof *list * (size_t)n);
    if (!list)
        return MPI_ERR_NO_MEM;
    memcpy(list, c->attrs, sizeof *list * (size_t)n);
    int err = MPI_SUCCESS;
    for (int i = 0; i < n && err == MPI_SUCCESS; i++) {
        keyval_entry e;
        if (!entry_of(list[i].keyval, &e) || !e.copy)
            continue;
        void *out = NULL;
        int flag = 0;
        err = e.copy(from_handle, list[i].keyval, e.extra_state, list[i].value, &out, &flag);
        tdm_virt_comm *made = tdm_virt_comm_get(local, to);
        if (err == MPI_SUCCESS && flag)
            err = made ? append(made, list[i].keyval, out) : MPI_ERR_COMM;
    }
    free(list);
    return err;
}

int tdm_virt_attr_delete_all(int local, int slot, MPI_Comm handle)
{
    for (;;) {
        tdm_virt_comm *c = tdm_virt_comm_get(local, slot);
        if (!c || !c->n_attrs)
            return MPI_SUCCESS;
        tdm_virt_attr last = c->attrs[c->n_attrs - 1];
        keyval_entry e;
        int err = entry_of(last.keyval, &e) ? call_delete(&e, handle, last.keyval, last.value)
                                            : MPI_SUCCESS;
        if (err != MPI_SUCCESS)
            return err;
        take_out(tdm_virt_comm_get(local, slot), last.keyval);
    }
}
