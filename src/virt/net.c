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

typedef struct {
    int64_t bytes; /* of data after the header */
    int32_t dest;  /* the destination's index in its process */
    int32_t context, source, tag;
    int32_t unused;
} net_header;

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

static MPI_Comm net_comm = MPI_COMM_NULL;
static int per_process, this_process, process_count;
static pthread_mutex_t poll_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t out_mutex = PTHREAD_MUTEX_INITIALIZER;
static outgoing *in_flight;
static incoming *arriving, *arriving_tail; /* under poll_mutex */

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
            if (wave_sums[2] == 0)
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
           __atomic_load_n(&arriving, __ATOMIC_ACQUIRE);
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
        struct timespec pause = {0, 50000};
        nanosleep(&pause, NULL);
    }
    stop_progress();
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

static void *allocate(size_t bytes)
{
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (!p) {
        fprintf(stderr, "tandem virt: out of memory receiving %zu bytes\n", bytes);
        PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
    }
    return p;
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
        if (!target || (size_t)in->bytes != sizeof h + (size_t)h.bytes) {
            fprintf(stderr, "tandem virt: a message from process %d is malformed\n", in->source);
            PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_INTERN);
        }
        __atomic_store_n(&arriving, in->next, __ATOMIC_RELEASE);
        if (!arriving)
            arriving_tail = NULL;
        /* the mailbox takes the buffer (tdm_virt_deliver) */
        tdm_virt_deliver(target, h.context, h.source, h.tag, in->buffer, in->buffer + sizeof h,
                         (size_t)h.bytes);
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
    pthread_mutex_unlock(&poll_mutex);
    if (__atomic_load_n(&in_flight, __ATOMIC_ACQUIRE))
        reap(0);
    return arrived;
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
    outgoing *o = malloc(sizeof *o);
    char *buffer = malloc(sizeof(net_header) + bytes);
    int pooled = !*out; /* else the caller's own, on its stack */
    tdm_virt_request *send = pooled ? tdm_virt_request_new(self) : *out;
    if (!o || !buffer || !send) {
        free(o);
        free(buffer);
        if (send && pooled) {
            send->done = 1;
            tdm_virt_request_release(self, send);
        }
        return MPI_ERR_NO_MEM;
    }
    net_header h = {(int64_t)bytes, dest % per_process, context, source, tag, 0};
    memcpy(buffer, &h, sizeof h);
    err = tdm_virt_pack(buf, count, type, buffer + sizeof h, bytes, contiguous);
    if (err == MPI_SUCCESS)
        err = PMPI_Isend(buffer, (int)(sizeof h + bytes), MPI_BYTE, dest / per_process,
                         TDM_VIRT_NET_TAG, net_comm, &o->request);
    if (err != MPI_SUCCESS) {
        free(o);
        free(buffer);
        if (pooled) {
            send->done = 1;
            tdm_virt_request_release(self, send);
        }
        return err;
    }
    __atomic_add_fetch(&sent_count, 1, __ATOMIC_SEQ_CST);
    o->buffer = buffer;
    pthread_mutex_lock(&out_mutex);
    o->next = in_flight;
    __atomic_store_n(&in_flight, o, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&out_mutex);
    send->kind = TDM_VIRT_SEND;
    send->status_bytes = bytes;
    send->done = 1;
    *out = send;
    return MPI_SUCCESS;
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
    /* A synchronous send to another process completes once its data is
       copied out, as a standard one does (docs/VIRTUAL.md). */
    return remote_send(self, buf, count, type, dest, context, source, tag, out);
}
