/*
 * The holds of core/hold.h: a small table of the held objects, each with its
 * count of holds and whether the application freed it meanwhile, and the
 * MPI_Type_free and MPI_Op_free hooks that consult it. The table holds the
 * few distinct objects of the collectives in flight; a linear search is the
 * right size for it.
 */
#include "core/hold.h"

#include <pthread.h>
#include <stdlib.h>

#include "wrappers/gen_hooks.h"

typedef enum { HELD_TYPE, HELD_OP } held_kind;

typedef struct {
    held_kind kind;
    MPI_Datatype type; /* HELD_TYPE */
    MPI_Op op;         /* HELD_OP */
    int holds;
    int freed; /* the application freed it: the last release frees it */
} held;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static held *table; /* under lock */
static int used, capacity;

static int same(const held *h, held_kind kind, MPI_Datatype type, MPI_Op op)
{
    return h->kind == kind && (kind == HELD_TYPE ? h->type == type : h->op == op);
}

/* The entry of an object, or NULL. Under lock. */
static held *find(held_kind kind, MPI_Datatype type, MPI_Op op)
{
    for (int i = 0; i < used; i++)
        if (same(&table[i], kind, type, op))
            return &table[i];
    return NULL;
}

static int hold(held_kind kind, MPI_Datatype type, MPI_Op op)
{
    pthread_mutex_lock(&lock);
    held *h = find(kind, type, op);
    if (!h && used == capacity) {
        int more = capacity ? 2 * capacity : 16;
        held *grown = realloc(table, sizeof *table * (size_t)more);
        if (!grown) {
            pthread_mutex_unlock(&lock);
            return -1;
        }
        table = grown;
        capacity = more;
    }
    if (!h) {
        h = &table[used++];
        *h = (held){.kind = kind, .type = type, .op = op};
    }
    h->holds++;
    pthread_mutex_unlock(&lock);
    return 1;
}

static void release(held_kind kind, MPI_Datatype type, MPI_Op op)
{
    int free_it = 0;
    pthread_mutex_lock(&lock);
    held *h = find(kind, type, op);
    if (h && --h->holds == 0) {
        free_it = h->freed;
        *h = table[--used];
    }
    pthread_mutex_unlock(&lock);
    if (free_it && kind == HELD_TYPE)
        PMPI_Type_free(&type);
    else if (free_it)
        PMPI_Op_free(&op);
}

/* Whether the application freed a held object: then it is marked so. */
static int defer_free(held_kind kind, MPI_Datatype type, MPI_Op op)
{
    pthread_mutex_lock(&lock);
    held *h = find(kind, type, op);
    if (h)
        h->freed = 1;
    pthread_mutex_unlock(&lock);
    return h != NULL;
}

/* The predefined datatypes a thread met last: a collective's type is one of
   them, mostly, and asking the MPI library costs a call (a predefined
   handle never becomes another type's, so the memory never goes stale). */
enum { NAMED_SEEN = 4 };
static _Thread_local MPI_Datatype named_seen[NAMED_SEEN];
static _Thread_local unsigned named_next;

int tdm_hold_type(MPI_Datatype type)
{
    int ints, addresses, types, combiner;
    if (type == MPI_DATATYPE_NULL || type == MPI_BYTE)
        return 0;
    for (int i = 0; i < NAMED_SEEN; i++)
        if (named_seen[i] == type)
            return 0;
    if (PMPI_Type_get_envelope(type, &ints, &addresses, &types, &combiner) != MPI_SUCCESS)
        return 0; /* not a datatype: the MPI library reports it where it is used */
    if (combiner == MPI_COMBINER_NAMED) {
        named_seen[named_next++ % NAMED_SEEN] = type;
        return 0;
    }
    return hold(HELD_TYPE, type, MPI_OP_NULL);
}

/* The operations MPI defines (none can be freed). */
static int predefined_op(MPI_Op op)
{
    static const MPI_Op predefined[] = {
        MPI_OP_NULL, MPI_MAX,  MPI_MIN,  MPI_SUM,    MPI_PROD,   MPI_LAND,    MPI_BAND, MPI_LOR,
        MPI_BOR,     MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP};
    for (size_t i = 0; i < sizeof predefined / sizeof predefined[0]; i++)
        if (op == predefined[i])
            return 1;
    return 0;
}

int tdm_hold_op(MPI_Op op)
{
    return predefined_op(op) ? 0 : hold(HELD_OP, MPI_DATATYPE_NULL, op);
}

void tdm_release_type(MPI_Datatype type)
{
    release(HELD_TYPE, type, MPI_OP_NULL);
}

void tdm_release_op(MPI_Op op)
{
    release(HELD_OP, MPI_DATATYPE_NULL, op);
}

/* The application's frees. A held object's stays pending; the handle is
   the application's no more either way. */
int tdm_hook_Type_free(int lang, MPI_Datatype *datatype)
{
    (void)lang;
    if (datatype && *datatype != MPI_DATATYPE_NULL &&
        defer_free(HELD_TYPE, *datatype, MPI_OP_NULL)) {
        *datatype = MPI_DATATYPE_NULL;
        return MPI_SUCCESS;
    }
    return PMPI_Type_free(datatype);
}

int tdm_hook_Op_free(int lang, MPI_Op *op)
{
    (void)lang;
    if (op && *op != MPI_OP_NULL && defer_free(HELD_OP, MPI_DATATYPE_NULL, *op)) {
        *op = MPI_OP_NULL;
        return MPI_SUCCESS;
    }
    return PMPI_Op_free(op);
}
