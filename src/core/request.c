/*
 * The request tracker: an open-addressing hash table keyed by the bits of an
 * MPI_Request (a pointer in Open MPI, an int in MPICH), under one mutex. The
 * table is touched only for operations above the eager limit, for persistent
 * requests and for proxies, so its cost stays off the small-message path. It
 * also maps the generalized request of a proxy to the proxy itself.
 */
#include "core/request.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/progress.h"

enum { SLOT_EMPTY = 0, SLOT_USED, SLOT_DELETED };

typedef struct {
    uint64_t key;
    unsigned char state;
    unsigned char counted;    /* active and above the eager limit */
    unsigned char persistent; /* stays known after completion */
    unsigned char large;      /* persistent: above the eager limit when started */
    void *proxy;              /* the proxy behind a generalized request, or NULL */
} slot;

atomic_long tdm_request_proxies;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static slot *slots;
static size_t capacity; /* a power of two, or 0 */
static size_t used;     /* USED + DELETED slots */
static size_t live;     /* USED slots */

static uint64_t key_of(MPI_Request request)
{
    uint64_t key = 0;
    memcpy(&key, &request, sizeof request < sizeof key ? sizeof request : sizeof key);
    return key;
}

static size_t hash(uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (size_t)key;
}

/* The slot of 'key', or NULL. Caller holds the lock. */
static slot *find(uint64_t key)
{
    if (capacity == 0)
        return NULL;
    for (size_t i = hash(key) & (capacity - 1);; i = (i + 1) & (capacity - 1)) {
        if (slots[i].state == SLOT_EMPTY)
            return NULL;
        if (slots[i].state == SLOT_USED && slots[i].key == key)
            return &slots[i];
    }
}

static int grow(void)
{
    size_t new_capacity = capacity ? capacity * 2 : 64;
    if (live * 4 < capacity) /* mostly tombstones: rehash at the same size */
        new_capacity = capacity;
    slot *fresh = calloc(new_capacity, sizeof(slot));
    if (!fresh)
        return -1;
    for (size_t i = 0; i < capacity; i++) {
        if (slots[i].state != SLOT_USED)
            continue;
        size_t j = hash(slots[i].key) & (new_capacity - 1);
        while (fresh[j].state == SLOT_USED)
            j = (j + 1) & (new_capacity - 1);
        fresh[j] = slots[i];
    }
    free(slots);
    slots = fresh;
    capacity = new_capacity;
    used = live;
    return 0;
}

/* The slot of 'key', inserted if missing; NULL only when out of memory (the
   request is then simply not tracked). Caller holds the lock. */
static slot *find_or_insert(uint64_t key)
{
    slot *s = find(key);
    if (s)
        return s;
    if ((used + 1) * 2 > capacity && grow() != 0)
        return NULL;
    size_t i = hash(key) & (capacity - 1);
    while (slots[i].state == SLOT_USED)
        i = (i + 1) & (capacity - 1);
    if (slots[i].state == SLOT_EMPTY)
        used++;
    live++;
    slots[i] = (slot){key, SLOT_USED, 0, 0, 0, NULL};
    return &slots[i];
}

static void remove_slot(slot *s)
{
    if (s->proxy)
        atomic_fetch_sub_explicit(&tdm_request_proxies, 1, memory_order_relaxed);
    s->proxy = NULL;
    s->state = SLOT_DELETED;
    live--;
}

static atomic_long counted_total;

long tdm_request_counted_total(void)
{
    return atomic_load_explicit(&counted_total, memory_order_relaxed);
}

static void count(slot *s)
{
    if (!s->counted) {
        s->counted = 1;
        atomic_fetch_add_explicit(&counted_total, 1, memory_order_relaxed);
        tdm_progress_work_begin();
    }
}

static void uncount(slot *s)
{
    if (s->counted) {
        s->counted = 0;
        tdm_progress_work_end();
    }
}

void tdm_request_started(MPI_Request request, long long bytes)
{
    if (bytes <= tdm_eager_limit || request == MPI_REQUEST_NULL)
        return;
    pthread_mutex_lock(&lock);
    slot *s = find_or_insert(key_of(request));
    if (s)
        count(s);
    pthread_mutex_unlock(&lock);
}

void tdm_request_persistent(MPI_Request request, long long bytes)
{
    if (request == MPI_REQUEST_NULL)
        return;
    pthread_mutex_lock(&lock);
    slot *s = find_or_insert(key_of(request));
    if (s) {
        s->persistent = 1;
        s->large = bytes > tdm_eager_limit;
    }
    pthread_mutex_unlock(&lock);
}

void tdm_request_start_persistent(MPI_Request request)
{
    pthread_mutex_lock(&lock);
    slot *s = find(key_of(request));
    if (s && s->persistent && s->large)
        count(s);
    pthread_mutex_unlock(&lock);
}

void tdm_request_completed(MPI_Request request)
{
    pthread_mutex_lock(&lock);
    slot *s = find(key_of(request));
    if (s) {
        uncount(s);
        if (!s->persistent)
            remove_slot(s);
    }
    pthread_mutex_unlock(&lock);
}

void tdm_request_freed(MPI_Request request)
{
    pthread_mutex_lock(&lock);
    slot *s = find(key_of(request));
    if (s) {
        uncount(s);
        remove_slot(s);
    }
    pthread_mutex_unlock(&lock);
}

int tdm_request_add_proxy(MPI_Request handle, void *proxy)
{
    pthread_mutex_lock(&lock);
    slot *s = find_or_insert(key_of(handle));
    if (s && !s->proxy) {
        s->proxy = proxy;
        atomic_fetch_add_explicit(&tdm_request_proxies, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&lock);
    return s ? 0 : -1;
}

void *tdm_request_proxy_of(MPI_Request handle)
{
    void *proxy = NULL;
    pthread_mutex_lock(&lock);
    slot *s = find(key_of(handle));
    if (s)
        proxy = s->proxy;
    pthread_mutex_unlock(&lock);
    return proxy;
}

size_t tdm_request_known(void)
{
    pthread_mutex_lock(&lock);
    size_t n = live;
    pthread_mutex_unlock(&lock);
    return n;
}

void tdm_request_reset(void)
{
    pthread_mutex_lock(&lock);
    free(slots);
    slots = NULL;
    capacity = used = live = 0;
    atomic_store(&tdm_request_proxies, 0);
    pthread_mutex_unlock(&lock);
}
