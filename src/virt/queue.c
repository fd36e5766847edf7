/*
 * Mailboxes, requests and the copies between ranks of one process.
 *
 * Lock order: a rank's mailbox lock alone; no code holds two. A request is
 * completed by filling its status, then setting 'done' (release), then
 * waking its owner; the owner reads nothing of it before seeing 'done'.
 */
#include "virt/queue.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct tdm_virt_message {
    int context, source, tag;      /* its envelope */
    size_t bytes;                  /* its size */
    const void *data;              /* eager: its copy (packed), in this allocation */
    const void *send_buf;          /* rendezvous: the sender's buffer, */
    int send_count;                /*   count */
    MPI_Datatype send_type;        /*   datatype */
    int send_contiguous;           /*   and whether its data is one block */
    tdm_virt_request *send;        /* rendezvous: the send to complete */
    void *arrived;                 /* from another process: the buffer that holds data */
    void *remote;                  /* from another process, its data still there (net's) */
    struct tdm_virt_message *next; /* in the unexpected queue */
};

typedef struct {
    int lock;                                  /* spin lock of both queues and 'probing' */
    tdm_virt_request *posted, *posted_tail;    /* receives waiting, in posting order */
    tdm_virt_message *unexpected, *unexp_tail; /* messages waiting, in arrival order */
    int probing;                               /* the owner waits in MPI_Probe */
    tdm_virt_request *free_requests;           /* the owner's alone */
    tdm_virt_request *orphans;                 /* freed before completion; the owner's */
} __attribute__((aligned(64))) tdm_virt_mailbox;

static tdm_virt_mailbox *mailboxes;
static int mailbox_count;
static tdm_virt_progress progress;
static tdm_virt_fetch fetch;

void tdm_virt_queue_set_fetch(tdm_virt_fetch fn)
{
    fetch = fn;
}

void tdm_virt_queue_set_progress(tdm_virt_progress fn)
{
    progress = fn;
}

/* Whether the rank's nonblocking collectives can go on (checked after
   tdm_virt_wait_prepare: their messages wake the rank too). */
static int collectives_ready(tdm_virt_rank *self)
{
    return self->coll && progress && progress(self, 0);
}

static void move_collectives(tdm_virt_rank *self)
{
    if (self->coll && progress)
        progress(self, 1);
}

/* Request handles: numbers into chunks that are made, never moved. */
#define CHUNK_BITS 12
#define CHUNK (1 << CHUNK_BITS)
#define MAX_CHUNKS 4096
#define REQUESTS_AT_ONCE 64
static tdm_virt_request *chunks[MAX_CHUNKS];
static int request_count; /* numbers handed out, under chunk_mutex */
static pthread_mutex_t chunk_mutex = PTHREAD_MUTEX_INITIALIZER;

/* Named datatypes that are one block, by size: compared before asking the
   MPI library (which costs several calls per message). */
typedef struct {
    MPI_Datatype type;
    int size;
} named_type;
static named_type named[16];
static int named_count;

int tdm_virt_queue_init(int ranks)
{
    mailboxes = aligned_alloc(64, sizeof *mailboxes * (size_t)ranks);
    if (!mailboxes)
        return MPI_ERR_NO_MEM;
    memset(mailboxes, 0, sizeof *mailboxes * (size_t)ranks);
    mailbox_count = ranks;
    MPI_Datatype common[] = {MPI_BYTE,    MPI_CHAR,          MPI_INT,     MPI_UNSIGNED,
                             MPI_LONG,    MPI_LONG_LONG,     MPI_FLOAT,   MPI_DOUBLE,
                             MPI_SHORT,   MPI_UNSIGNED_LONG, MPI_INT64_T, MPI_UINT64_T,
                             MPI_INT32_T, MPI_UINT8_T,       MPI_PACKED,  MPI_LONG_DOUBLE};
    named_count = 0;
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++) {
        int size;
        MPI_Aint lb, extent;
        if (PMPI_Type_size(common[i], &size) == MPI_SUCCESS &&
            PMPI_Type_get_extent(common[i], &lb, &extent) == MPI_SUCCESS && lb == 0 &&
            extent == size)
            named[named_count++] = (named_type){common[i], size};
    }
    return MPI_SUCCESS;
}

void tdm_virt_queue_finish(void)
{
    free(mailboxes);
    mailboxes = NULL;
    mailbox_count = 0;
    for (int i = 0; i < MAX_CHUNKS && chunks[i]; i++) {
        free(chunks[i]);
        chunks[i] = NULL;
    }
    request_count = 0;
}

int tdm_virt_type_bytes(MPI_Datatype type, int count, size_t *bytes, int *contiguous)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    for (int i = 0; i < named_count; i++) {
        if (named[i].type == type) {
            *bytes = (size_t)named[i].size * (size_t)count;
            *contiguous = 1;
            return MPI_SUCCESS;
        }
    }
    if (type == MPI_DATATYPE_NULL)
        return MPI_ERR_TYPE;
    int size;
    MPI_Aint lb, extent, true_lb, true_extent;
    int err = PMPI_Type_size(type, &size);
    if (err == MPI_SUCCESS)
        err = PMPI_Type_get_extent(type, &lb, &extent);
    if (err == MPI_SUCCESS)
        err = PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    if (err != MPI_SUCCESS)
        return err;
    *bytes = (size_t)size * (size_t)count;
    *contiguous = (true_lb == 0 && true_extent == size && extent == size) || count == 0;
    return MPI_SUCCESS;
}

int tdm_virt_pack(const void *buf, int count, MPI_Datatype type, void *data, size_t bytes,
                  int contiguous)
{
    if (contiguous) {
        if (bytes)
            memcpy(data, buf, bytes);
        return MPI_SUCCESS;
    }
    int position = 0;
    return PMPI_Pack(buf, count, type, data, (int)bytes, &position, MPI_COMM_SELF);
}

tdm_virt_request *tdm_virt_request_at(int index)
{
    if (index < 0 || index >= __atomic_load_n(&request_count, __ATOMIC_ACQUIRE))
        return NULL;
    return &chunks[index >> CHUNK_BITS][index & (CHUNK - 1)];
}

/* A released, complete request onto the free list, after what it owns. */
static void recycle(tdm_virt_mailbox *box, tdm_virt_request *r)
{
    if (r->on_release) {
        r->on_release(r->on_release_arg);
        r->on_release = NULL;
    }
    r->next = box->free_requests;
    box->free_requests = r;
}

tdm_virt_request *tdm_virt_request_new(tdm_virt_rank *self)
{
    tdm_virt_mailbox *box = &mailboxes[self->local];
    /* Freed requests that have completed since can be used again. */
    for (tdm_virt_request **p = &box->orphans; box->orphans && *p;) {
        tdm_virt_request *r = *p;
        if (tdm_virt_request_done(r)) {
            *p = r->next;
            recycle(box, r);
        } else {
            p = &r->next;
        }
    }
    if (!box->free_requests) {
        pthread_mutex_lock(&chunk_mutex);
        int first = request_count;
        if (first + REQUESTS_AT_ONCE > MAX_CHUNKS * CHUNK) {
            pthread_mutex_unlock(&chunk_mutex);
            return NULL;
        }
        int chunk = first >> CHUNK_BITS;
        if (!chunks[chunk])
            chunks[chunk] = calloc(CHUNK, sizeof(tdm_virt_request));
        if (!chunks[chunk]) {
            pthread_mutex_unlock(&chunk_mutex);
            return NULL;
        }
        for (int i = REQUESTS_AT_ONCE - 1; i >= 0; i--) {
            tdm_virt_request *r = &chunks[chunk][(first + i) & (CHUNK - 1)];
            r->index = first + i;
            r->next = box->free_requests;
            box->free_requests = r;
        }
        __atomic_store_n(&request_count, first + REQUESTS_AT_ONCE, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&chunk_mutex);
    }
    tdm_virt_request *r = box->free_requests;
    box->free_requests = r->next;
    tdm_virt_request_init(r, self, r->index);
    return r;
}

void tdm_virt_request_init(tdm_virt_request *r, tdm_virt_rank *self, int index)
{
    /* Every field, as a zeroed request has them. */
    r->index = index;
    r->kind = 0;
    r->done = 0;
    r->freed = 0;
    r->errors_return = 0;
    r->err_comm = MPI_COMM_WORLD;
    r->owner = self;
    r->buf = NULL;
    r->count = 0;
    r->type = MPI_DATATYPE_NULL;
    r->capacity = 0;
    r->contiguous = 0;
    r->context = r->source = r->tag = 0;
    r->status_source = r->status_tag = r->status_error = 0;
    r->status_bytes = 0;
    r->status_cancelled = 0;
    r->coll = NULL;
    r->persistent = r->active = r->p_mode = 0;
    r->p_buf = NULL;
    r->p_count = 0;
    r->p_type = MPI_DATATYPE_NULL;
    r->p_peer = r->p_tag = 0;
    r->p_comm = MPI_COMM_NULL;
    r->on_release = NULL;
    r->on_release_arg = NULL;
    r->next = NULL;
}

void tdm_virt_request_release(tdm_virt_rank *self, tdm_virt_request *req)
{
    tdm_virt_mailbox *box = &mailboxes[self->local];
    if (!tdm_virt_request_done(req)) {
        req->freed = 1;
        req->next = box->orphans;
        box->orphans = req;
        return;
    }
    req->kind = 0;
    recycle(box, req);
}

void tdm_virt_complete(tdm_virt_request *req, int source, int tag, size_t bytes, int error)
{
    tdm_virt_rank *owner = req->owner;
    req->status_source = source;
    req->status_tag = tag;
    req->status_bytes = bytes;
    req->status_error = error;
    __atomic_store_n(&req->done, 1, __ATOMIC_RELEASE);
    tdm_virt_wake(owner);
}

/* Copy a message of 'bytes' from the sender's items to the receiver's; sets
 *moved to the bytes that fit. Returns MPI_ERR_TRUNCATE when not all did. */
/* One side of a copy: a buffer of count items of type, its bytes and
   whether they lie in one block (worked out once per message, when the
   operation starts). */
typedef struct {
    const void *buf;
    int count;
    MPI_Datatype type;
    size_t bytes;
    int contiguous;
} side;

/* Copy a message of 'bytes' from the sender's side to the receiver's; sets
 *moved to the bytes that fit. Returns MPI_ERR_TRUNCATE when not all did. */
static int move(const tdm_virt_request *recv, side from, size_t bytes, size_t *moved)
{
    void *rbuf = recv->buf;
    size_t capacity = recv->capacity, sbytes = from.bytes;
    int rcontig = recv->contiguous, scontig = from.contiguous;
    const void *sbuf = from.buf;
    int err = MPI_SUCCESS;
    size_t n = bytes < capacity ? bytes : capacity;
    *moved = n;
    if (n > 0) {
        const void *packed = sbuf;
        void *scratch = NULL;
        if (!scontig) {
            int position = 0;
            scratch = malloc(sbytes ? sbytes : 1);
            if (!scratch)
                return MPI_ERR_NO_MEM;
            err = PMPI_Pack(sbuf, from.count, from.type, scratch, (int)sbytes, &position,
                            MPI_COMM_SELF);
            packed = scratch;
        }
        if (err == MPI_SUCCESS) {
            if (rcontig) {
                memcpy(rbuf, packed, n);
            } else {
                int position = 0, size;
                PMPI_Type_size(recv->type, &size);
                err = PMPI_Unpack(packed, (int)n, &position, rbuf,
                                  size ? (int)(n / (size_t)size) : 0, recv->type, MPI_COMM_SELF);
            }
        }
        free(scratch);
        if (err != MPI_SUCCESS)
            return err;
    }
    return bytes > capacity ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

static int matches(int want_context, int want_source, int want_tag, int context, int source,
                   int tag)
{
    return want_context == context && (want_source == MPI_ANY_SOURCE || want_source == source) &&
           (want_tag == MPI_ANY_TAG || want_tag == tag);
}

/* Take the first posted receive that matches, or NULL. Under the lock. */
static tdm_virt_request *take_posted(tdm_virt_mailbox *box, int context, int source, int tag)
{
    tdm_virt_request *prev = NULL;
    for (tdm_virt_request *r = box->posted; r; prev = r, r = r->next) {
        if (!matches(r->context, r->source, r->tag, context, source, tag))
            continue;
        if (prev)
            prev->next = r->next;
        else
            box->posted = r->next;
        if (box->posted_tail == r)
            box->posted_tail = prev;
        return r;
    }
    return NULL;
}

/* Queue a message no receive waited for. Under the lock. */
static void append_unexpected(tdm_virt_mailbox *box, tdm_virt_message *msg)
{
    msg->next = NULL;
    if (box->unexp_tail)
        box->unexp_tail->next = msg;
    else
        box->unexpected = msg;
    box->unexp_tail = msg;
}

int tdm_virt_isend(tdm_virt_rank *self, const void *buf, int count, MPI_Datatype type,
                   tdm_virt_rank *target, int context, int source, int tag, int sync,
                   tdm_virt_request **out)
{
    size_t bytes;
    int contiguous;
    int err = tdm_virt_type_bytes(type, count, &bytes, &contiguous);
    if (err != MPI_SUCCESS)
        return err;
    int pooled = !*out; /* else the caller's own (a blocking call's, on its stack) */
    tdm_virt_request *send = pooled ? tdm_virt_request_new(self) : *out;
    if (!send)
        return MPI_ERR_NO_MEM;
    send->kind = TDM_VIRT_SEND;
    tdm_virt_mailbox *box = &mailboxes[target->local];

    /* A receive already posted gets the data in one copy; otherwise the
       message is queued, with a copy of the data (eager) or the sender's
       buffer (rendezvous, and every synchronous send). */
    tdm_virt_message *msg = NULL;
    int eager = bytes <= TDM_VIRT_EAGER_LIMIT && !sync;
    tdm_virt_spin_lock(&box->lock);
    tdm_virt_request *recv = take_posted(box, context, source, tag);
    if (recv) {
        tdm_virt_spin_unlock(&box->lock);
        size_t moved;
        int rerr = move(recv, (side){buf, count, type, bytes, contiguous}, bytes, &moved);
        tdm_virt_complete(recv, source, tag, moved, rerr);
        tdm_virt_complete(send, source, tag, bytes, MPI_SUCCESS);
        *out = send;
        return MPI_SUCCESS;
    }
    msg = malloc(sizeof *msg + (eager ? bytes : 0));
    if (!msg) {
        tdm_virt_spin_unlock(&box->lock);
        send->done = 1;
        if (pooled)
            tdm_virt_request_release(self, send);
        return MPI_ERR_NO_MEM;
    }
    *msg = (tdm_virt_message){.context = context, .source = source, .tag = tag, .bytes = bytes};
    if (eager) {
        void *data = msg + 1;
        msg->data = data;
        err = tdm_virt_pack(buf, count, type, data, bytes, contiguous);
        if (err != MPI_SUCCESS) {
            tdm_virt_spin_unlock(&box->lock);
            free(msg);
            send->done = 1;
            if (pooled)
                tdm_virt_request_release(self, send);
            return err;
        }
    } else {
        msg->send_buf = buf;
        msg->send_count = count;
        msg->send_type = type;
        msg->send_contiguous = contiguous;
        msg->send = send;
    }
    append_unexpected(box, msg);
    int probing = box->probing;
    tdm_virt_spin_unlock(&box->lock);
    if (eager)
        tdm_virt_complete(send, source, tag, bytes, MPI_SUCCESS);
    if (probing)
        tdm_virt_wake(target);
    *out = send;
    return MPI_SUCCESS;
}

/* Take the first queued message that matches, or NULL. Under the lock. */
static tdm_virt_message *take_unexpected(tdm_virt_mailbox *box, int context, int source, int tag,
                                         int remove)
{
    tdm_virt_message *prev = NULL;
    for (tdm_virt_message *m = box->unexpected; m; prev = m, m = m->next) {
        if (!matches(context, source, tag, m->context, m->source, m->tag))
            continue;
        if (remove) {
            if (prev)
                prev->next = m->next;
            else
                box->unexpected = m->next;
            if (box->unexp_tail == m)
                box->unexp_tail = prev;
        }
        return m;
    }
    return NULL;
}

/* Copy a message into the receive that matched it and complete both (the
   sender's too, for a rendezvous), or have its data fetched from another
   process; frees the data that came with it, not the message. */
static void match(tdm_virt_request *recv, const tdm_virt_message *msg)
{
    size_t moved;
    int rerr;
    if (msg->remote) { /* its data comes now, into the receive */
        rerr = fetch(recv, msg->bytes, msg->source, msg->tag, msg->remote);
        if (rerr != MPI_SUCCESS)
            tdm_virt_complete(recv, msg->source, msg->tag, 0, rerr);
        return;
    }
    if (msg->data) {
        rerr = move(recv, (side){msg->data, (int)msg->bytes, MPI_BYTE, msg->bytes, 1}, msg->bytes,
                    &moved);
    } else {
        rerr = move(recv,
                    (side){msg->send_buf, msg->send_count, msg->send_type, msg->bytes,
                           msg->send_contiguous},
                    msg->bytes, &moved);
        tdm_virt_complete(msg->send, msg->source, msg->tag, msg->bytes, MPI_SUCCESS);
    }
    tdm_virt_complete(recv, msg->source, msg->tag, moved, rerr);
    free(msg->arrived);
}

/* A message taken out of the queue, into the receive; and freed. */
static void receive(tdm_virt_request *recv, tdm_virt_message *msg)
{
    match(recv, msg);
    free(msg);
}

/* A receive request for 'count' x 'type' into 'buf' matching (context,
   source, tag): *out's, else a new one; NULL with *err set. */
static tdm_virt_request *recv_request(tdm_virt_rank *self, void *buf, int count, MPI_Datatype type,
                                      int context, int source, int tag, tdm_virt_request *given,
                                      int *err)
{
    size_t capacity;
    int contiguous;
    *err = tdm_virt_type_bytes(type, count, &capacity, &contiguous);
    if (*err != MPI_SUCCESS)
        return NULL;
    tdm_virt_request *recv = given ? given : tdm_virt_request_new(self);
    if (!recv) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    recv->kind = TDM_VIRT_RECV;
    recv->capacity = capacity;
    recv->contiguous = contiguous;
    recv->buf = buf;
    recv->count = count;
    recv->type = type;
    recv->context = context;
    recv->source = source;
    recv->tag = tag;
    return recv;
}

int tdm_virt_irecv(tdm_virt_rank *self, void *buf, int count, MPI_Datatype type, int context,
                   int source, int tag, tdm_virt_request **out)
{
    int err;
    tdm_virt_request *recv = recv_request(self, buf, count, type, context, source, tag, *out, &err);
    if (!recv)
        return err;
    tdm_virt_mailbox *box = &mailboxes[self->local];
    tdm_virt_spin_lock(&box->lock);
    tdm_virt_message *msg = take_unexpected(box, context, source, tag, 1);
    if (!msg) {
        recv->next = NULL;
        if (box->posted_tail)
            box->posted_tail->next = recv;
        else
            box->posted = recv;
        box->posted_tail = recv;
        tdm_virt_spin_unlock(&box->lock);
        *out = recv;
        return MPI_SUCCESS;
    }
    tdm_virt_spin_unlock(&box->lock);
    receive(recv, msg);
    *out = recv;
    return MPI_SUCCESS;
}

int tdm_virt_mrecv(tdm_virt_rank *self, tdm_virt_message *msg, void *buf, int count,
                   MPI_Datatype type, tdm_virt_request **out)
{
    int err;
    tdm_virt_request *recv =
        recv_request(self, buf, count, type, msg->context, msg->source, msg->tag, *out, &err);
    if (!recv)
        return err;
    receive(recv, msg);
    *out = recv;
    return MPI_SUCCESS;
}

/* A message from another process ('arrived': its data here; 'remote': its
   data still there): to the first posted receive that matches, else
   queued. From any thread. */
static int deliver(tdm_virt_rank *target, tdm_virt_message arrived)
{
    tdm_virt_mailbox *box = &mailboxes[target->local];
    tdm_virt_spin_lock(&box->lock);
    tdm_virt_request *recv = take_posted(box, arrived.context, arrived.source, arrived.tag);
    if (recv) {
        tdm_virt_spin_unlock(&box->lock);
        match(recv, &arrived);
        return MPI_SUCCESS;
    }
    tdm_virt_message *msg = malloc(sizeof *msg);
    if (!msg) {
        tdm_virt_spin_unlock(&box->lock);
        free(arrived.arrived);
        return MPI_ERR_NO_MEM;
    }
    *msg = arrived;
    append_unexpected(box, msg);
    int probing = box->probing;
    tdm_virt_spin_unlock(&box->lock);
    if (probing)
        tdm_virt_wake(target);
    return MPI_SUCCESS;
}

int tdm_virt_deliver(tdm_virt_rank *target, int context, int source, int tag, void *arrived,
                     const void *data, size_t bytes)
{
    return deliver(target, (tdm_virt_message){.context = context,
                                              .source = source,
                                              .tag = tag,
                                              .bytes = bytes,
                                              .data = data,
                                              .arrived = arrived});
}

int tdm_virt_deliver_remote(tdm_virt_rank *target, int context, int source, int tag, size_t bytes,
                            void *remote)
{
    return deliver(
        target,
        (tdm_virt_message){
            .context = context, .source = source, .tag = tag, .bytes = bytes, .remote = remote});
}

void tdm_virt_complete_packed(tdm_virt_request *recv, const void *data, size_t bytes, int source,
                              int tag)
{
    size_t moved;
    int err = move(recv, (side){data, (int)bytes, MPI_BYTE, bytes, 1}, bytes, &moved);
    tdm_virt_complete(recv, source, tag, moved, err);
}

void tdm_virt_queue_drain(void (*drop)(void *remote, size_t bytes))
{
    for (int i = 0; i < mailbox_count; i++) {
        tdm_virt_mailbox *box = &mailboxes[i];
        tdm_virt_spin_lock(&box->lock);
        tdm_virt_message **p = &box->unexpected, *last = NULL;
        while (*p) {
            tdm_virt_message *m = *p;
            if (m->remote) {
                *p = m->next;
                drop(m->remote, m->bytes);
                free(m);
            } else {
                last = m;
                p = &m->next;
            }
        }
        box->unexp_tail = last;
        tdm_virt_spin_unlock(&box->lock);
    }
}

int tdm_virt_probe(tdm_virt_rank *self, const char *call, int context, int source, int tag,
                   int block, int *found, int *out_source, int *out_tag, size_t *bytes,
                   tdm_virt_message **take)
{
    tdm_virt_mailbox *box = &mailboxes[self->local];
    for (;;) {
        move_collectives(self);
        if (block)
            tdm_virt_wait_prepare(self, call, source, tag);
        tdm_virt_spin_lock(&box->lock);
        tdm_virt_message *msg = take_unexpected(box, context, source, tag, take != NULL);
        if (take)
            *take = msg;
        if (msg) {
            *out_source = msg->source;
            *out_tag = msg->tag;
            *bytes = msg->bytes;
            box->probing = 0;
        } else if (block) {
            box->probing = 1;
        }
        tdm_virt_spin_unlock(&box->lock);
        *found = msg != NULL;
        if (!block)
            return MPI_SUCCESS;
        if (msg) {
            tdm_virt_wait_cancel(self);
            return MPI_SUCCESS;
        }
        if (collectives_ready(self)) {
            tdm_virt_wait_cancel(self);
            continue;
        }
        tdm_virt_wait_commit(self);
    }
}

void tdm_virt_request_wait(tdm_virt_rank *self, tdm_virt_request *req, const char *call, int peer,
                           int tag)
{
    while (!tdm_virt_request_done(req)) {
        move_collectives(self);
        if (tdm_virt_request_done(req))
            break;
        tdm_virt_wait_prepare(self, call, peer, tag);
        if (tdm_virt_request_done(req) || collectives_ready(self)) {
            tdm_virt_wait_cancel(self);
            continue;
        }
        tdm_virt_wait_commit(self);
    }
}

int tdm_virt_cancel(tdm_virt_rank *self, tdm_virt_request *req)
{
    tdm_virt_mailbox *box = &mailboxes[self->local];
    tdm_virt_spin_lock(&box->lock);
    tdm_virt_request *prev = NULL, *r = box->posted;
    while (r && r != req) {
        prev = r;
        r = r->next;
    }
    if (r) {
        if (prev)
            prev->next = r->next;
        else
            box->posted = r->next;
        if (box->posted_tail == r)
            box->posted_tail = prev;
    }
    tdm_virt_spin_unlock(&box->lock);
    if (!r)
        return 0;
    req->status_cancelled = 1;
    tdm_virt_complete(req, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
    return 1;
}
