/*
 * Tandem's monitoring counters as MPI_T performance variables, beside the
 * MPI library's own.
 *
 * For each kind K there are three variables, bound to a communicator, of
 * class MPI_T_PVAR_CLASS_COUNTER and type MPI_UNSIGNED_LONG_LONG:
 *   tandem_monitor_K_messages   one value per rank of the communicator
 *   tandem_monitor_K_bytes      one value per rank of the communicator
 *   tandem_monitor_K_histogram  TANDEM_MONITOR_BINS values per rank
 * (the peer is a rank of the handle's communicator; the counters themselves
 * know the world rank of each message's peer, whatever communicator it used).
 *
 * Indices: the MPI's variables keep theirs. Tandem's take the
 * TDM_PVARS indices that follow the MPI's count at the first MPI_T call, and
 * a variable the MPI library adds later is shown TDM_PVARS further on, so an
 * index never changes meaning. Each handle is a monitoring view of its own:
 * starting, stopping or resetting one never affects another.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "core/runtime.h"
#include "monitor/monitor.h"
#include "wrappers/gen_hooks.h"

enum { QUANTITIES = 3, TDM_PVARS = TDM_KINDS * QUANTITIES };

static const char *const quantity_names[QUANTITIES] = {"messages", "bytes", "histogram"};
static const char *const kind_descriptions[TDM_KINDS] = {
    "point-to-point messages sent to each peer",
    "point-to-point messages received from each peer",
    "collectives: logical volume per call with each peer (Open MPI's coll monitoring rules)",
    "messages of the collectives Tandem runs itself, to each peer",
    "one-sided puts and accumulates to each target (origin side)",
    "one-sided gets from each target (origin side)",
    "file reads of this rank (its own entry)",
    "file writes of this rank (its own entry)",
    "every byte sent to each peer once: point-to-point, one-sided, and each collective as "
    "Tandem's messages or, where the MPI library ran it, its logical volume",
};

typedef struct handle {
    struct handle *next;
    MPI_T_pvar_session session;
    int count;
    int *kinds, *fields, *peers;
    tdm_monitor_view view;
} handle;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static handle *handles;
static int base = -1; /* index of Tandem's first variable */

/* Fix 'base' on the first call. */
static int first_index(void)
{
    pthread_mutex_lock(&lock);
    if (base < 0) {
        int n = 0;
        if (PMPI_T_pvar_get_num(&n) == MPI_SUCCESS)
            base = n;
    }
    int b = base;
    pthread_mutex_unlock(&lock);
    return b;
}

/* Tandem's variable at 'index' (0..TDM_PVARS-1), or -1 with *native set to
   the MPI's index. */
static int ours(int index, int *native)
{
    int b = first_index();
    *native = index;
    if (b < 0 || index < b)
        return -1;
    if (index < b + TDM_PVARS)
        return index - b;
    *native = index - TDM_PVARS;
    return -1;
}

static handle *find(MPI_T_pvar_handle h)
{
    pthread_mutex_lock(&lock);
    handle *found = handles;
    while (found && (MPI_T_pvar_handle)found != h)
        found = found->next;
    pthread_mutex_unlock(&lock);
    return found;
}

static void copy_string(const char *text, char *buf, int *len)
{
    if (!len)
        return;
    int need = (int)strlen(text) + 1;
    if (buf && *len > 0) {
        int n = need < *len ? need : *len;
        memcpy(buf, text, (size_t)n - 1);
        buf[n - 1] = '\0';
    }
    *len = need;
}

int tdm_hook_T_pvar_get_num(int lang, int *num_pvar)
{
    (void)lang;
    int rc = PMPI_T_pvar_get_num(num_pvar);
    if (rc == MPI_SUCCESS && first_index() >= 0)
        *num_pvar += TDM_PVARS;
    return rc;
}

int tdm_hook_T_pvar_get_info(int lang, int pvar_index, char *name, int *name_len, int *verbosity,
                             int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype,
                             char *desc, int *desc_len, int *bind, int *readonly, int *continuous,
                             int *atomic)
{
    (void)lang;
    int native, var = ours(pvar_index, &native);
    if (var < 0)
        return PMPI_T_pvar_get_info(native, name, name_len, verbosity, var_class, datatype,
                                    enumtype, desc, desc_len, bind, readonly, continuous, atomic);
    int kind = var / QUANTITIES, quantity = var % QUANTITIES;
    char text[256];
    snprintf(text, sizeof text, "tandem_monitor_%s_%s", tdm_monitor_kind_names[kind],
             quantity_names[quantity]);
    copy_string(text, name, name_len);
    snprintf(
        text, sizeof text, "Tandem: %s of %s%s", quantity_names[quantity], kind_descriptions[kind],
        quantity == 2 ? " (66 bins per peer: bin 0 empty, bin k sizes in [2^(k-1), 2^k))" : "");
    copy_string(text, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_USER_BASIC;
    if (var_class)
        *var_class = MPI_T_PVAR_CLASS_COUNTER;
    if (datatype)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_MPI_COMM;
    if (readonly)
        *readonly = 1;
    if (continuous)
        *continuous = 0;
    if (atomic)
        *atomic = 0;
    return MPI_SUCCESS;
}

int tdm_hook_T_pvar_get_index(int lang, const char *name, int var_class, int *pvar_index)
{
    (void)lang;
    int b = first_index();
    if (name && b >= 0 && var_class == MPI_T_PVAR_CLASS_COUNTER) {
        for (int var = 0; var < TDM_PVARS; var++) {
            char text[256];
            snprintf(text, sizeof text, "tandem_monitor_%s_%s",
                     tdm_monitor_kind_names[var / QUANTITIES], quantity_names[var % QUANTITIES]);
            if (strcmp(text, name) == 0) {
                *pvar_index = b + var;
                return MPI_SUCCESS;
            }
        }
    }
    int rc = PMPI_T_pvar_get_index(name, var_class, pvar_index);
    if (rc == MPI_SUCCESS && b >= 0 && *pvar_index >= b)
        *pvar_index += TDM_PVARS;
    return rc;
}

static void release(handle *h)
{
    tdm_monitor_view_free(&h->view);
    free(h->kinds);
    free(h->fields);
    free(h->peers);
    free(h);
}

int tdm_hook_T_pvar_handle_alloc(int lang, MPI_T_pvar_session session, int pvar_index,
                                 void *obj_handle, MPI_T_pvar_handle *out, int *count)
{
    (void)lang;
    int native, var = ours(pvar_index, &native);
    if (var < 0)
        return PMPI_T_pvar_handle_alloc(session, native, obj_handle, out, count);
    if (tdm_monitor_world_size() == 0 || !tdm_active)
        return MPI_T_ERR_NOT_INITIALIZED; /* before MPI_Init, or Tandem in pass-through mode */
    if (!obj_handle)
        return MPI_T_ERR_INVALID_HANDLE;
    MPI_Comm comm = *(MPI_Comm *)obj_handle;
    int size = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return MPI_T_ERR_INVALID_HANDLE;
    int kind = var / QUANTITIES, quantity = var % QUANTITIES;
    int n = quantity == 2 ? size * TDM_BINS : size;
    handle *h = calloc(1, sizeof *h);
    if (h) {
        h->kinds = malloc(sizeof(int) * (size_t)(n + 1));
        h->fields = malloc(sizeof(int) * (size_t)(n + 1));
        h->peers = malloc(sizeof(int) * (size_t)(n + 1));
    }
    if (!h || !h->kinds || !h->fields || !h->peers ||
        tdm_monitor_view_init(&h->view, n, h->kinds, h->fields, h->peers) != MPI_SUCCESS) {
        if (h) {
            free(h->kinds);
            free(h->fields);
            free(h->peers);
        }
        free(h);
        return MPI_T_ERR_MEMORY;
    }
    for (int i = 0; i < n; i++) {
        int rank = quantity == 2 ? i / TDM_BINS : i;
        h->kinds[i] = kind;
        h->fields[i] = quantity == 2 ? 2 + i % TDM_BINS : quantity;
        h->peers[i] = tdm_monitor_world_rank(comm, rank);
    }
    h->session = session;
    h->count = n;
    pthread_mutex_lock(&lock);
    h->next = handles;
    handles = h;
    pthread_mutex_unlock(&lock);
    *out = (MPI_T_pvar_handle)h;
    *count = n;
    return MPI_SUCCESS;
}

/* Unlink and free Tandem's handle 'h', or every handle of 'session' when h
   is NULL. */
static void drop(handle *target, MPI_T_pvar_session session)
{
    pthread_mutex_lock(&lock);
    for (handle **at = &handles; *at;) {
        handle *h = *at;
        if (h == target || (!target && h->session == session)) {
            *at = h->next;
            release(h);
        } else {
            at = &h->next;
        }
    }
    pthread_mutex_unlock(&lock);
}

int tdm_hook_T_pvar_handle_free(int lang, MPI_T_pvar_session session, MPI_T_pvar_handle *out)
{
    (void)lang;
    handle *h = find(*out);
    if (!h)
        return PMPI_T_pvar_handle_free(session, out);
    if (h->session != session)
        return MPI_T_ERR_INVALID_HANDLE;
    drop(h, session);
    *out = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

int tdm_hook_T_pvar_session_free(int lang, MPI_T_pvar_session *session)
{
    (void)lang;
    drop(NULL, *session);
    return PMPI_T_pvar_session_free(session);
}

/* start, stop and reset: one of Tandem's handles, or all of the session's
   with MPI_T_PVAR_ALL_HANDLES (then the MPI's own too). */
static int each(MPI_T_pvar_session session, MPI_T_pvar_handle target,
                void (*action)(tdm_monitor_view *),
                int (*native)(MPI_T_pvar_session, MPI_T_pvar_handle))
{
    if (target != MPI_T_PVAR_ALL_HANDLES) {
        handle *h = find(target);
        if (!h)
            return native(session, target);
        if (h->session != session)
            return MPI_T_ERR_INVALID_HANDLE;
        pthread_mutex_lock(&lock);
        action(&h->view);
        pthread_mutex_unlock(&lock);
        return MPI_SUCCESS;
    }
    pthread_mutex_lock(&lock);
    for (handle *h = handles; h; h = h->next)
        if (h->session == session)
            action(&h->view);
    pthread_mutex_unlock(&lock);
    return native(session, target);
}

int tdm_hook_T_pvar_start(int lang, MPI_T_pvar_session session, MPI_T_pvar_handle h)
{
    (void)lang;
    return each(session, h, tdm_monitor_view_start, PMPI_T_pvar_start);
}

int tdm_hook_T_pvar_stop(int lang, MPI_T_pvar_session session, MPI_T_pvar_handle h)
{
    (void)lang;
    return each(session, h, tdm_monitor_view_stop, PMPI_T_pvar_stop);
}

int tdm_hook_T_pvar_reset(int lang, MPI_T_pvar_session session, MPI_T_pvar_handle h)
{
    (void)lang;
    return each(session, h, tdm_monitor_view_reset, PMPI_T_pvar_reset);
}

static int read_handle(MPI_T_pvar_session session, handle *h, void *buf, int reset)
{
    if (h->session != session)
        return MPI_T_ERR_INVALID_HANDLE;
    uint64_t *values = malloc(sizeof(uint64_t) * ((size_t)h->count + 1));
    if (!values)
        return MPI_T_ERR_MEMORY;
    pthread_mutex_lock(&lock);
    tdm_monitor_view_read(&h->view, values);
    if (reset)
        tdm_monitor_view_reset(&h->view);
    pthread_mutex_unlock(&lock);
    unsigned long long *out = buf;
    for (int i = 0; i < h->count; i++)
        out[i] = values[i];
    free(values);
    return MPI_SUCCESS;
}

int tdm_hook_T_pvar_read(int lang, MPI_T_pvar_session session, MPI_T_pvar_handle h, void *buf)
{
    (void)lang;
    handle *ours_h = find(h);
    return ours_h ? read_handle(session, ours_h, buf, 0) : PMPI_T_pvar_read(session, h, buf);
}

int tdm_hook_T_pvar_readreset(int lang, MPI_T_pvar_session session, MPI_T_pvar_handle h, void *buf)
{
    (void)lang;
    handle *ours_h = find(h);
    return ours_h ? read_handle(session, ours_h, buf, 1) : PMPI_T_pvar_readreset(session, h, buf);
}

int tdm_hook_T_pvar_write(int lang, MPI_T_pvar_session session, MPI_T_pvar_handle h,
                          const void *buf)
{
    (void)lang;
    return find(h) ? MPI_T_ERR_PVAR_NO_WRITE : PMPI_T_pvar_write(session, h, buf);
}
