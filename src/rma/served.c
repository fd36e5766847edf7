/* Windows served by the progress processes: rma/served.h. */
#include "rma/served.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/config.h"
#include "core/log.h"
#include "core/runtime.h"
#include "core/world.h"
#include "impl/impl.h"
#include "wrappers/gen_hooks.h"

atomic_int tdm_served_windows;
static atomic_long offloaded, offloaded_across;

enum {
    TAG_COMMAND = 31071,
    TAG_OFFLOAD = 31072,
    TAG_ANSWER = 31073,
    TAG_SEQUENCED = 31074,
    TAG_POSTED = 1,
    TAG_DONE = 2
};
enum { COMMAND_CREATE = 1, COMMAND_FREE = 2 };
/* A command: its kind, the window's id, the tag of its communicator, the
   number of ranks of the program's communicator, its first rank (the
   window's key with the id), then the job ranks of the communicator, in its
   order. The first rank sends it to the sequencer (the job's first progress
   process), which passes it on to every progress process the window
   involves: each takes its commands in the one order the sequencer gave
   them, so two windows made at once on other communicators never wait for
   each other crosswise. */
enum { HEAD = 5 };

/* What the program's ranks and the progress processes of their hosts make
   alike for one window. */
struct frame {
    MPI_Comm all;    /* the program's communicator's ranks, then the progress processes */
    MPI_Comm host;   /* this host's part of 'all' */
    MPI_Win shared;  /* the host's memory: each rank's part, none for progress processes */
    char *host_base; /* where it starts here, and its length */
    MPI_Aint host_length;
    int nwins;         /* one window per rank index within a host: */
    MPI_Win *by_local; /* locks and passive epochs */
    MPI_Win active;    /* fence and post/start/complete/wait, locked by every rank throughout */
};

/* Where one rank's operations go. */
struct target {
    int ghost;          /* its progress process, a rank of 'all' */
    int local;          /* its index among the program's ranks of its host: by_local[local] */
    MPI_Aint offset;    /* of its part in its host's memory */
    MPI_Aint length;    /* of its part, bytes, as the rank asked */
    MPI_Aint disp_unit; /* the rank's own */
    int host;           /* its host (core/world.h) */
};

/* An operation handed to the origin's progress process (origin offload):
   whether it is a get, the origin's process id, the origin buffer's
   address, the bytes, their offset in the target host's memory, the
   window's id and first rank (its key), the target's progress process + 1
   where the target is on another host (0: on the origin's), and the
   target's rank in the program's communicator (the origin's own use). */
enum { PACKET = 9 };

/* The request of a request-based operation handed over (MPI_Rput,
   MPI_Rget): a generalized request completed with the operation's answer. */
struct handed_request {
    MPI_Request request;
    int done;     /* the answer came: MPI_Grequest_complete was called */
    int released; /* the MPI library freed the request (request_free) */
};

/* An operation handed over, until its answer. */
struct handed {
    long packet[PACKET];
    struct handed_request *request; /* NULL: completed by a synchronisation */
};

struct served {
    struct served *next;
    MPI_Win user; /* the program's handle */
    int id, size, rank;
    MPI_Comm comm; /* a duplicate of the program's: the notices of post/start/complete/wait */
    struct frame frame;
    struct target *targets;
    int *ghosts; /* job ranks of the progress processes in 'all', for the free command */
    int nghosts;
    int lock_all;
    unsigned char *locked; /* per target: in a lock epoch of this rank's */
    int *started;          /* the targets of an access epoch (start to complete) */
    int nstarted;
    int *posted; /* the origins of an exposure epoch whose notices are still due */
    int nposted;
    int root;              /* the job rank of the communicator's first rank: the window's key */
    int *members;          /* the job ranks of the communicator, in its order */
    int own_ghost;         /* the job rank of this rank's progress process */
    int host;              /* this rank's host */
    struct handed *handed; /* offloaded operations awaiting their answers, oldest first */
    int nhanded, handed_room, first_handed;
    int all_confirmed;        /* the lock_all epoch is known to hold its locks */
    unsigned char *confirmed; /* per target: its lock is known to be held */
};

static int settle(struct served *s);
static int take_answer(struct handed_request **completed);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct served *windows;

/* The answers to this rank are taken by one thread at a time, and the
   queues of operations handed over change under the same lock: the
   program's threads take them in synchronisations and waits, and on Open
   MPI any thread in the MPI library's progress loop may (poll_answers). */
static pthread_mutex_t answers = PTHREAD_MUTEX_INITIALIZER;
/* Request-based operations handed over whose answers have not come. */
static atomic_int requests_due;
static int next_id;

static struct served *find(MPI_Win win)
{
    if (atomic_load_explicit(&tdm_served_windows, memory_order_relaxed) == 0)
        return NULL;
    pthread_mutex_lock(&lock);
    struct served *s = windows;
    while (s && s->user != win)
        s = s->next;
    pthread_mutex_unlock(&lock);
    return s;
}

/* --- Making and freeing a frame: both sides ------------------------------ */

/* The progress processes of the hosts of 'members' (job ranks), in job rank
   order; their count, or -1. */
static int ghosts_of(const int *members, int n, int **ghosts)
{
    int job_size;
    PMPI_Comm_size(tdm_world_job(), &job_size);
    unsigned char *host_used = calloc((size_t)job_size, 1);
    *ghosts = malloc(sizeof(int) * (size_t)job_size);
    if (!host_used || !*ghosts) {
        free(host_used);
        free(*ghosts);
        *ghosts = NULL;
        return -1;
    }
    for (int i = 0; i < n; i++)
        host_used[tdm_world_host_of(members[i])] = 1;
    int count = 0;
    for (int j = 0; j < job_size; j++)
        if (tdm_world_is_ghost(j) && host_used[tdm_world_host_of(j)])
            (*ghosts)[count++] = j;
    free(host_used);
    return count;
}

/* Collective over the n 'members' (job ranks of the program's communicator,
   in its order) and the progress processes 'ghosts' of their hosts. A
   member brings 'size' bytes (a multiple of 64) and learns where its part
   is ('*base') and where its operations go ('*me'). */
static int frame_make(struct frame *f, const int *members, int n, const int *ghosts, int nghosts,
                      int tag, MPI_Aint size, void **base, struct target *me)
{
    int rc, all_rank, host_size, member;
    int *order = malloc(sizeof(int) * (size_t)(n + nghosts));
    MPI_Group job_group = MPI_GROUP_NULL, all_group = MPI_GROUP_NULL, host_group = MPI_GROUP_NULL;
    int *host_in_all = NULL, *host_ranks = NULL;
    memset(f, 0, sizeof *f);
    f->all = f->host = MPI_COMM_NULL;
    f->shared = f->active = MPI_WIN_NULL;
    rc = MPI_ERR_NO_MEM;
    if (!order)
        goto fn_exit;
    memcpy(order, members, sizeof(int) * (size_t)n);
    memcpy(order + n, ghosts, sizeof(int) * (size_t)nghosts);
    TDM_CALL_MPI(rc, PMPI_Comm_group(tdm_world_job(), &job_group));
    TDM_CALL_MPI(rc, PMPI_Group_incl(job_group, n + nghosts, order, &all_group));
    TDM_CALL_MPI(rc, PMPI_Comm_create_group(tdm_world_job(), all_group, tag, &f->all));
    TDM_CALL_MPI(rc, PMPI_Comm_rank(f->all, &all_rank));
    member = all_rank < n;
    TDM_CALL_MPI(
        rc, PMPI_Comm_split_type(f->all, MPI_COMM_TYPE_SHARED, all_rank, MPI_INFO_NULL, &f->host));
    char *mine = NULL;
    TDM_CALL_MPI(rc, PMPI_Win_allocate_shared(member ? size : 0, 1, MPI_INFO_NULL, f->host, &mine,
                                              &f->shared));
    /* The host's memory: from the lowest part to the end of the highest. */
    TDM_CALL_MPI(rc, PMPI_Comm_size(f->host, &host_size));
    host_in_all = malloc(sizeof(int) * (size_t)host_size);
    host_ranks = malloc(sizeof(int) * (size_t)host_size);
    rc = MPI_ERR_NO_MEM;
    if (!host_in_all || !host_ranks)
        goto fn_exit;
    for (int q = 0; q < host_size; q++)
        host_ranks[q] = q;
    TDM_CALL_MPI(rc, PMPI_Comm_group(f->host, &host_group));
    TDM_CALL_MPI(
        rc, PMPI_Group_translate_ranks(host_group, host_size, host_ranks, all_group, host_in_all));
    char *low = NULL, *high = NULL;
    for (int q = 0; q < host_size; q++) {
        MPI_Aint part;
        int unit;
        char *at;
        TDM_CALL_MPI(rc, PMPI_Win_shared_query(f->shared, q, &part, &unit, &at));
        if (part == 0)
            continue;
        if (!low || at < low)
            low = at;
        if (!high || at + part > high)
            high = at + part;
    }
    f->host_base = low;
    f->host_length = low ? high - low : 0;
    if (member) {
        /* my index among the host's members, and my progress process: the
           host's progress processes take the members in turn */
        int local = 0, host_ghosts = 0, my_host_rank;
        TDM_CALL_MPI(rc, PMPI_Comm_rank(f->host, &my_host_rank));
        for (int q = 0; q < host_size; q++) {
            if (host_in_all[q] >= n)
                host_ghosts++;
            else if (q < my_host_rank)
                local++;
        }
        int pick = local % host_ghosts;
        for (int q = 0; q < host_size; q++)
            if (host_in_all[q] >= n && pick-- == 0)
                me->ghost = host_in_all[q];
        me->local = local;
        me->offset = mine && low ? mine - low : 0;
        *base = mine;
    }
    int need = member ? me->local + 1 : 0;
    TDM_CALL_MPI(rc, PMPI_Allreduce(&need, &f->nwins, 1, MPI_INT, MPI_MAX, f->all));
    f->by_local = malloc(sizeof(MPI_Win) * (size_t)f->nwins);
    rc = MPI_ERR_NO_MEM;
    if (!f->by_local)
        goto fn_exit;
    for (int i = 0; i < f->nwins; i++)
        f->by_local[i] = MPI_WIN_NULL;
    /* A progress process exposes its host's memory; a member nothing. */
    void *exposed = member ? NULL : f->host_base;
    MPI_Aint length = member ? 0 : f->host_length;
    for (int i = 0; i < f->nwins; i++)
        TDM_CALL_MPI(rc,
                     PMPI_Win_create(exposed, length, 1, MPI_INFO_NULL, f->all, &f->by_local[i]));
    TDM_CALL_MPI(rc, PMPI_Win_create(exposed, length, 1, MPI_INFO_NULL, f->all, &f->active));
    /* Locked by everyone throughout: the members for their fence and
       post/start/complete/wait epochs, the progress processes for the
       operations handed over to other hosts (ghost_offload_across), whose
       errors come back to the origin instead of ending the job. */
    if (!member)
        TDM_CALL_MPI(rc, PMPI_Win_set_errhandler(f->active, MPI_ERRORS_RETURN));
    TDM_CALL_MPI(rc, PMPI_Win_lock_all(MPI_MODE_NOCHECK, f->active));
fn_exit:
    if (job_group != MPI_GROUP_NULL)
        PMPI_Group_free(&job_group);
    if (all_group != MPI_GROUP_NULL)
        PMPI_Group_free(&all_group);
    if (host_group != MPI_GROUP_NULL)
        PMPI_Group_free(&host_group);
    free(host_in_all);
    free(host_ranks);
    free(order);
    return rc;
}

/* Collective over the frame, in the order frame_make made it. */
static void frame_free(struct frame *f)
{
    if (f->active != MPI_WIN_NULL)
        PMPI_Win_unlock_all(f->active);
    for (int i = 0; f->by_local && i < f->nwins; i++)
        if (f->by_local[i] != MPI_WIN_NULL)
            PMPI_Win_free(&f->by_local[i]);
    free(f->by_local);
    f->by_local = NULL;
    if (f->active != MPI_WIN_NULL)
        PMPI_Win_free(&f->active);
    if (f->shared != MPI_WIN_NULL)
        PMPI_Win_free(&f->shared);
    if (f->host != MPI_COMM_NULL)
        PMPI_Comm_free(&f->host);
    if (f->all != MPI_COMM_NULL)
        PMPI_Comm_free(&f->all);
}

/* --- The progress processes ---------------------------------------------- */

struct ghost_window {
    struct ghost_window *next;
    int id, sender;
    struct frame frame;
};

static struct ghost_window *ghost_windows;
static pthread_mutex_t ghost_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int ghost_served; /* windows being served */
static atomic_int ghost_busy;   /* commands being carried out on threads of their own */

/* The window of an id and first rank, once it exists: a command or an
   operation may come while another thread still makes it (a window's ranks
   may return from MPI_Win_allocate before its progress processes do). */
static struct ghost_window *ghost_find(long id, long sender, int take)
{
    for (;;) {
        pthread_mutex_lock(&ghost_lock);
        struct ghost_window **at = &ghost_windows;
        while (*at && ((*at)->id != id || (*at)->sender != sender))
            at = &(*at)->next;
        struct ghost_window *w = *at;
        if (w && take)
            *at = w->next;
        pthread_mutex_unlock(&ghost_lock);
        if (w || atomic_load(&ghost_busy) == 0)
            return w;
        struct timespec pause = {0, 10000};
        nanosleep(&pause, NULL);
    }
}

/* Copy 'left' bytes between 'here' (this process) and 'there' (process
   'pid'), towards 'pid' if 'to_there'. 0, or the errno of the refusal. */
static long copy_with(long pid, int to_there, char *here, char *there, long left)
{
    while (left > 0) {
        struct iovec local = {here, (size_t)left}, remote = {there, (size_t)left};
        ssize_t moved = to_there ? process_vm_writev((pid_t)pid, &local, 1, &remote, 1, 0)
                                 : process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
        if (moved <= 0)
            return moved < 0 ? errno : EIO;
        here += moved;
        there += moved;
        left -= moved;
    }
    return 0;
}

/* What ghost_offload_across moves at a time: the copy to or from the
   origin's memory of one piece overlaps the network's move of the next. */
enum { OFFLOAD_PIECE = 1 << 20 };

/* The progress process's staging memory, kept between operations (only
   its main loop carries them out): faulting 8 MiB of fresh pages in for
   each get took about as long as copying it. NULL where it cannot grow. */
static char *staging_for(long bytes)
{
    static char *staging;
    static long staged;
    if (bytes > staged) {
        free(staging);
        staging = malloc((size_t)bytes);
        staged = staging ? bytes : 0;
    }
    return staging;
}

/* A handed-over operation to a rank of another host: through the window
   the progress processes hold locked throughout ('active'), from or into
   a buffer of this process's, to that host's progress process, remotely
   complete before the answer. It bypasses the origin's lock of the target,
   which the origin holds (confirm()): the operation is the origin's, in its
   epoch. In pieces of OFFLOAD_PIECE bytes, each its own MPI_Rget or
   MPI_Rput: a get's first piece is copied to the origin while the next
   ones arrive, a put's next piece is read from the origin while the first
   ones leave (whole, an 8 MiB get took 2.1 times native's across two
   hosts of the 16-core machine, docs/PERFORMANCE.md). 0, or an errno. */
static long ghost_offload_across(struct ghost_window *w, const long *packet)
{
    int get = (int)packet[0], target = (int)packet[7] - 1;
    long bytes = packet[3], result = 0;
    char *staging = staging_for(bytes > 0 ? bytes : 1), *there = (char *)(intptr_t)packet[2];
    long pieces = bytes > 0 ? (bytes + OFFLOAD_PIECE - 1) / OFFLOAD_PIECE : 0;
    MPI_Request *requests = malloc(sizeof(MPI_Request) * (size_t)(pieces > 0 ? pieces : 1));
    if (!staging || !requests) {
        free(requests);
        return ENOMEM;
    }
    MPI_Win win = w->frame.active;
    long started = 0;
    for (; started < pieces; started++) {
        long at = started * OFFLOAD_PIECE;
        int length = (int)(bytes - at < OFFLOAD_PIECE ? bytes - at : OFFLOAD_PIECE);
        if (!get && (result = copy_with(packet[1], 0, staging + at, there + at, length)) != 0)
            break;
        int rc = get ? PMPI_Rget(staging + at, length, MPI_BYTE, target, packet[4] + at, length,
                                 MPI_BYTE, win, &requests[started])
                     : PMPI_Rput(staging + at, length, MPI_BYTE, target, packet[4] + at, length,
                                 MPI_BYTE, win, &requests[started]);
        if (rc != MPI_SUCCESS) {
            result = EIO;
            break;
        }
    }
    for (long i = 0; i < started; i++) {
        if (PMPI_Wait(&requests[i], MPI_STATUS_IGNORE) != MPI_SUCCESS && result == 0)
            result = EIO;
        if (get && result == 0) {
            long at = i * OFFLOAD_PIECE;
            result = copy_with(packet[1], 1, staging + at, there + at,
                               bytes - at < OFFLOAD_PIECE ? bytes - at : OFFLOAD_PIECE);
        }
    }
    /* a put's request completes locally: the target has it after a flush */
    if (!get && result == 0 && PMPI_Win_flush(target, win) != MPI_SUCCESS)
        result = EIO;
    free(requests);
    return result;
}

/* An operation an origin of this host handed over (offload()): copy
   between its memory and the host's, or carry it out to another host's
   progress process, and answer. */
static void ghost_offload(MPI_Comm job, int origin)
{
    long packet[PACKET], answer[3];
    PMPI_Recv(packet, PACKET, MPI_LONG, origin, TAG_OFFLOAD, job, MPI_STATUS_IGNORE);
    struct ghost_window *w = ghost_find(packet[5], packet[6], 0);
    long result = EINVAL;
    if (w && packet[4] >= 0 && packet[3] >= 0 && packet[7] > 0)
        result = ghost_offload_across(w, packet);
    else if (w && packet[4] >= 0 && packet[3] >= 0 && packet[4] + packet[3] <= w->frame.host_length)
        result = copy_with(packet[1], (int)packet[0], w->frame.host_base + packet[4],
                           (char *)(intptr_t)packet[2], packet[3]);
    answer[0] = packet[5];
    answer[1] = packet[6];
    answer[2] = result;
    PMPI_Send(answer, 3, MPI_LONG, origin, TAG_ANSWER, job);
}

/* Carry out a command (a window of the progress processes made or freed). */
static void ghost_execute(MPI_Comm job, const int *command)
{
    int n = command[3];
    if (command[0] == COMMAND_CREATE) {
        struct ghost_window *w = calloc(1, sizeof *w);
        int *ghosts = NULL;
        int nghosts = w ? ghosts_of(command + HEAD, n, &ghosts) : -1;
        if (nghosts < 0 || frame_make(&w->frame, command + HEAD, n, ghosts, nghosts, command[2], 0,
                                      NULL, NULL) != MPI_SUCCESS) {
            tdm_log_error("progress process: cannot serve a window of %d ranks", n);
            PMPI_Abort(job, 1);
        }
        free(ghosts);
        w->id = command[1];
        w->sender = command[4];
        pthread_mutex_lock(&ghost_lock);
        w->next = ghost_windows;
        ghost_windows = w;
        pthread_mutex_unlock(&ghost_lock);
        atomic_fetch_add(&ghost_served, 1);
    } else if (command[0] == COMMAND_FREE) {
        struct ghost_window *w = ghost_find(command[1], command[4], 1);
        if (w) {
            frame_free(&w->frame);
            free(w);
            atomic_fetch_sub(&ghost_served, 1);
        }
    }
}

struct ghost_job {
    MPI_Comm job;
    int *command;
};

static void *ghost_thread(void *arg)
{
    struct ghost_job *task = arg;
    ghost_execute(task->job, task->command);
    free(task->command);
    free(task);
    atomic_fetch_sub(&ghost_busy, 1);
    return NULL;
}

/* With MPI_THREAD_MULTIPLE, each command on a thread of its own: a window
   made on one communicator waits for its ranks while another, made at once
   on an overlapping one, goes on (its ranks may make that one first). */
static int ghost_threads;

static void ghost_start(MPI_Comm job, int *command)
{
    struct ghost_job *task = ghost_threads ? malloc(sizeof *task) : NULL;
    pthread_t thread;
    pthread_attr_t attr;
    if (task) {
        task->job = job;
        task->command = command;
        atomic_fetch_add(&ghost_busy, 1);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int failed = pthread_create(&thread, &attr, ghost_thread, task);
        pthread_attr_destroy(&attr);
        if (!failed)
            return;
        atomic_fetch_sub(&ghost_busy, 1);
        free(task);
    }
    ghost_execute(job, command);
    free(command);
}

/* A command that came (from a window's first rank to the sequencer, or from
   the sequencer): the sequencer passes it on to the other progress
   processes of the window, then each carries out its own. */
static void ghost_command(MPI_Comm job, const MPI_Status *status)
{
    int count, me;
    PMPI_Get_count(status, MPI_INT, &count);
    PMPI_Comm_rank(job, &me);
    int *command = malloc(sizeof(int) * (size_t)(count > HEAD ? count : HEAD));
    if (!command) {
        tdm_log_error("progress process: out of memory for a command of %d ints", count);
        PMPI_Abort(job, 1);
    }
    PMPI_Recv(command, count, MPI_INT, status->MPI_SOURCE, status->MPI_TAG, job, MPI_STATUS_IGNORE);
    int involved = status->MPI_TAG == TAG_SEQUENCED;
    if (status->MPI_TAG == TAG_COMMAND) { /* this is the sequencer */
        int *ghosts = NULL, nghosts = ghosts_of(command + HEAD, command[3], &ghosts);
        if (nghosts < 0) {
            tdm_log_error("progress process: out of memory for a command of %d ints", count);
            PMPI_Abort(job, 1);
        }
        for (int g = 0; g < nghosts; g++) {
            if (ghosts[g] == me)
                involved = 1;
            else
                PMPI_Send(command, count, MPI_INT, ghosts[g], TAG_SEQUENCED, job);
        }
        free(ghosts);
    }
    if (involved)
        ghost_start(job, command);
    else
        free(command);
}

/* More processes on this host than CPUs this process may run on: a
   progress process then naps between polls instead of taking a core from
   the ranks. */
static int crowded(void)
{
    int job_size, here = 0, rank;
    cpu_set_t cpus;
    PMPI_Comm_size(tdm_world_job(), &job_size);
    PMPI_Comm_rank(tdm_world_job(), &rank);
    for (int j = 0; j < job_size; j++)
        here += tdm_world_host_of(j) == tdm_world_host_of(rank);
    if (sched_getaffinity(0, sizeof cpus, &cpus) != 0)
        return 1;
    return here > CPU_COUNT(&cpus);
}

void tdm_served_ghost_run(void)
{
    MPI_Comm job = tdm_world_job();
    MPI_Request end;
    int done = 0, nap = crowded(), level = MPI_THREAD_SINGLE;
    long pause_ns = 50000;
    PMPI_Query_thread(&level);
    ghost_threads = level == MPI_THREAD_MULTIPLE;
    PMPI_Ibarrier(job, &end);
    while (!done) {
        int flag;
        MPI_Status status;
        PMPI_Iprobe(MPI_ANY_SOURCE, TAG_OFFLOAD, job, &flag, &status);
        if (flag) {
            ghost_offload(job, status.MPI_SOURCE);
            continue;
        }
        PMPI_Iprobe(MPI_ANY_SOURCE, TAG_COMMAND, job, &flag, &status);
        if (!flag)
            PMPI_Iprobe(MPI_ANY_SOURCE, TAG_SEQUENCED, job, &flag, &status);
        if (flag) {
            ghost_command(job, &status);
            continue;
        }
        PMPI_Test(&end, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        if (atomic_load_explicit(&ghost_served, memory_order_relaxed) > 0) {
            /* serving: every poll, or on a crowded host a short nap */
            if (!nap)
                continue;
            pause_ns = 20000;
        } else {
            /* nothing to serve but the end */
            pause_ns = pause_ns * 2 > 1000000 ? 1000000 : pause_ns * 2;
        }
        struct timespec pause = {0, pause_ns};
        nanosleep(&pause, NULL);
    }
    while (atomic_load(&ghost_busy) > 0) {
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
    tdm_world_ghost_exit();
}

/* --- The program's ranks ------------------------------------------------- */

static void say_once(int *said, const char *what)
{
    if (!*said && TDM_CONFIG_NUMBER(VERBOSE) >= 1 && tdm_world_rank == 0)
        tdm_log_info("%s", what);
    *said = 1;
}

/* The job's first progress process: it orders the commands (HEAD). */
static int sequencer(void)
{
    int job_size, j = 0;
    PMPI_Comm_size(tdm_world_job(), &job_size);
    while (j < job_size - 1 && !tdm_world_is_ghost(j))
        j++;
    return j;
}

int tdm_served_allocate(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                        void *baseptr, MPI_Win *win, int *rc)
{
    static int said_served, said_not;
    const char *why = tdm_impl_windows_unserved();
    if (why) {
        say_once(&said_not, why);
        return 0;
    }
    if (disp_unit <= 0 || disp_unit > INT_MAX || size < 0)
        return 0; /* the MPI library's error, on its own call */
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return 0;
    say_once(&said_served, "MPI_Win_allocate: the progress processes serve the window");
    struct served *s = calloc(1, sizeof *s);
    int *members = NULL, *comm_ranks = NULL;
    MPI_Group comm_group = MPI_GROUP_NULL, job_group = MPI_GROUP_NULL;
    void *base = NULL;
    struct target me = {0};
    *rc = MPI_ERR_NO_MEM;
    if (!s)
        goto fn_exit;
    s->comm = MPI_COMM_NULL;
    s->user = MPI_WIN_NULL;
    TDM_CALL_MPI(*rc, PMPI_Comm_dup(comm, &s->comm));
    TDM_CALL_MPI(*rc, PMPI_Comm_size(s->comm, &s->size));
    TDM_CALL_MPI(*rc, PMPI_Comm_rank(s->comm, &s->rank));
    members = malloc(sizeof(int) * (size_t)s->size);
    comm_ranks = malloc(sizeof(int) * (size_t)s->size);
    s->targets = malloc(sizeof(struct target) * (size_t)s->size);
    s->locked = calloc((size_t)s->size, 1);
    s->started = malloc(sizeof(int) * (size_t)s->size);
    s->posted = malloc(sizeof(int) * (size_t)s->size);
    s->confirmed = calloc((size_t)s->size, 1);
    *rc = MPI_ERR_NO_MEM;
    if (!members || !comm_ranks || !s->targets || !s->locked || !s->started || !s->posted ||
        !s->confirmed)
        goto fn_exit;
    for (int i = 0; i < s->size; i++)
        comm_ranks[i] = i;
    TDM_CALL_MPI(*rc, PMPI_Comm_group(s->comm, &comm_group));
    TDM_CALL_MPI(*rc, PMPI_Comm_group(tdm_world_job(), &job_group));
    TDM_CALL_MPI(*rc,
                 PMPI_Group_translate_ranks(comm_group, s->size, comm_ranks, job_group, members));
    s->nghosts = ghosts_of(members, s->size, &s->ghosts);
    *rc = MPI_ERR_NO_MEM;
    if (s->nghosts < 0)
        goto fn_exit;
    /* The window's id and the tag of its communicator come from its first
       rank, which tells the progress processes. */
    int head[2] = {0, 0};
    if (s->rank == 0) {
        head[0] = next_id++;
        head[1] = (int)(((unsigned)members[0] * 4099u + (unsigned)head[0]) % 30000u);
    }
    TDM_CALL_MPI(*rc, PMPI_Bcast(head, 2, MPI_INT, 0, s->comm));
    s->id = head[0];
    if (s->rank == 0) {
        int *command = malloc(sizeof(int) * (size_t)(HEAD + s->size));
        *rc = MPI_ERR_NO_MEM;
        if (!command)
            goto fn_exit;
        command[0] = COMMAND_CREATE;
        command[1] = s->id;
        command[2] = head[1];
        command[3] = s->size;
        command[4] = members[0];
        memcpy(command + HEAD, members, sizeof(int) * (size_t)s->size);
        PMPI_Send(command, HEAD + s->size, MPI_INT, sequencer(), TAG_COMMAND, tdm_world_job());
        free(command);
    }
    /* each part a multiple of 64 bytes: the next one starts aligned */
    MPI_Aint rounded = (size + 63) / 64 * 64;
    TDM_CALL_MPI(*rc, frame_make(&s->frame, members, s->size, s->ghosts, s->nghosts, head[1],
                                 rounded, &base, &me));
    me.disp_unit = disp_unit;
    me.length = size;
    me.host = s->host = tdm_world_host_of(members[s->rank]);
    s->root = members[0];
    s->own_ghost = s->ghosts[me.ghost - s->size];
    /* its progress process may copy to and from this process's memory
       (offload(); where Yama restricts ptrace to descendants) */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    MPI_Datatype entry;
    TDM_CALL_MPI(*rc, PMPI_Type_contiguous((int)sizeof(struct target), MPI_BYTE, &entry));
    TDM_CALL_MPI(*rc, PMPI_Type_commit(&entry));
    *rc = PMPI_Allgather(&me, 1, entry, s->targets, 1, entry, s->comm);
    PMPI_Type_free(&entry);
    if (*rc != MPI_SUCCESS)
        goto fn_exit;
    TDM_CALL_MPI(*rc, PMPI_Win_create(base, size, (int)disp_unit, info, comm, &s->user));
    *(void **)baseptr = base;
    *win = s->user;
    pthread_mutex_lock(&lock);
    s->next = windows;
    windows = s;
    pthread_mutex_unlock(&lock);
    atomic_fetch_add_explicit(&tdm_served_windows, 1, memory_order_relaxed);
fn_exit:
    if (comm_group != MPI_GROUP_NULL)
        PMPI_Group_free(&comm_group);
    if (job_group != MPI_GROUP_NULL)
        PMPI_Group_free(&job_group);
    if (s && !s->members)
        s->members = members;
    else
        free(members);
    free(comm_ranks);
    if (*rc != MPI_SUCCESS && s) {
        /* A failure half-way leaves the progress processes waiting in a
           collective call: the job cannot go on. */
        tdm_log_error("MPI_Win_allocate for the progress processes failed (MPI error %d)", *rc);
        PMPI_Abort(tdm_world_job(), 1);
    }
    return 1;
}

static void served_release(struct served *s)
{
    free(s->members);
    free(s->confirmed);
    free(s->handed);
    free(s->targets);
    free(s->locked);
    free(s->started);
    free(s->posted);
    free(s->ghosts);
    free(s);
}

int tdm_served_free(MPI_Win *win, int *rc)
{
    struct served *s = find(*win);
    if (!s)
        return 0;
    settle(s); /* before it leaves the list the answers are looked up in */
    pthread_mutex_lock(&lock);
    struct served **at = &windows;
    while (*at != s)
        at = &(*at)->next;
    *at = s->next;
    pthread_mutex_unlock(&lock);
    atomic_fetch_sub_explicit(&tdm_served_windows, 1, memory_order_relaxed);
    if (s->rank == 0) {
        /* the job ranks of the communicator: its progress processes' */
        int *command = malloc(sizeof(int) * (size_t)(HEAD + s->size));
        if (!command) {
            tdm_log_error("MPI_Win_free: out of memory for the progress processes' command");
            PMPI_Abort(tdm_world_job(), 1);
        }
        command[0] = COMMAND_FREE;
        command[1] = s->id;
        command[2] = 0;
        command[3] = s->size;
        command[4] = s->root;
        memcpy(command + HEAD, s->members, sizeof(int) * (size_t)s->size);
        PMPI_Send(command, HEAD + s->size, MPI_INT, sequencer(), TAG_COMMAND, tdm_world_job());
        free(command);
    }
    *rc = PMPI_Win_free(&s->user);
    frame_free(&s->frame);
    PMPI_Comm_free(&s->comm);
    served_release(s);
    *win = MPI_WIN_NULL;
    return 1;
}

int tdm_served_flavor(MPI_Win win, void *value)
{
    static int allocate = MPI_WIN_FLAVOR_ALLOCATE;
    if (!find(win))
        return 0;
    *(int **)value = &allocate;
    return 1;
}

/* The window of the MPI library's an operation to 'rank' goes through. */
static MPI_Win window_to(const struct served *s, int rank)
{
    if (s->lock_all || s->locked[rank])
        return s->frame.by_local[s->targets[rank].local];
    return s->frame.active;
}

void tdm_served_route_slow(MPI_Win *win, int *rank, MPI_Aint *disp)
{
    struct served *s = find(*win);
    if (!s)
        return;
    if (*rank == MPI_PROC_NULL) {
        *win = s->frame.active; /* nothing to do, in a window always in an epoch */
        return;
    }
    if (*rank < 0 || *rank >= s->size)
        return;
    const struct target *t = &s->targets[*rank];
    *win = window_to(s, *rank);
    *disp = t->offset + *disp * t->disp_unit;
    *rank = t->ghost;
}

/* --- Origin offload --------------------------------------------------------- */

/* The bytes of 'count' elements of 'datatype' if they lie contiguously from
   the buffer's start, else -1. */
static long long contiguous_bytes(MPI_Count count, MPI_Datatype datatype)
{
    int size;
    MPI_Aint lb, extent, true_lb, true_extent;
    if (PMPI_Type_size(datatype, &size) != MPI_SUCCESS || size <= 0 ||
        PMPI_Type_get_extent(datatype, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(datatype, &true_lb, &true_extent) != MPI_SUCCESS)
        return -1;
    if (lb != 0 || true_lb != 0 || extent != size || true_extent != size || count < 0)
        return -1;
    return (long long)count * size;
}

/* An operation of this rank's own may be copied by another process only
   once the epoch's locks are held (MPICH may take a lock at the first
   flush): flush once per lock. */
static int confirm(struct served *s, int rank)
{
    int rc = MPI_SUCCESS;
    if (s->lock_all && !s->all_confirmed) {
        for (int i = 0; i < s->frame.nwins && rc == MPI_SUCCESS; i++)
            rc = PMPI_Win_flush_all(s->frame.by_local[i]);
        s->all_confirmed = rc == MPI_SUCCESS;
    } else if (!s->lock_all && s->locked[rank] && !s->confirmed[rank]) {
        const struct target *t = &s->targets[rank];
        rc = PMPI_Win_flush(t->ghost, s->frame.by_local[t->local]);
        s->confirmed[rank] = rc == MPI_SUCCESS;
    }
    return rc == MPI_SUCCESS;
}

/* The generalized request of a request-based operation handed over: the
   MPI library calls these from the application's waits and tests on it. */
static int request_query(void *state, MPI_Status *status)
{
    (void)state;
    PMPI_Status_set_elements_x(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int request_free(void *state)
{
    struct handed_request *r = state;
    r->released = 1;
    if (r->done)
        free(r);
    return MPI_SUCCESS;
}

static int request_cancel(void *state, int complete)
{
    (void)state, (void)complete;
    return MPI_SUCCESS; /* an operation handed over runs to its end */
}

/* Take the answers that have come, until 'until''s (NULL: all of them);
   the answers' lock held. Returns the number taken, or -1 on an error. */
static int take_arrived(const struct handed_request *until)
{
    struct handed_request *completed = NULL;
    int taken = 0, flag = 1;
    while (completed != until || !until) {
        if (PMPI_Iprobe(MPI_ANY_SOURCE, TAG_ANSWER, tdm_world_job(), &flag, MPI_STATUS_IGNORE) !=
            MPI_SUCCESS)
            return -1;
        if (!flag)
            break;
        if (take_answer(&completed) != MPI_SUCCESS)
            return -1;
        taken++;
    }
    return taken;
}

/* MPICH's poll of one request, from the program's tests on it. */
static int request_poll(void *state, MPI_Status *status)
{
    struct handed_request *r = state;
    (void)status;
    if (r->done || pthread_mutex_trylock(&answers) != 0)
        return MPI_SUCCESS;
    int taken = r->done ? 0 : take_arrived(r);
    pthread_mutex_unlock(&answers);
    return taken < 0 ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* Take the answers, waiting for them, until each of these requests' has come
   ('timeout' unused: an answer always comes). */
static int request_wait(int count, void **states, double timeout, MPI_Status *status)
{
    (void)timeout, (void)status;
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&answers);
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++) {
        struct handed_request *r = states[i], *completed = NULL;
        while (!r->done && completed != r && rc == MPI_SUCCESS)
            rc = take_answer(&completed);
    }
    pthread_mutex_unlock(&answers);
    return rc;
}

/* Open MPI's progress loop, from every wait and test of any thread (and
   Tandem's thread on UCX): the answers that have come, while requests
   handed over wait for theirs. A call from within itself (its probe runs
   the loop again) or beside another thread's finds the lock taken. */
static int poll_answers(void)
{
    if (atomic_load_explicit(&requests_due, memory_order_acquire) == 0 ||
        pthread_mutex_trylock(&answers) != 0)
        return 0;
    int taken = take_arrived(NULL);
    pthread_mutex_unlock(&answers);
    return taken > 0 ? taken : 0;
}

static int hooked = -1;

static void hook_answers(void)
{
    hooked = tdm_impl_progress_hook(poll_answers) == 0;
}

/* The request of an operation handed over: polled by the MPI library
   (MPICH), or completed from its progress loop (Open MPI). */
static int start_request(struct handed_request *r)
{
    int rc = tdm_impl_grequest_polled(request_query, request_free, request_cancel, request_poll,
                                      request_wait, r, &r->request);
    if (rc != MPI_ERR_UNSUPPORTED_OPERATION)
        return rc;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, hook_answers);
    if (!hooked)
        return rc;
    return PMPI_Grequest_start(request_query, request_free, request_cancel, r, &r->request);
}

/* A request never given to the program: completed and freed. */
static void drop_request(struct handed_request *r)
{
    if (!r)
        return;
    MPI_Request unused = r->request;
    r->done = 1;
    PMPI_Grequest_complete(unused);
    PMPI_Request_free(&unused);
}

int tdm_served_offload_slow(MPI_Win win, int get, void *origin, MPI_Count origin_count,
                            MPI_Datatype origin_datatype, int rank, MPI_Aint disp,
                            MPI_Count target_count, MPI_Datatype target_datatype,
                            MPI_Request *request)
{
    long long limit = TDM_CONFIG_NUMBER(RMA_OFFLOAD_LIMIT);
    struct served *s = limit > 0 ? find(win) : NULL;
    if (!s || rank < 0 || rank >= s->size)
        return 0;
    const struct target *t = &s->targets[rank];
    long long bytes = contiguous_bytes(origin_count, origin_datatype);
    int across = t->host != s->host;
    /* Out of the target's part: the MPI library's error, on its own call. */
    if (bytes < limit || bytes != contiguous_bytes(target_count, target_datatype) || disp < 0 ||
        disp * t->disp_unit + bytes > t->length || (across && bytes > INT_MAX) || !confirm(s, rank))
        return 0;
    MPI_Aint offset = t->offset + disp * t->disp_unit;
    struct handed_request *r = NULL;
    if (request) {
        r = calloc(1, sizeof *r);
        if (!r || start_request(r) != MPI_SUCCESS) {
            free(r);
            return 0;
        }
    }
    pthread_mutex_lock(&answers);
    if (s->nhanded == s->handed_room) {
        int room = s->handed_room ? 2 * s->handed_room : 16;
        struct handed *grown = malloc(sizeof *grown * (size_t)room);
        if (!grown) {
            pthread_mutex_unlock(&answers);
            drop_request(r);
            return 0;
        }
        for (int i = 0; i < s->nhanded; i++)
            grown[i] = s->handed[(s->first_handed + i) % s->handed_room];
        free(s->handed);
        s->handed = grown;
        s->handed_room = room;
        s->first_handed = 0;
    }
    struct handed *h = &s->handed[(s->first_handed + s->nhanded) % s->handed_room];
    h->request = r;
    long packet[PACKET] = {
        get,   (long)getpid(), (long)(intptr_t)origin,    (long)bytes, (long)offset,
        s->id, s->root,        across ? t->ghost + 1 : 0, rank};
    memcpy(h->packet, packet, sizeof packet);
    if (PMPI_Send(packet, PACKET, MPI_LONG, s->own_ghost, TAG_OFFLOAD, tdm_world_job()) !=
        MPI_SUCCESS) {
        pthread_mutex_unlock(&answers);
        drop_request(r);
        return 0;
    }
    if (r) {
        *request = r->request;
        atomic_fetch_add_explicit(&requests_due, 1, memory_order_release);
    }
    s->nhanded++;
    pthread_mutex_unlock(&answers);
    atomic_fetch_add_explicit(&offloaded, 1, memory_order_relaxed);
    if (across)
        atomic_fetch_add_explicit(&offloaded_across, 1, memory_order_relaxed);
    return 1;
}

long tdm_served_offloaded(long *across)
{
    *across = atomic_load_explicit(&offloaded_across, memory_order_relaxed);
    return atomic_load_explicit(&offloaded, memory_order_relaxed);
}

/* One answer of a progress process to this rank, for whichever window: the
   oldest operation of that window is done, or carried out here if it
   refused; its request, if it has one, completed ('*completed'). The
   answers' lock held. */
static int take_answer(struct handed_request **completed)
{
    *completed = NULL;
    long answer[3];
    int rc = PMPI_Recv(answer, 3, MPI_LONG, MPI_ANY_SOURCE, TAG_ANSWER, tdm_world_job(),
                       MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&lock);
    struct served *s = windows;
    while (s && (s->id != answer[0] || s->root != answer[1] || s->nhanded == 0))
        s = s->next;
    pthread_mutex_unlock(&lock);
    if (!s)
        return MPI_ERR_INTERN;
    const long *packet = s->handed[s->first_handed].packet;
    struct handed_request *request = s->handed[s->first_handed].request;
    if (answer[2] != 0) {
        static int said;
        if (!said && TDM_CONFIG_NUMBER(VERBOSE) >= 1)
            tdm_log_info("origin offload: the progress process could not reach this process's "
                         "memory (%s): the origin does the operation itself",
                         strerror((int)answer[2]));
        said = 1;
        char *there = s->frame.host_base + packet[4], *here = (char *)(intptr_t)packet[2];
        if (packet[7] > 0) { /* to another host: through the MPI library */
            MPI_Win w = window_to(s, (int)packet[8]);
            int target = (int)packet[7] - 1, bytes = (int)packet[3];
            rc = packet[0] ? PMPI_Get(here, bytes, MPI_BYTE, target, packet[4], bytes, MPI_BYTE, w)
                           : PMPI_Put(here, bytes, MPI_BYTE, target, packet[4], bytes, MPI_BYTE, w);
            if (rc == MPI_SUCCESS && request) /* its request completes now, not at a sync */
                rc = PMPI_Win_flush(target, w);
        } else if (packet[0])
            memcpy(here, there, (size_t)packet[3]);
        else
            memcpy(there, here, (size_t)packet[3]);
    }
    atomic_thread_fence(memory_order_seq_cst);
    s->first_handed = (s->first_handed + 1) % s->handed_room;
    s->nhanded--;
    if (request) {
        /* A request the program freed before its end is freed here: the
           MPI library called request_free already. */
        int released = request->released;
        request->done = 1;
        atomic_fetch_sub_explicit(&requests_due, 1, memory_order_relaxed);
        PMPI_Grequest_complete(request->request);
        *completed = request;
        if (released)
            free(request);
    }
    return rc;
}

/* Before a synchronisation of 's' returns: every operation handed over is
   done. */
static int settle(struct served *s)
{
    int rc = MPI_SUCCESS;
    struct handed_request *completed;
    pthread_mutex_lock(&answers);
    while (s->nhanded > 0 && rc == MPI_SUCCESS)
        rc = take_answer(&completed);
    pthread_mutex_unlock(&answers);
    return rc;
}

/* --- Synchronisation ------------------------------------------------------ */

/* Whether a rank named by a synchronisation call is one of 's': if not
   (MPI_PROC_NULL, or a rank out of range, which the MPI library reports on
   the program's window), the MPI library sees the call. */
static int target_of(const struct served *s, int rank)
{
    return rank >= 0 && rank < s->size;
}

int tdm_hook_Win_fence(int lang, int assertion, MPI_Win win)
{
    (void)lang;
    struct served *s = find(win);
    if (!s)
        return PMPI_Win_fence(assertion, win);
    int rc = settle(s);
    if (rc == MPI_SUCCESS && !(assertion & MPI_MODE_NOPRECEDE))
        rc = PMPI_Win_flush_all(s->frame.active);
    atomic_thread_fence(memory_order_seq_cst); /* the rank's own stores, before the others' */
    if (rc == MPI_SUCCESS)
        rc = PMPI_Barrier(s->comm);
    atomic_thread_fence(memory_order_seq_cst); /* the others' operations, before its loads */
    return rc;
}

int tdm_hook_Win_lock(int lang, int lock_type, int rank, int assertion, MPI_Win win)
{
    (void)lang;
    struct served *s = find(win);
    if (!s || !target_of(s, rank))
        return PMPI_Win_lock(lock_type, rank, assertion, win);
    const struct target *t = &s->targets[rank];
    int rc = PMPI_Win_lock(lock_type, t->ghost, assertion, s->frame.by_local[t->local]);
    if (rc == MPI_SUCCESS)
        s->locked[rank] = 1;
    s->confirmed[rank] = 0;
    return rc;
}

int tdm_hook_Win_unlock(int lang, int rank, MPI_Win win)
{
    (void)lang;
    struct served *s = find(win);
    if (!s || !target_of(s, rank))
        return PMPI_Win_unlock(rank, win);
    const struct target *t = &s->targets[rank];
    int rc = settle(s);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_unlock(t->ghost, s->frame.by_local[t->local]);
    if (rc == MPI_SUCCESS)
        s->locked[rank] = 0;
    atomic_thread_fence(memory_order_seq_cst);
    return rc;
}

int tdm_hook_Win_lock_all(int lang, int assertion, MPI_Win win)
{
    (void)lang;
    struct served *s = find(win);
    if (!s)
        return PMPI_Win_lock_all(assertion, win);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < s->frame.nwins && rc == MPI_SUCCESS; i++)
        rc = PMPI_Win_lock_all(assertion, s->frame.by_local[i]);
    if (rc == MPI_SUCCESS)
        s->lock_all = 1;
    s->all_confirmed = 0;
    return rc;
}

int tdm_hook_Win_unlock_all(int lang, MPI_Win win)
{
    (void)lang;
    struct served *s = find(win);
    if (!s)
        return PMPI_Win_unlock_all(win);
    int rc = settle(s);
    for (int i = 0; i < s->frame.nwins; i++) {
        int one = PMPI_Win_unlock_all(s->frame.by_local[i]);
        if (rc == MPI_SUCCESS)
            rc = one;
    }
    s->lock_all = 0;
    atomic_thread_fence(memory_order_seq_cst);
    return rc;
}

/* flush or flush_local of one rank, or of every rank ('rank' -1). */
static int flush(struct served *s, int rank, int local_only)
{
    int rc = settle(s);
    if (rc != MPI_SUCCESS)
        return rc;
    if (rank >= 0) {
        const struct target *t = &s->targets[rank];
        MPI_Win w = window_to(s, rank);
        return local_only ? PMPI_Win_flush_local(t->ghost, w) : PMPI_Win_flush(t->ghost, w);
    }
    if (s->lock_all) {
        for (int i = 0; i < s->frame.nwins && rc == MPI_SUCCESS; i++)
            rc = local_only ? PMPI_Win_flush_local_all(s->frame.by_local[i])
                            : PMPI_Win_flush_all(s->frame.by_local[i]);
        return rc;
    }
    for (int r = 0; r < s->size && rc == MPI_SUCCESS; r++)
        if (s->locked[r])
            rc = flush(s, r, local_only);
    return rc;
}

int tdm_hook_Win_flush(int lang, int rank, MPI_Win win)
{
    (void)lang;
    struct served *s = find(win);
    if (!s || !target_of(s, rank))
        return PMPI_Win_flush(rank, win);
    return flush(s, rank, 0);
}

int tdm_hook_Win_flush_local(int lang, int rank, MPI_Win win)
{
    (void)lang;
    struct served *s = find(win);
    if (!s || !target_of(s, rank))
        return PMPI_Win_flush_local(rank, win);
    return flush(s, rank, 1);
}

int tdm_hook_Win_flush_all(int lang, MPI_Win win)
{
    (void)lang;
    struct served *s = find(win);
    return s ? flush(s, -1, 0) : PMPI_Win_flush_all(win);
}

int tdm_hook_Win_flush_local_all(int lang, MPI_Win win)
{
    (void)lang;
    struct served *s = find(win);
    return s ? flush(s, -1, 1) : PMPI_Win_flush_local_all(win);
}

/* The memory is the host's, as with a shared window: a full fence. */
int tdm_hook_Win_sync(int lang, MPI_Win win)
{
    (void)lang;
    if (!find(win))
        return PMPI_Win_sync(win);
    atomic_thread_fence(memory_order_seq_cst);
    return MPI_SUCCESS;
}

/* The ranks of 'group' as ranks of the window's communicator, in '*ranks'. */
static int ranks_of(const struct served *s, MPI_Group group, int *ranks, int *count)
{
    int rc, size;
    MPI_Group window_group = MPI_GROUP_NULL;
    TDM_CALL_MPI(rc, PMPI_Group_size(group, &size));
    rc = MPI_ERR_GROUP;
    if (size > s->size)
        goto fn_exit;
    for (int i = 0; i < size; i++)
        ranks[i] = i;
    TDM_CALL_MPI(rc, PMPI_Comm_group(s->comm, &window_group));
    int *in_group = malloc(sizeof(int) * (size_t)(size > 0 ? size : 1));
    rc = MPI_ERR_NO_MEM;
    if (!in_group)
        goto fn_exit;
    memcpy(in_group, ranks, sizeof(int) * (size_t)size);
    rc = PMPI_Group_translate_ranks(group, size, in_group, window_group, ranks);
    free(in_group);
    for (int i = 0; rc == MPI_SUCCESS && i < size; i++)
        if (ranks[i] == MPI_UNDEFINED)
            rc = MPI_ERR_GROUP;
    *count = size;
fn_exit:
    if (window_group != MPI_GROUP_NULL)
        PMPI_Group_free(&window_group);
    return rc;
}

/* A notice of post/start/complete/wait: it must not wait for its receipt,
   which may be this rank's own later call. */
static int notify(const struct served *s, int rank, int tag)
{
    MPI_Request request;
    int rc = PMPI_Isend(NULL, 0, MPI_BYTE, rank, tag, s->comm, &request);
    return rc == MPI_SUCCESS ? PMPI_Request_free(&request) : rc;
}

int tdm_hook_Win_post(int lang, MPI_Group group, int assertion, MPI_Win win)
{
    (void)lang;
    struct served *s = find(win);
    if (!s)
        return PMPI_Win_post(group, assertion, win);
    int rc = ranks_of(s, group, s->posted, &s->nposted);
    atomic_thread_fence(memory_order_seq_cst); /* the rank's stores, before the origins' */
    for (int i = 0; i < s->nposted && rc == MPI_SUCCESS; i++)
        rc = notify(s, s->posted[i], TAG_POSTED);
    return rc;
}

int tdm_hook_Win_start(int lang, MPI_Group group, int assertion, MPI_Win win)
{
    (void)lang;
    struct served *s = find(win);
    if (!s)
        return PMPI_Win_start(group, assertion, win);
    int rc = ranks_of(s, group, s->started, &s->nstarted);
    for (int i = 0; i < s->nstarted && rc == MPI_SUCCESS; i++)
        rc = PMPI_Recv(NULL, 0, MPI_BYTE, s->started[i], TAG_POSTED, s->comm, MPI_STATUS_IGNORE);
    return rc;
}

int tdm_hook_Win_complete(int lang, MPI_Win win)
{
    (void)lang;
    struct served *s = find(win);
    if (!s)
        return PMPI_Win_complete(win);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < s->nstarted && rc == MPI_SUCCESS; i++)
        rc = flush(s, s->started[i], 0);
    for (int i = 0; i < s->nstarted && rc == MPI_SUCCESS; i++)
        rc = notify(s, s->started[i], TAG_DONE);
    s->nstarted = 0;
    return rc;
}

int tdm_hook_Win_wait(int lang, MPI_Win win)
{
    (void)lang;
    struct served *s = find(win);
    if (!s)
        return PMPI_Win_wait(win);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < s->nposted && rc == MPI_SUCCESS; i++)
        rc = PMPI_Recv(NULL, 0, MPI_BYTE, s->posted[i], TAG_DONE, s->comm, MPI_STATUS_IGNORE);
    s->nposted = 0;
    atomic_thread_fence(memory_order_seq_cst); /* the origins' operations, before its loads */
    return rc;
}

int tdm_hook_Win_test(int lang, MPI_Win win, int *flag)
{
    (void)lang;
    struct served *s = find(win);
    if (!s)
        return PMPI_Win_test(win, flag);
    /* take the notices that came; the epoch ends when none is due */
    int rc = MPI_SUCCESS, kept = 0;
    for (int i = 0; i < s->nposted && rc == MPI_SUCCESS; i++) {
        int came = 0;
        rc = PMPI_Iprobe(s->posted[i], TAG_DONE, s->comm, &came, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && came)
            rc = PMPI_Recv(NULL, 0, MPI_BYTE, s->posted[i], TAG_DONE, s->comm, MPI_STATUS_IGNORE);
        else
            s->posted[kept++] = s->posted[i];
    }
    s->nposted = kept;
    *flag = kept == 0;
    if (*flag)
        atomic_thread_fence(memory_order_seq_cst);
    return rc;
}

int tdm_hook_Win_get_attr(int lang, MPI_Win win, int keyval, void *value, int *flag)
{
    (void)lang;
    if (keyval == MPI_WIN_CREATE_FLAVOR && tdm_served_flavor(win, value)) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    return PMPI_Win_get_attr(win, keyval, value, flag);
}
