/*
 * The counters, the views, the translation of ranks to MPI_COMM_WORLD and
 * the table of point-to-point requests whose traffic is recorded later.
 *
 * Counters: one block per recording thread, kind-major then peer, each peer
 * holding TDM_FIELDS 64-bit counters. Only the owning thread writes its block
 * (relaxed load + store, no lock, no atomic read-modify-write); readers sum
 * every block under 'blocks_lock'. Blocks live until the end of the run, so
 * what a thread counted survives its exit.
 *
 * Communicators and windows carry their translation table (rank -> world
 * rank) as an MPI attribute, built on first use. A communicator is listed
 * for the per-communicator lines of the dump (and numbered, when it has no
 * name) at its first collective call of the program, MPI_COMM_WORLD at
 * MPI_Init: the communicators Tandem makes for itself (the duplicates its
 * schedules post on) translate ranks but are never listed. A listed record
 * is kept after MPI_Comm_free; the others go with their communicator.
 */
#include "monitor/monitor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "core/log.h"
#include "core/runtime.h"
#include "impl/impl.h"

const char *const tdm_monitor_kind_names[TDM_KINDS] = {
    "p2p_send", "p2p_recv", "coll",     "coll_internal", "osc_put",
    "osc_get",  "io_read",  "io_write", "all",
};

int tdm_monitor_on_flag;
__thread int tdm_monitor_coll_by_tandem __attribute__((tls_model("initial-exec")));

static int world_size;

/* ------------------------------------------------------------- counters */

/* A block holds one slot per public kind, [slot][peer][field]: every kind
   recorded in its own, and TDM_COLL_NATIVE in the slot of TANDEM_MONITOR_ALL,
   which is never recorded (a reader sums its parts). */
typedef struct block {
    struct block *next;
    uint64_t counters[]; /* [slot][peer][field] */
} block;

static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static block *blocks;
static __thread block *my_block __attribute__((tls_model("initial-exec")));

static size_t counters_per_block(void)
{
    return (size_t)TDM_KINDS * (size_t)world_size * TDM_FIELDS;
}

static size_t slot_of_kind(int kind)
{
    return kind == TDM_COLL_NATIVE ? TANDEM_MONITOR_ALL : (size_t)kind;
}

static block *new_block(void)
{
    block *b = calloc(1, sizeof(block) + sizeof(uint64_t) * counters_per_block());
    if (!b)
        return NULL;
    pthread_mutex_lock(&blocks_lock);
    b->next = blocks;
    blocks = b;
    pthread_mutex_unlock(&blocks_lock);
    return b;
}

static inline void bump(uint64_t *counter, uint64_t by)
{
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + by, __ATOMIC_RELAXED);
}

void tdm_monitor_record(int kind, int peer, uint64_t bytes)
{
    if (peer < 0 || peer >= world_size)
        return;
    block *b = my_block;
    if (TDM_UNLIKELY(!b) && !(b = my_block = new_block()))
        return;
    uint64_t *c =
        b->counters + (slot_of_kind(kind) * (size_t)world_size + (size_t)peer) * TDM_FIELDS;
    bump(&c[0], 1);
    bump(&c[1], bytes);
    bump(&c[2 + tdm_monitor_bin(bytes)], 1);
}

/* The raw total of counter (kind, peer, field) over every block, kind one
   of TDM_VIEW_KINDS; TANDEM_MONITOR_ALL's is the sum of its parts'. Under
   blocks_lock. */
static uint64_t raw_total(int kind, int peer, int field)
{
    if (kind == TANDEM_MONITOR_ALL) {
        static const int parts[] = {TANDEM_MONITOR_P2P_SEND, TANDEM_MONITOR_OSC_PUT,
                                    TANDEM_MONITOR_OSC_GET, TANDEM_MONITOR_COLL_INTERNAL,
                                    TDM_COLL_NATIVE};
        uint64_t sum = 0;
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
            sum += raw_total(parts[i], peer, field);
        return sum;
    }
    size_t at =
        (slot_of_kind(kind) * (size_t)world_size + (size_t)peer) * TDM_FIELDS + (size_t)field;
    uint64_t sum = 0;
    for (block *b = blocks; b; b = b->next)
        sum += __atomic_load_n(&b->counters[at], __ATOMIC_RELAXED);
    return sum;
}

/* The counters of a view of everything: TDM_VIEW_KINDS x peers x fields. */
static size_t counters_per_view(void)
{
    return (size_t)TDM_VIEW_KINDS * (size_t)world_size * TDM_FIELDS;
}

int tdm_monitor_world_size(void)
{
    return world_size;
}

/* ---------------------------------------------------------------- views */

static pthread_mutex_t views_lock = PTHREAD_MUTEX_INITIALIZER;
static int views_running;

int tdm_monitor_view_init(tdm_monitor_view *v, int n, const int *kinds, const int *fields,
                          const int *peers)
{
    memset(v, 0, sizeof *v);
    v->n = n;
    v->kinds = kinds;
    v->fields = fields;
    v->peers = peers;
    v->start = calloc((size_t)n + 1, sizeof(uint64_t));
    v->accumulated = calloc((size_t)n + 1, sizeof(uint64_t));
    if (!v->start || !v->accumulated) {
        tdm_monitor_view_free(v);
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

void tdm_monitor_view_free(tdm_monitor_view *v)
{
    tdm_monitor_view_stop(v);
    free(v->start);
    free(v->accumulated);
    v->start = v->accumulated = NULL;
}

/* out[i] = raw total of the view's counter i. */
static void sample(const tdm_monitor_view *v, uint64_t *out)
{
    pthread_mutex_lock(&blocks_lock);
    for (int i = 0; i < v->n; i++) {
        if (v->kinds) { /* a peer outside MPI_COMM_WORLD (-1) never has traffic */
            out[i] = v->peers[i] < 0 ? 0 : raw_total(v->kinds[i], v->peers[i], v->fields[i]);
        } else { /* everything, [kind][peer][field] */
            int field = i % TDM_FIELDS, peer = (i / TDM_FIELDS) % world_size;
            out[i] = raw_total(i / (TDM_FIELDS * world_size), peer, field);
        }
    }
    pthread_mutex_unlock(&blocks_lock);
}

void tdm_monitor_view_start(tdm_monitor_view *v)
{
    if (v->running || !v->start)
        return;
    pthread_mutex_lock(&views_lock);
    if (views_running++ == 0)
        __atomic_store_n(&tdm_monitor_on_flag, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&views_lock);
    sample(v, v->start);
    v->running = 1;
}

void tdm_monitor_view_stop(tdm_monitor_view *v)
{
    if (!v->running)
        return;
    uint64_t *now = malloc(sizeof(uint64_t) * ((size_t)v->n + 1));
    if (now) {
        sample(v, now);
        for (int i = 0; i < v->n; i++)
            v->accumulated[i] += now[i] - v->start[i];
        free(now);
    }
    v->running = 0;
    pthread_mutex_lock(&views_lock);
    if (--views_running == 0)
        __atomic_store_n(&tdm_monitor_on_flag, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&views_lock);
}

void tdm_monitor_view_reset(tdm_monitor_view *v)
{
    memset(v->accumulated, 0, sizeof(uint64_t) * (size_t)v->n);
    if (v->running)
        sample(v, v->start);
}

void tdm_monitor_view_read(tdm_monitor_view *v, uint64_t *out)
{
    if (v->running) {
        sample(v, out);
        for (int i = 0; i < v->n; i++)
            out[i] = out[i] - v->start[i] + v->accumulated[i];
    } else {
        memcpy(out, v->accumulated, sizeof(uint64_t) * (size_t)v->n);
    }
}

/* -------------------------------------------- communicators and windows */

typedef struct comm_info {
    struct comm_info *next;
    MPI_Comm comm;
    int listed;                 /* in 'comms': it had a collective of the program */
    int freed;                  /* listed, then freed: the name is the last it had */
    int id;                     /* listed: order of listing (MPI_COMM_WORLD 0) */
    int peers, *peer_world;     /* p2p peers: the remote group of an inter-communicator */
    int members, *member_world; /* the local group */
    char name[MPI_MAX_OBJECT_NAME];
    uint64_t operations[TDM_SHAPES], bytes[TDM_SHAPES];
} comm_info;

typedef struct {
    int size, *world;
} win_info;

static pthread_mutex_t objects_lock = PTHREAD_MUTEX_INITIALIZER;
static comm_info *comms, **comms_tail = &comms; /* the listed ones, in order */
static int comm_count;
static int comm_keyval = MPI_KEYVAL_INVALID, win_keyval = MPI_KEYVAL_INVALID;
static int shutting_down;

/* World ranks of every rank of 'group'. */
static int *world_ranks(MPI_Group group, int size)
{
    MPI_Group world;
    int *ranks = malloc(sizeof(int) * (size_t)(size > 0 ? size : 1));
    int *out = malloc(sizeof(int) * (size_t)(size > 0 ? size : 1));
    if (!ranks || !out) {
        free(ranks);
        free(out);
        return NULL;
    }
    for (int i = 0; i < size; i++)
        ranks[i] = i;
    PMPI_Comm_group(tdm_world, &world);
    PMPI_Group_translate_ranks(group, size, ranks, world, out);
    PMPI_Group_free(&world);
    for (int i = 0; i < size; i++)
        if (out[i] == MPI_UNDEFINED)
            out[i] = -1;
    free(ranks);
    return out;
}

static void refresh_name(comm_info *info)
{
    int len = 0;
    info->name[0] = '\0';
    PMPI_Comm_get_name(info->comm, info->name, &len);
    if (info->name[0] == '\0')
        snprintf(info->name, sizeof info->name, "MPI COMMUNICATOR %d", info->id);
}

static void free_comm_info(comm_info *info)
{
    if (info->peer_world != info->member_world)
        free(info->peer_world);
    free(info->member_world);
    free(info);
}

/* A listed record keeps the name the communicator had (the dump comes
   later); one that was never listed goes with it. */
static int comm_deleted(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    comm_info *info = value;
    pthread_mutex_lock(&objects_lock);
    if (!info->listed) {
        free_comm_info(info);
    } else if (!shutting_down) {
        refresh_name(info);
        info->freed = 1;
    }
    pthread_mutex_unlock(&objects_lock);
    return MPI_SUCCESS;
}

static int win_deleted(MPI_Win win, int keyval, void *value, void *extra)
{
    (void)win;
    (void)keyval;
    (void)extra;
    win_info *info = value;
    free(info->world);
    free(info);
    return MPI_SUCCESS;
}

static comm_info *new_comm_info(MPI_Comm comm)
{
    comm_info *info = calloc(1, sizeof *info);
    if (!info)
        return NULL;
    info->comm = comm;
    int inter = 0;
    MPI_Group group;
    PMPI_Comm_test_inter(comm, &inter);
    PMPI_Comm_size(comm, &info->members);
    PMPI_Comm_group(comm, &group);
    info->member_world = world_ranks(group, info->members);
    PMPI_Group_free(&group);
    if (inter) {
        PMPI_Comm_remote_size(comm, &info->peers);
        PMPI_Comm_remote_group(comm, &group);
        info->peer_world = world_ranks(group, info->peers);
        PMPI_Group_free(&group);
    } else {
        info->peers = info->members;
        info->peer_world = info->member_world;
    }
    if (!info->member_world || !info->peer_world) {
        free_comm_info(info);
        return NULL;
    }
    return info;
}

/* The record of 'comm', made on first use. NULL without memory. */
static comm_info *comm_info_of(MPI_Comm comm)
{
    comm_info *info = NULL;
    int flag = 0;
    if (comm_keyval == MPI_KEYVAL_INVALID)
        return NULL;
    if (PMPI_Comm_get_attr(comm, comm_keyval, &info, &flag) == MPI_SUCCESS && flag)
        return info;
    pthread_mutex_lock(&objects_lock);
    if (PMPI_Comm_get_attr(comm, comm_keyval, &info, &flag) != MPI_SUCCESS || !flag) {
        info = new_comm_info(comm);
        if (info)
            PMPI_Comm_set_attr(comm, comm_keyval, info);
    }
    pthread_mutex_unlock(&objects_lock);
    return info;
}

/* The record of 'comm', listed for the dump if it was not yet: the program
   called a collective on it (or it is MPI_COMM_WORLD). */
static comm_info *listed_comm_info_of(MPI_Comm comm)
{
    comm_info *info = comm_info_of(comm);
    if (!info || __atomic_load_n(&info->listed, __ATOMIC_ACQUIRE))
        return info;
    pthread_mutex_lock(&objects_lock);
    if (!info->listed) {
        info->id = comm_count++;
        refresh_name(info);
        *comms_tail = info;
        comms_tail = &info->next;
        __atomic_store_n(&info->listed, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&objects_lock);
    return info;
}

void tdm_monitor_list_comm(MPI_Comm comm)
{
    listed_comm_info_of(comm);
}

int tdm_monitor_world_rank(MPI_Comm comm, int rank)
{
    if (rank < 0) /* MPI_PROC_NULL, MPI_ANY_SOURCE, MPI_ROOT */
        return -1;
    if (comm == tdm_world)
        return rank;
    if (comm == MPI_COMM_SELF)
        return rank == 0 ? tdm_world_rank : -1;
    comm_info *info = comm_info_of(comm);
    return info && rank < info->peers ? info->peer_world[rank] : -1;
}

void tdm_monitor_send(MPI_Count count, MPI_Datatype type, int dest, MPI_Comm comm)
{
    int peer = tdm_monitor_world_rank(comm, dest);
    if (peer >= 0)
        tdm_monitor_record(TANDEM_MONITOR_P2P_SEND, peer, tdm_monitor_bytes(count, type));
}

void tdm_monitor_received(const MPI_Status *status, MPI_Comm comm)
{
    if (status->MPI_SOURCE < 0)
        return; /* MPI_PROC_NULL, or the empty status of an inactive request */
    long long bytes = tdm_impl_status_bytes(status);
    int peer = tdm_monitor_world_rank(comm, status->MPI_SOURCE);
    if (bytes >= 0 && peer >= 0)
        tdm_monitor_record(TANDEM_MONITOR_P2P_RECV, peer, (uint64_t)bytes);
}

void tdm_monitor_coll(MPI_Comm comm, int shape, uint64_t total)
{
    comm_info *info = listed_comm_info_of(comm);
    if (!info)
        return;
    __atomic_add_fetch(&info->operations[shape], 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&info->bytes[shape], total, __ATOMIC_RELAXED);
}

void tdm_monitor_coll_peer(MPI_Comm comm, int rank, uint64_t bytes)
{
    int peer = tdm_monitor_world_rank(comm, rank);
    if (peer < 0)
        return;
    tdm_monitor_record(TANDEM_MONITOR_COLL, peer, bytes);
    if (!tdm_monitor_coll_by_tandem) /* else its messages are coll_internal's */
        tdm_monitor_record(TDM_COLL_NATIVE, peer, bytes);
}

void tdm_monitor_osc(int kind, MPI_Win win, int target, uint64_t bytes)
{
    win_info *info = NULL;
    int flag = 0;
    if (target < 0 || win_keyval == MPI_KEYVAL_INVALID)
        return;
    if (PMPI_Win_get_attr(win, win_keyval, &info, &flag) != MPI_SUCCESS || !flag) {
        MPI_Group group;
        pthread_mutex_lock(&objects_lock);
        if (PMPI_Win_get_attr(win, win_keyval, &info, &flag) != MPI_SUCCESS || !flag) {
            info = calloc(1, sizeof *info);
            if (info && PMPI_Win_get_group(win, &group) == MPI_SUCCESS) {
                PMPI_Group_size(group, &info->size);
                info->world = world_ranks(group, info->size);
                PMPI_Group_free(&group);
                PMPI_Win_set_attr(win, win_keyval, info);
            } else {
                free(info);
                info = NULL;
            }
        }
        pthread_mutex_unlock(&objects_lock);
    }
    if (info && info->world && target < info->size)
        tdm_monitor_record(kind, info->world[target], bytes);
}

void tdm_monitor_each_comm(void (*fn)(const tdm_monitor_comm_summary *, void *), void *arg)
{
    pthread_mutex_lock(&objects_lock);
    for (comm_info *info = comms; info; info = info->next) {
        if (!info->freed)
            refresh_name(info);
        tdm_monitor_comm_summary s = {info->name, info->members, info->member_world, {0}, {0}};
        for (int k = 0; k < TDM_SHAPES; k++) {
            s.operations[k] = __atomic_load_n(&info->operations[k], __ATOMIC_RELAXED);
            s.bytes[k] = __atomic_load_n(&info->bytes[k], __ATOMIC_RELAXED);
        }
        fn(&s, arg);
    }
    pthread_mutex_unlock(&objects_lock);
}

/* ------------------------------------------------- point-to-point requests */

/* A request whose traffic is recorded later: a receive when it completes, a
   persistent send each time it starts; or a message a matched probe
   returned, whose receive is recorded with its communicator. Chained hash
   on the handle's bits (a live message and a live request never share them:
   MPICH's messages are requests, Open MPI's handles are pointers). */
typedef struct entry {
    struct entry *next;
    uint64_t key;
    int receive, persistent, message;
    MPI_Comm comm;  /* receive, message: translates the status's source */
    int peer;       /* send: world rank of the destination */
    uint64_t bytes; /* send */
} entry;

enum { BUCKETS = 1024 };
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static entry *table[BUCKETS];
static int table_entries, table_receives;

static uint64_t key_of_handle(const void *handle, size_t size)
{
    uint64_t key = 0;
    memcpy(&key, handle, size < sizeof key ? size : sizeof key);
    return key;
}

static uint64_t key_of(MPI_Request request)
{
    return key_of_handle(&request, sizeof request);
}

static entry **slot_of(uint64_t key)
{
    entry **at = &table[(key ^ (key >> 17) ^ (key >> 31)) % BUCKETS];
    while (*at && (*at)->key != key)
        at = &(*at)->next;
    return at;
}

static entry *spare; /* entries kept for reuse (no malloc per message); under table_lock */

/* Remove the entry at 'at'. Under table_lock. */
static void unlink_entry(entry **at)
{
    entry *e = *at;
    *at = e->next;
    __atomic_store_n(&table_entries, table_entries - 1, __ATOMIC_RELAXED);
    if (e->receive)
        __atomic_store_n(&table_receives, table_receives - 1, __ATOMIC_RELAXED);
    e->next = spare;
    spare = e;
}

static void remember(uint64_t key, const entry *proto)
{
    pthread_mutex_lock(&table_lock);
    entry *e = spare;
    if (e)
        spare = e->next;
    else if (!(e = malloc(sizeof *e)))
        goto fn_exit;
    *e = *proto;
    e->key = key;
    entry **at = slot_of(key);
    if (*at) /* a handle the MPI reused after a completion Tandem did not see */
        unlink_entry(at);
    e->next = NULL;
    *at = e;
    __atomic_store_n(&table_entries, table_entries + 1, __ATOMIC_RELAXED);
    if (e->receive)
        __atomic_store_n(&table_receives, table_receives + 1, __ATOMIC_RELAXED);
fn_exit:
    pthread_mutex_unlock(&table_lock);
}

int tdm_monitor_receives_pending(void)
{
    return __atomic_load_n(&table_receives, __ATOMIC_RELAXED);
}

void tdm_monitor_posted_recv(MPI_Request request, MPI_Comm comm, int persistent)
{
    entry e = {.receive = 1, .persistent = persistent, .comm = comm};
    remember(key_of(request), &e);
}

void tdm_monitor_posted_send(MPI_Request request, MPI_Count count, MPI_Datatype type, int dest,
                             MPI_Comm comm)
{
    entry e = {.persistent = 1,
               .peer = tdm_monitor_world_rank(comm, dest),
               .bytes = tdm_monitor_bytes(count, type)};
    remember(key_of(request), &e);
}

static int table_empty(void)
{
    return __atomic_load_n(&table_entries, __ATOMIC_RELAXED) == 0;
}

void tdm_monitor_matched(MPI_Message message, MPI_Comm comm)
{
    if (message == MPI_MESSAGE_NULL || message == MPI_MESSAGE_NO_PROC)
        return; /* nothing to receive, or nothing from anyone */
    entry e = {.message = 1, .comm = comm};
    remember(key_of_handle(&message, sizeof message), &e);
}

int tdm_monitor_take_message(MPI_Message message, MPI_Comm *comm)
{
    if (table_empty() || message == MPI_MESSAGE_NULL || message == MPI_MESSAGE_NO_PROC)
        return 0;
    int found = 0;
    pthread_mutex_lock(&table_lock);
    entry **at = slot_of(key_of_handle(&message, sizeof message));
    if (*at && (*at)->message) {
        *comm = (*at)->comm;
        unlink_entry(at);
        found = 1;
    }
    pthread_mutex_unlock(&table_lock);
    return found;
}

void tdm_monitor_started(MPI_Request request)
{
    if (table_empty())
        return;
    int peer = -1;
    uint64_t bytes = 0;
    pthread_mutex_lock(&table_lock);
    if (table_entries > 0) {
        entry *e = *slot_of(key_of(request));
        if (e && !e->receive && !e->message) {
            peer = e->peer;
            bytes = e->bytes;
        }
    }
    pthread_mutex_unlock(&table_lock);
    if (peer >= 0)
        tdm_monitor_record(TANDEM_MONITOR_P2P_SEND, peer, bytes);
}

void tdm_monitor_freed(MPI_Request request)
{
    if (table_empty())
        return;
    pthread_mutex_lock(&table_lock);
    if (table_entries > 0) {
        entry **at = slot_of(key_of(request));
        if (*at)
            unlink_entry(at);
    }
    pthread_mutex_unlock(&table_lock);
}

int tdm_monitor_claim(int n, const MPI_Request *before, void **claimed)
{
    int found = 0;
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < n; i++) {
        claimed[i] = NULL;
        if (before[i] == MPI_REQUEST_NULL || table_receives == 0)
            continue;
        entry **at = slot_of(key_of(before[i]));
        if (!*at || !(*at)->receive)
            continue;
        entry *e = *at;
        *at = e->next;
        e->next = NULL;
        __atomic_store_n(&table_entries, table_entries - 1, __ATOMIC_RELAXED);
        __atomic_store_n(&table_receives, table_receives - 1, __ATOMIC_RELAXED);
        claimed[i] = e;
        found++;
    }
    pthread_mutex_unlock(&table_lock);
    return found;
}

/* Under table_lock: remember a claimed entry again under its own key. */
static void reinsert(entry *e)
{
    entry **at = slot_of(e->key);
    if (*at) /* cannot be: the handle stayed this request's */
        unlink_entry(at);
    e->next = NULL;
    *at = e;
    __atomic_store_n(&table_entries, table_entries + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&table_receives, table_receives + 1, __ATOMIC_RELAXED);
}

void tdm_monitor_settle(int n, void **claimed, const int *indices, int ndone,
                        const MPI_Status *statuses, int by_index, int errors)
{
    for (int k = 0; k < ndone; k++) {
        int i = indices ? indices[k] : k;
        if (i < 0 || i >= n || !claimed[i])
            continue;
        entry *e = claimed[i];
        const MPI_Status *st = &statuses[by_index ? i : k];
        int error = errors ? st->MPI_ERROR : MPI_SUCCESS;
        if (error == MPI_ERR_PENDING)
            continue; /* not completed: remembered again below */
        if (error == MPI_SUCCESS)
            tdm_monitor_received(st, e->comm);
        if (e->persistent)
            continue; /* it stays: remembered again below */
        pthread_mutex_lock(&table_lock);
        e->next = spare;
        spare = e;
        pthread_mutex_unlock(&table_lock);
        claimed[i] = NULL;
    }
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < n; i++)
        if (claimed[i]) {
            reinsert(claimed[i]);
            claimed[i] = NULL;
        }
    pthread_mutex_unlock(&table_lock);
}

static void table_clear(void)
{
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < BUCKETS; i++)
        while (table[i])
            unlink_entry(&table[i]);
    while (spare) {
        entry *e = spare;
        spare = e->next;
        free(e);
    }
    pthread_mutex_unlock(&table_lock);
}

/* ------------------------------------------------ the program's own view */

static tdm_monitor_view program_view;
static int monitor_ready;

static int api_ready(void)
{
    return monitor_ready && tdm_active;
}

TDM_EXPORT int tandem_monitor_start(void)
{
    if (!api_ready())
        return MPI_ERR_OTHER;
    tdm_monitor_view_start(&program_view);
    return MPI_SUCCESS;
}

TDM_EXPORT int tandem_monitor_stop(void)
{
    if (!api_ready())
        return MPI_ERR_OTHER;
    tdm_monitor_view_stop(&program_view);
    return MPI_SUCCESS;
}

TDM_EXPORT int tandem_monitor_reset(void)
{
    if (!api_ready())
        return MPI_ERR_OTHER;
    tdm_monitor_view_reset(&program_view);
    return MPI_SUCCESS;
}

TDM_EXPORT int tandem_monitor_read(int kind, unsigned long long *messages,
                                   unsigned long long *bytes, unsigned long long *histogram)
{
    if (!api_ready())
        return MPI_ERR_OTHER;
    if (kind < 0 || kind >= TDM_KINDS)
        return MPI_ERR_ARG;
    uint64_t *all = malloc(sizeof(uint64_t) * ((size_t)program_view.n + 1));
    if (!all)
        return MPI_ERR_NO_MEM;
    tdm_monitor_view_read(&program_view, all);
    for (int peer = 0; peer < world_size; peer++) {
        const uint64_t *c = all + ((size_t)kind * (size_t)world_size + (size_t)peer) * TDM_FIELDS;
        if (messages)
            messages[peer] = c[0];
        if (bytes)
            bytes[peer] = c[1];
        for (int bin = 0; histogram && bin < TDM_BINS; bin++)
            histogram[(size_t)peer * TDM_BINS + (size_t)bin] = c[2 + bin];
    }
    free(all);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------- start, end */

int tdm_monitor_init(void)
{
    PMPI_Comm_size(tdm_world, &world_size);
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_deleted, &comm_keyval, NULL);
    PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_deleted, &win_keyval, NULL);
    int n = (int)counters_per_view();
    if (tdm_monitor_view_init(&program_view, n, NULL, NULL, NULL) != MPI_SUCCESS)
        return -1;
    monitor_ready = 1;
    return 0;
}

void tdm_monitor_finalize(void)
{
    if (!monitor_ready)
        return;
    tdm_monitor_view_free(&program_view);
    monitor_ready = 0;
    shutting_down = 1;
    table_clear();
}
