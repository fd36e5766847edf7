/*
 * The real MPI between the processes of virtual ranks (net.h).
 */
#include "virt/net.h"

#include "core/netwait.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TDM_VIRT_NET_TAG 7
#define TDM_VIRT_DATA_TAG 8

/* Messages above this many bytes go as a header and their data as a
   message of its own, which the receiver takes straight into the receive's
   buffer once one matches (docs/VIRTUAL.md, "Messages between
   processes"): from 8 KiB that streamed 1.0-2.4x as fast as a copy on
   both sides, at 4 KiB as fast, at 2 KiB MPICH's 0.73x
   (docs/perf/virt/between-processes/limit.txt). */
#define TDM_VIRT_NET_RENDEZVOUS 4096

typedef struct {
    int64_t bytes; /* of the message's data */
    int32_t dest;  /* the destination's index in its process */
    int32_t context, source, tag;
    int32_t apart; /* 0: the data follows the header; 1: it comes as a message of its own */
} net_header;

/* A message's data that waits with its sender for a receive to match (a
   header with 'apart'): the real MPI's matched message, taken with
   MPI_Improbe when its header arrived. */
typedef struct {
    MPI_Message message;
    int process;
} remote_data;

/* The data of such a message on its way, sent or received with the real
   MPI straight from or into the program's buffer: the virtual request it
   completes (NULL: received for no rank, at the end), and for a receive
   smaller than the message, or one for no rank, a buffer that holds it. */
typedef struct transfer {
    MPI_Request request;
    tdm_virt_request *req;
    char *scratch;
    size_t bytes;
    int source, tag; /* the status */
    int receiving;   /* else sending */
    int error;       /* the real MPI's, once done */
    struct transfer *next;
} transfer;

typedef struct outgoing {
    MPI_Request request; /* the real MPI's send */
    void *buffer;        /* header and data, freed once sent */
    struct outgoing *next;
} outgoing;

/* A message matched by the real MPI and on its way in: delivered to its
   rank once complete, in the order of matching (the poller's FIFO). */
typedef struct incoming {
    MPI_Request request; /* the real MPI's receive */
    char *buffer;        /* header and data */
    int bytes, source;
    struct incoming *next;
} incoming;

static MPI_Comm net_comm = MPI_COMM_NULL, data_comm = MPI_COMM_NULL;
static int per_process, this_process, process_count;
static pthread_mutex_t poll_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t out_mutex = PTHREAD_MUTEX_INITIALIZER;
static outgoing *in_flight;
static incoming *arriving, *arriving_tail; /* under poll_mutex */
static pthread_mutex_t transfer_mutex = PTHREAD_MUTEX_INITIALIZER;
/* Held while a message whose data goes apart posts its data and its header:
   the receiver pairs the k-th header from a process with its k-th data, so
   two cores' sends must not cross between the two. */
static pthread_mutex_t apart_mutex = PTHREAD_MUTEX_INITIALIZER;
static transfer *transfers; /* under transfer_mutex */

static int receive_data(tdm_virt_request *recv, size_t bytes, int source, int tag, void *remote);
static void drop(void *remote, size_t bytes);
static int finish_transfers(int wait);

/* The progress thread (TANDEM_VIRT_PROGRESS=thread): it polls the real MPI
   while the ranks compute, so that a message's protocol (a rendezvous'
   handshake, the data of a large message) moves on between the ranks'
   calls; it sleeps on the process's sockets (core/netwait) when nothing
   is on its way. */
static pthread_t progress_thread;
static int progress_running, progress_stop;  /* progress_stop: atomic */
static long long sent_count, received_count; /* messages to and from other processes (atomic) */

/*
 * Whether the job is stuck: waves of MPI_Iallreduce on a communicator of
 * their own, each process taking part only while it is quiet (every core
 * idle, no rank ready) or done, with its counts of messages sent to and
 * received from other processes and of ranks not finished. A process
 * becomes busy again only when a message reaches it. Two waves in a row
 * with the same sums and as many messages received as sent (Mattern's
 * four counters) mean that no message was on its way and none moved
 * between them: every rank of the job is blocked or finished for good.
 * No unfinished rank left: the job is done. Every process sees the same
 * sums, so all decide alike at the same wave.
 */
static MPI_Comm wave_comm = MPI_COMM_NULL;
static MPI_Request wave = MPI_REQUEST_NULL;
static long long wave_mine[3], wave_sums[3], last_sums[3];
static int have_last;
static pthread_mutex_t wave_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct timespec wave_posted;

/* Microseconds since 'then'. */
static long long since_us(const struct timespec *then)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - then->tv_sec) * 1000000LL + (now.tv_nsec - then->tv_nsec) / 1000;
}

/* One step: post a wave, or see whether the posted one ended and what it
   says (TDM_VIRT_*). A new wave of a process with unfinished ranks waits
   WAVE_PAUSE_US after its last one, so that a job waiting for a long
   computation of one process does not keep the others' real MPI busy. */
enum { WAVE_PAUSE_US = 100000 };
static int wave_step(int unfinished)
{
    int verdict = TDM_VIRT_GOING;
    if (wave_comm == MPI_COMM_NULL || pthread_mutex_trylock(&wave_mutex) != 0)
        return verdict;
    if (wave == MPI_REQUEST_NULL) {
        if (!have_last || unfinished == 0 || since_us(&wave_posted) >= WAVE_PAUSE_US) {
            wave_mine[0] = __atomic_load_n(&sent_count, __ATOMIC_SEQ_CST);
            wave_mine[1] = __atomic_load_n(&received_count, __ATOMIC_SEQ_CST);
            wave_mine[2] = unfinished;
            clock_gettime(CLOCK_MONOTONIC, &wave_posted);
            if (PMPI_Iallreduce(wave_mine, wave_sums, 3, MPI_LONG_LONG, MPI_SUM, wave_comm,
                                &wave) != MPI_SUCCESS)
                wave = MPI_REQUEST_NULL;
        }
    } else {
        int done = 0;
        PMPI_Test(&wave, &done, MPI_STATUS_IGNORE);
        if (done) {
            /* all done once every message is in too: what a rank left
               unreceived is then taken in (tdm_virt_net_finish) */
            if (wave_sums[2] == 0 && wave_sums[0] == wave_sums[1])
                verdict = TDM_VIRT_ALL_DONE;
            else if (wave_sums[0] == wave_sums[1] && have_last && last_sums[0] == wave_sums[0] &&
                     last_sums[1] == wave_sums[1])
                verdict = TDM_VIRT_DEADLOCK;
            memcpy(last_sums, wave_sums, sizeof last_sums);
            have_last = 1;
        }
    }
    pthread_mutex_unlock(&wave_mutex);
    return verdict;
}

int tdm_virt_net_quiet(int unfinished)
{
    return wave_step(unfinished);
}

void tdm_virt_net_reported(const char *text)
{
    /* every process has found the deadlock at the same wave */
    int length = (int)strlen(text), *lengths = NULL, *at = NULL;
    char *all = NULL;
    if (this_process == 0) {
        lengths = calloc((size_t)process_count, sizeof *lengths);
        at = calloc((size_t)process_count, sizeof *at);
    }
    PMPI_Gather(&length, 1, MPI_INT, lengths, 1, MPI_INT, 0, wave_comm);
    if (this_process == 0 && lengths && at) {
        long total = 0;
        for (int p = 0; p < process_count; p++) {
            at[p] = (int)total;
            total += lengths[p];
        }
        all = malloc((size_t)total + 1);
    }
    PMPI_Gatherv(text, length, MPI_CHAR, all, lengths, at, MPI_CHAR, 0, wave_comm);
    if (this_process == 0 && all) {
        all[at[process_count - 1] + lengths[process_count - 1]] = '\0';
        fputs(all, stderr);
    } else if (this_process == 0) {
        fputs(text, stderr); /* no memory for the others' */
    }
    fflush(stderr);
    /* Every process ends with status 1 once the report is out: the
       launchers then stop the job and pass on what each printed, where
       MPI_Abort let Hydra kill process 0 before its output was forwarded
       (1 run in 15 beside a busy CPU). */
    PMPI_Barrier(wave_comm);
    exit(1);
}

int tdm_virt_net_init(int ranks_per_process, int process, int processes)
{
    per_process = ranks_per_process;
    this_process = process;
    process_count = processes;
    if (processes == 1)
        return MPI_SUCCESS;
    int err = PMPI_Comm_dup(MPI_COMM_WORLD, &net_comm);
    if (err == MPI_SUCCESS)
        err = PMPI_Comm_dup(MPI_COMM_WORLD, &data_comm);
    if (err == MPI_SUCCESS)
        tdm_virt_queue_set_fetch(receive_data); /* the receive that matched such a message */
    return err == MPI_SUCCESS ? PMPI_Comm_dup(MPI_COMM_WORLD, &wave_comm) : err;
}

/* Pauses of the progress thread between polls that found nothing, in
   microseconds: short while a message is on its way (shared memory between
   processes of one host raises no socket event), up to a millisecond when
   none is and the sockets would wake it. */
enum { PAUSE_MIN_US = 10, PAUSE_BUSY_US = 200, PAUSE_IDLE_US = 1000 };

static int on_its_way(void)
{
    return __atomic_load_n(&in_flight, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&arriving, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&transfers, __ATOMIC_ACQUIRE);
}

static void *progress_main(void *unused)
{
    (void)unused;
    int event = tdm_netwait_open() == 0;
    int pause = PAUSE_MIN_US;
    while (!__atomic_load_n(&progress_stop, __ATOMIC_ACQUIRE)) {
        if (tdm_virt_net_poll()) {
            pause = PAUSE_MIN_US;
            continue;
        }
        int limit = on_its_way() ? PAUSE_BUSY_US : PAUSE_IDLE_US;
        if (pause > limit)
            pause = limit;
        if (event) {
            tdm_netwait_scan(TDM_NETWAIT_RESCAN_MS);
            if (tdm_netwait(pause)) {
                pause = PAUSE_MIN_US;
                continue;
            }
        } else {
            struct timespec t = {0, pause * 1000L};
            nanosleep(&t, NULL);
        }
        pause *= 2;
    }
    if (event)
        tdm_netwait_close();
    return NULL;
}

int tdm_virt_net_start_progress(void)
{
    if (net_comm == MPI_COMM_NULL || progress_running)
        return 0;
    int one_thread = tdm_virt_one_thread;
    tdm_virt_one_thread = 0; /* the queues' locks are needed from now on */
    if (pthread_create(&progress_thread, NULL, progress_main, NULL) != 0) {
        tdm_virt_one_thread = one_thread;
        return -1;
    }
    progress_running = 1;
    return 0;
}

static void stop_progress(void)
{
    if (!progress_running)
        return;
    __atomic_store_n(&progress_stop, 1, __ATOMIC_RELEASE);
    pthread_join(progress_thread, NULL);
    progress_running = 0;
}

/* Free the buffers of the sends the real MPI completed; all of them and
   waiting with 'wait'. */
static void reap(int wait)
{
    pthread_mutex_lock(&out_mutex);
    outgoing **p = &in_flight;
    while (*p) {
        outgoing *o = *p;
        int done = 1;
        if (wait)
            PMPI_Wait(&o->request, MPI_STATUS_IGNORE);
        else
            PMPI_Test(&o->request, &done, MPI_STATUS_IGNORE);
        if (done) {
            __atomic_store_n(p, o->next, __ATOMIC_RELEASE);
            free(o->buffer);
            free(o);
        } else {
            p = &o->next;
        }
    }
    pthread_mutex_unlock(&out_mutex);
}

void tdm_virt_net_finish(void)
{
    if (net_comm == MPI_COMM_NULL)
        return;
    /* Take part in the waves until every process is done: one whose ranks
       wait for a message that this one's never sent finds its deadlock. */
    for (int verdict; (verdict = wave_step(0)) != TDM_VIRT_ALL_DONE;) {
        if (verdict == TDM_VIRT_DEADLOCK) {
            char text[200];
            snprintf(text, sizeof text,
                     "tandem virt: deadlock: every virtual rank of the job is blocked or finished "
                     "and no message is on its way (ranks %d-%d, in this process: finished)\n",
                     this_process * per_process, (this_process + 1) * per_process - 1);
            tdm_virt_net_reported(text);
        }
        tdm_virt_net_poll();
        /* every rank here has finished: what waits for one never will */
        tdm_virt_queue_drain(drop);
        struct timespec pause = {0, 50000};
        nanosleep(&pause, NULL);
    }
    stop_progress();
    finish_transfers(1);
    /* what arrived for ranks that finished without receiving it */
    pthread_mutex_lock(&poll_mutex);
    for (incoming *in = arriving, *next; in; in = next) {
        next = in->next;
        PMPI_Wait(&in->request, MPI_STATUS_IGNORE);
        free(in->buffer);
        free(in);
    }
    arriving = arriving_tail = NULL;
    pthread_mutex_unlock(&poll_mutex);
    reap(1);
    PMPI_Comm_free(&wave_comm);
    PMPI_Comm_free(&net_comm);
}

static void __attribute__((noreturn)) malformed(int process)
{
    fprintf(stderr, "tandem virt: a message from process %d is malformed\n", process);
    PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_INTERN);
    abort();
}

static void *allocate(size_t bytes)
{
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (!p) {
        fprintf(stderr, "tandem virt: out of memory receiving %zu bytes\n", bytes);
        PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
    }
    return p;
}

static void add_transfer(transfer *t)
{
    pthread_mutex_lock(&transfer_mutex);
    t->next = transfers;
    __atomic_store_n(&transfers, t, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&transfer_mutex);
}

/* Start receiving a message's data that waited with its sender: into the
   receive 'recv' where it fits, else (or with no receive: 'recv' NULL) into
   a buffer of its own. Counted as a message sent and, once in, received,
   so that no wave finds the job stuck while it moves. */
static int receive_data(tdm_virt_request *recv, size_t bytes, int source, int tag, void *remote)
{
    remote_data *data = remote;
    transfer *t = malloc(sizeof *t);
    if (!t)
        return MPI_ERR_NO_MEM;
    *t = (transfer){.req = recv, .bytes = bytes, .source = source, .tag = tag, .receiving = 1};
    int err;
    if (recv && recv->capacity >= bytes) {
        err =
            recv->contiguous && recv->capacity <= INT32_MAX
                ? PMPI_Imrecv(recv->buf, (int)recv->capacity, MPI_BYTE, &data->message, &t->request)
                : PMPI_Imrecv(recv->buf, recv->count, recv->type, &data->message, &t->request);
    } else {
        t->scratch = malloc(bytes ? bytes : 1);
        err = t->scratch
                  ? PMPI_Imrecv(t->scratch, (int)bytes, MPI_BYTE, &data->message, &t->request)
                  : MPI_ERR_NO_MEM;
    }
    if (err != MPI_SUCCESS) {
        free(t->scratch);
        free(t);
        return err;
    }
    free(data);
    __atomic_add_fetch(&sent_count, 1, __ATOMIC_SEQ_CST);
    add_transfer(t);
    return MPI_SUCCESS;
}

/* Such a message that no rank received, at the end: taken in and dropped,
   so that its sender's send completes. */
static void drop(void *remote, size_t bytes)
{
    if (receive_data(NULL, bytes, 0, 0, remote) != MPI_SUCCESS) {
        fprintf(stderr, "tandem virt: out of memory taking in an unreceived message of %zu bytes\n",
                bytes);
        PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
    }
}

/* Complete the transfers that are done (all of them, waiting, with 'wait');
   returns how many completed. */
static int finish_transfers(int wait)
{
    transfer *done = NULL;
    pthread_mutex_lock(&transfer_mutex);
    for (transfer **p = &transfers; *p;) {
        transfer *t = *p;
        int complete = 1;
        t->error = wait ? PMPI_Wait(&t->request, MPI_STATUS_IGNORE)
                        : PMPI_Test(&t->request, &complete, MPI_STATUS_IGNORE);
        if (!complete && t->error == MPI_SUCCESS) {
            p = &t->next;
            continue;
        }
        __atomic_store_n(p, t->next, __ATOMIC_RELEASE);
        t->next = done;
        done = t;
    }
    pthread_mutex_unlock(&transfer_mutex);
    int count = 0;
    for (transfer *t = done, *next; t; t = next, count++) {
        next = t->next;
        if (t->req && t->receiving && t->scratch && t->error == MPI_SUCCESS)
            tdm_virt_complete_packed(t->req, t->scratch, t->bytes, t->source, t->tag);
        else if (t->req)
            tdm_virt_complete(t->req, t->source, t->tag, t->error == MPI_SUCCESS ? t->bytes : 0,
                              t->error);
        if (t->receiving)
            __atomic_add_fetch(&received_count, 1, __ATOMIC_SEQ_CST);
        free(t->scratch);
        free(t);
    }
    return count;
}

/* Hand the messages at the head of 'arriving' that are complete to their
   ranks; returns how many. Under poll_mutex. */
static int deliver_arrived(void)
{
    int delivered = 0;
    while (arriving) {
        incoming *in = arriving;
        int done = 0;
        PMPI_Test(&in->request, &done, MPI_STATUS_IGNORE);
        if (!done)
            break;
        net_header h;
        memcpy(&h, in->buffer, sizeof h);
        tdm_virt_rank *target = tdm_virt_rank_at(h.dest);
        if (!target || (size_t)in->bytes != sizeof h + (h.apart ? 0 : (size_t)h.bytes))
            malformed(in->source);
        remote_data *data = NULL;
        if (h.apart) {
            /* Its data, the next message of that process on data_comm
               (both kept in order), held by the real MPI until a receive
               matches; not there yet: the next poll. */
            MPI_Message message;
            MPI_Status status;
            int found = 0, bytes = -1;
            PMPI_Improbe(in->source, TDM_VIRT_DATA_TAG, data_comm, &found, &message, &status);
            if (!found)
                break;
            PMPI_Get_count(&status, MPI_BYTE, &bytes);
            if (bytes != h.bytes)
                malformed(in->source);
            data = allocate(sizeof *data);
            data->message = message;
            data->process = in->source;
        }
        __atomic_store_n(&arriving, in->next, __ATOMIC_RELEASE);
        if (!arriving)
            arriving_tail = NULL;
        if (data) {
            tdm_virt_deliver_remote(target, h.context, h.source, h.tag, (size_t)h.bytes, data);
            free(in->buffer);
        } else { /* the mailbox takes the buffer (tdm_virt_deliver) */
            tdm_virt_deliver(target, h.context, h.source, h.tag, in->buffer, in->buffer + sizeof h,
                             (size_t)h.bytes);
        }
        free(in);
        __atomic_add_fetch(&received_count, 1, __ATOMIC_SEQ_CST);
        delivered++;
    }
    return delivered;
}

int tdm_virt_net_poll(void)
{
    if (net_comm == MPI_COMM_NULL || pthread_mutex_trylock(&poll_mutex) != 0)
        return 0;
    /* Match what came and start receiving it, so that no thread waits in
       the real MPI for a large message's data: they arrive while the ranks
       run, and are handed over in the order they matched. */
    for (int n = 0; n < 64; n++) {
        int flag = 0, bytes = 0;
        MPI_Message message;
        MPI_Status status;
        if (PMPI_Improbe(MPI_ANY_SOURCE, TDM_VIRT_NET_TAG, net_comm, &flag, &message, &status) !=
                MPI_SUCCESS ||
            !flag)
            break;
        PMPI_Get_count(&status, MPI_BYTE, &bytes);
        incoming *in = allocate(sizeof *in);
        in->buffer = allocate((size_t)bytes);
        in->bytes = bytes;
        in->source = status.MPI_SOURCE;
        in->next = NULL;
        PMPI_Imrecv(in->buffer, bytes, MPI_BYTE, &message, &in->request);
        if (arriving_tail)
            arriving_tail->next = in;
        else
            __atomic_store_n(&arriving, in, __ATOMIC_RELEASE);
        arriving_tail = in;
    }
    int arrived = deliver_arrived();
    if (__atomic_load_n(&transfers, __ATOMIC_ACQUIRE))
        arrived += finish_transfers(0);
    pthread_mutex_unlock(&poll_mutex);
    if (__atomic_load_n(&in_flight, __ATOMIC_ACQUIRE))
        reap(0);
    return arrived;
}

/* Queue a send of the real MPI, whose buffer 'buffer' is freed once it is
   done (reap). */
static void in_flight_add(outgoing *o)
{
    pthread_mutex_lock(&out_mutex);
    o->next = in_flight;
    __atomic_store_n(&in_flight, o, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&out_mutex);
}

static int remote_send(tdm_virt_rank *self, const void *buf, int count, MPI_Datatype type, int dest,
                       int context, int source, int tag, tdm_virt_request **out)
{
    size_t bytes;
    int contiguous;
    int err = tdm_virt_type_bytes(type, count, &bytes, &contiguous);
    if (err != MPI_SUCCESS)
        return err;
    if (sizeof(net_header) + bytes > (size_t)INT32_MAX)
        return MPI_ERR_COUNT; /* one message of the real MPI, counted in an int */
    /* Above the limit the data goes apart, from the program's buffer, and
       the send completes once the real MPI's does. */
    int apart = bytes > TDM_VIRT_NET_RENDEZVOUS;
    outgoing *o = malloc(sizeof *o);
    char *buffer = malloc(sizeof(net_header) + (apart ? 0 : bytes));
    transfer *t = apart ? malloc(sizeof *t) : NULL;
    int pooled = !*out; /* else the caller's own, on its stack */
    tdm_virt_request *send = pooled ? tdm_virt_request_new(self) : *out;
    int process = dest / per_process;
    if (!o || !buffer || !send || (apart && !t)) {
        err = MPI_ERR_NO_MEM;
        goto failed;
    }
    net_header h = {(int64_t)bytes, dest % per_process, context, source, tag, apart};
    memcpy(buffer, &h, sizeof h);
    if (apart) {
        pthread_mutex_lock(&apart_mutex);
        *t = (transfer){.req = send, .bytes = bytes, .source = source, .tag = tag};
        err = contiguous ? PMPI_Isend(buf, (int)bytes, MPI_BYTE, process, TDM_VIRT_DATA_TAG,
                                      data_comm, &t->request)
                         : PMPI_Isend(buf, count, type, process, TDM_VIRT_DATA_TAG, data_comm,
                                      &t->request);
        if (err != MPI_SUCCESS) {
            pthread_mutex_unlock(&apart_mutex);
            goto failed;
        }
    } else {
        err = tdm_virt_pack(buf, count, type, buffer + sizeof h, bytes, contiguous);
        if (err != MPI_SUCCESS)
            goto failed;
    }
    err = PMPI_Isend(buffer, (int)(sizeof h + (apart ? 0 : bytes)), MPI_BYTE, process,
                     TDM_VIRT_NET_TAG, net_comm, &o->request);
    if (apart)
        pthread_mutex_unlock(&apart_mutex);
    if (err != MPI_SUCCESS) {
        if (apart) { /* its data will never be asked for */
            PMPI_Cancel(&t->request);
            PMPI_Request_free(&t->request);
        }
        goto failed;
    }
    __atomic_add_fetch(&sent_count, 1, __ATOMIC_SEQ_CST);
    o->buffer = buffer;
    in_flight_add(o);
    send->kind = TDM_VIRT_SEND;
    send->status_bytes = bytes;
    if (apart)
        add_transfer(t); /* completes the send */
    else
        send->done = 1;
    *out = send;
    return MPI_SUCCESS;

failed:
    free(o);
    free(buffer);
    free(t);
    if (send && pooled) {
        send->done = 1;
        tdm_virt_request_release(self, send);
    }
    return err;
}

int tdm_virt_net_process_of(int world)
{
    return process_count > 1 ? world / per_process : 0;
}

int tdm_virt_send(tdm_virt_rank *self, const void *buf, int count, MPI_Datatype type, int dest,
                  int context, int source, int tag, int sync, tdm_virt_request **out)
{
    /* This process's ranks first, without a division. */
    tdm_virt_rank *target = tdm_virt_rank_at(dest - (self->world - self->local));
    if (target)
        return tdm_virt_isend(self, buf, count, type, target, context, source, tag, sync, out);
    int process = dest / per_process;
    if (process < 0 || process >= process_count || process == this_process)
        return MPI_ERR_RANK;
    /* A synchronous send to another process completes as a standard one
       does: once its data is copied out, or for a large one once the real
       MPI's send of its data is done (docs/VIRTUAL.md). */
    return remote_send(self, buf, count, type, dest, context, source, tag, out);
}
