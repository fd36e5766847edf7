/*
 * Blocking point-to-point calls, and how they wait (TANDEM_WAIT).
 *
 * A rank blocked in MPI_Recv or MPI_Send spins inside the MPI library: its
 * core stays busy while the message crosses the network. On a node with no
 * spare core, that is the core another rank's progress thread needs while
 * that rank computes. A lending wait posts the nonblocking form of the call
 * and polls it, spinning for 50 us (SPIN_US) and then sleeping between
 * polls (1 us, doubling up to TDM_PAUSE_MAX_US), so the core is idle most
 * of the time the message takes. The call's meaning does not change: the
 * operation is posted when the application called, so MPI's ordering holds,
 * and its status and error are those of the nonblocking call, reported
 * through the communicator's error handler by the MPI library itself.
 *
 * Lending pays only when a thread of this node wants the core and the
 * waiter has nothing to do. A waiter that sleeps delays a transfer its own
 * CPU drives: the receiver's copy through shared memory between node mates,
 * or loopback TCP, where lending unconditionally cost 20-50% of the 4 MiB
 * ping-pong bandwidth (docs/PERFORMANCE.md). So auto lends in sends, and in
 * receives from peers not reached through the MPI library's shared memory,
 * and sleeps only while a progress thread of this node has work
 * (tdm_node_borrowers); lend always sleeps. While it lends, the waiter
 * publishes its CPU (tdm_node_lend), and such a thread moves there while its
 * own application computes.
 *
 * Without a progress thread (tdm_nap_init: TANDEM_WAIT=lend, or auto on a
 * host whose ranks outnumber its CPUs) the same waits, at any size, and
 * MPI_Wait, Waitall, Waitany and Waitsome (completion.c) always sleep
 * between their polls: there the CPU goes to the host's other ranks, which
 * compute or send what the waiter waits for. Application threads.
 */
#include <mpi.h>
#include <sched.h>
#include <sys/prctl.h>

#include "core/node.h"
#include "core/config.h"
#include "core/progress.h"
#include "core/runtime.h"
#include "impl/impl.h"
#include "monitor/monitor.h"
#include "p2p/blocking.h"
#include "wrappers/gen_hooks.h"

/* What the waits do; set in MPI_Init, cleared in MPI_Finalize. */
static struct {
    int mode;     /* TDM_LEND_* */
    int node_shm; /* node mates talk through the MPI library's shared memory */
    int naps;     /* no progress thread: every wait sleeps between its polls */
} lend;

enum {
    TDM_LEND_NEVER = 0,
    TDM_LEND_REMOTE = 1, /* peers not reached through shared memory */
    TDM_LEND_ALWAYS = 2
};

/* How long a lending wait polls without sleeping before its first sleep: a
   message that arrives meanwhile costs no wake-up. No other value was
   measured. */
enum { SPIN_US = 50 };

void tdm_lend_init(int thread_has_own_cpu)
{
    switch ((int)TDM_CONFIG_NUMBER(WAIT)) {
    case TDM_WAIT_LEND: lend.mode = TDM_LEND_ALWAYS; break;
    case TDM_WAIT_SPIN: lend.mode = TDM_LEND_NEVER; break;
    default:
        lend.mode = tdm_progress_strategy != TDM_PROGRESS_OFF && !thread_has_own_cpu
                        ? TDM_LEND_REMOTE
                        : TDM_LEND_NEVER;
    }
    lend.node_shm = lend.mode == TDM_LEND_REMOTE && tdm_impl_node_uses_shm();
}

void tdm_lend_stop(void)
{
    lend.mode = TDM_LEND_NEVER;
    lend.naps = 0;
}

void tdm_nap_init(void)
{
    lend.mode = TDM_LEND_ALWAYS;
    lend.node_shm = 0;
    lend.naps = 1;
}

int tdm_waits_nap(void)
{
    return lend.naps;
}

void tdm_nap_start(tdm_nap *nap)
{
    nap->spin_end = PMPI_Wtime() + SPIN_US * 1e-6;
    nap->pause = 0;
    nap->slack = -1;
}

void tdm_nap_take(tdm_nap *nap)
{
    if (nap->pause == 0) {
        if (PMPI_Wtime() < nap->spin_end)
            return;
        nap->slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
        nap->pause = 1;
    }
    tdm_pause_us(nap->pause);
    nap->pause = nap->pause * 2 > TDM_PAUSE_MAX_US ? TDM_PAUSE_MAX_US : nap->pause * 2;
}

void tdm_nap_end(tdm_nap *nap)
{
    if (nap->slack > 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long)nap->slack, 0, 0, 0);
}

const char *tdm_lend_scope(void)
{
    if (lend.naps)
        return NULL; /* no thread to lend to */
    return lend.mode == TDM_LEND_ALWAYS   ? "every peer"
           : lend.mode == TDM_LEND_REMOTE ? (lend.node_shm ? "sends to every peer, receives "
                                                             "from peers on other nodes"
                                                           : "every peer (the MPI library keeps "
                                                             "node mates off shared memory)")
                                          : NULL;
}

/* Whether 'peer' of 'comm' (a rank of its remote group for an
   inter-communicator) is reached through shared memory. */
static int through_shm(MPI_Comm comm, int peer)
{
    if (!lend.node_shm)
        return 0;
    if (peer == MPI_ANY_SOURCE)
        return 1; /* it may be a node mate */
    MPI_Group group, world_group;
    int inter = 0, world_rank = MPI_UNDEFINED;
    PMPI_Comm_test_inter(comm, &inter);
    if ((inter ? PMPI_Comm_remote_group(comm, &group) : PMPI_Comm_group(comm, &group)) !=
        MPI_SUCCESS)
        return 1;
    int group_size = 0;
    PMPI_Group_size(group, &group_size);
    if (peer >= 0 && peer < group_size) { /* else the MPI library's own call reports it */
        PMPI_Comm_group(tdm_world, &world_group);
        PMPI_Group_translate_ranks(group, 1, &peer, world_group, &world_rank);
        PMPI_Group_free(&world_group);
    }
    PMPI_Group_free(&group);
    /* a rank outside the world (a spawned job) counts as a node mate */
    return world_rank == MPI_UNDEFINED || tdm_node_mate(world_rank);
}

enum { TO_PEER, FROM_PEER };

/* Whether a blocking call moving count x datatype to or from 'peer' lends its
   core. Through Open MPI's shared memory the receiver makes the copy of a
   large message (a single-copy get): a blocked sender has nothing to do
   meanwhile, a blocked receiver has. MPICH 4.0.2's sender fills shared cells,
   which a lent send does at its polls; measured ahead of spinning all the
   same when the receiver computes (docs/PERFORMANCE.md). */
static int lends(MPI_Count count, MPI_Datatype datatype, MPI_Comm comm, int peer, int direction)
{
    if (__builtin_expect(lend.mode == TDM_LEND_NEVER, 1) || peer == MPI_PROC_NULL ||
        comm == MPI_COMM_NULL)
        return 0; /* a null communicator: the MPI library's own call reports it */
    if (lend.naps)
        return 1;
    int size = 0;
    if (tdm_impl_type_size(datatype, &size) != MPI_SUCCESS ||
        (long long)count * size <= tdm_eager_limit)
        return 0; /* a bad datatype: the MPI library's own call reports it */
    return lend.mode == TDM_LEND_ALWAYS || direction == TO_PEER || !through_shm(comm, peer);
}

/* Whether a receive of count x datatype from 'peer' is a copy above the
   eager limit through shared memory. */
static int receives_through_shm(MPI_Count count, MPI_Datatype datatype, MPI_Comm comm, int peer)
{
    int size = 0;
    return peer != MPI_PROC_NULL && tdm_impl_type_size(datatype, &size) == MPI_SUCCESS &&
           (long long)count * size > tdm_eager_limit && through_shm(comm, peer);
}

/* Test every request not yet complete; *left is how many remain. The first
   error stops the polling: it is returned after the rest complete. */
static int test_each(int count, MPI_Request requests[], MPI_Status statuses[], int *left)
{
    *left = 0;
    for (int i = 0; i < count; i++) {
        if (requests[i] == MPI_REQUEST_NULL)
            continue;
        int flag = 0;
        int rc = PMPI_Test(&requests[i], &flag, &statuses[i]);
        if (rc != MPI_SUCCESS) {
            for (int j = 0; j < count; j++) /* as the blocking call would: all complete */
                if (requests[j] != MPI_REQUEST_NULL)
                    PMPI_Wait(&requests[j], MPI_STATUS_IGNORE);
            return rc;
        }
        *left += !flag;
    }
    return MPI_SUCCESS;
}

/* Whether a lending wait on 'cpu' sleeps now: always with TANDEM_WAIT=lend;
   with auto, while another rank's progress thread is pinned to that CPU or,
   where threads do not move to lent CPUs (TANDEM_PROGRESS_CPUS=none),
   while one has work (the scheduler may put it
   there). A lender that slept while the thread ran elsewhere only slowed
   its own transfer (docs/PERFORMANCE.md, "Off a lent core while the
   application waits"). */
static int guest_waits(int cpu)
{
    if (lend.mode == TDM_LEND_ALWAYS)
        return 1;
    return tdm_progress_follows_lent_cpus() && cpu >= 0 ? tdm_node_has_guest(cpu)
                                                        : tdm_node_borrowers() > 0;
}

/* Wait for requests[0..count-1] (each tested on its own, so that an error
   reaches the application's error handler with its own code) while lending
   the core 'cpu'. */
static int lend_wait(int count, MPI_Request requests[], MPI_Status statuses[], int cpu)
{
    int left, rc;
    double end = PMPI_Wtime() + SPIN_US * 1e-6;
    do {
        if ((rc = test_each(count, requests, statuses, &left)) != MPI_SUCCESS || left == 0)
            return rc;
    } while (PMPI_Wtime() < end);
    /* Short sleeps must stay short: the default timer slack is 50 us. */
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    for (int pause = 1;;) {
        if (guest_waits(cpu)) {
            tdm_pause_us(pause);
            pause = pause * 2 > TDM_PAUSE_MAX_US ? TDM_PAUSE_MAX_US : pause * 2;
        } else {
            pause = 1; /* nobody to lend to: poll at once, as the MPI library does */
        }
        if ((rc = test_each(count, requests, statuses, &left)) != MPI_SUCCESS || left == 0)
            break;
    }
    if (slack > 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
    return rc;
}

/* The core of a lending call is lent from before its operation is posted
   (a progress thread of the node with work may move there at once: its
   transfer may be over before the spinning is) until it returns. */
static int lend_begin(void)
{
    int cpu = sched_getcpu();
    tdm_node_lend(cpu);
    return cpu;
}

static int lend_end(int rc)
{
    tdm_node_lend(-1);
    return rc;
}

/* -------------------------------------------------------------- the calls */

/* A send that lends: post it with START (PMPI_Isend, PMPI_Issend or
   PMPI_Irsend) and wait. */
#define SEND_HOOK(Name, START, COUNT, suffix)                                                  \
    int tdm_hook_##Name##suffix(int lang, const void *buf, COUNT count, MPI_Datatype datatype, \
                                int dest, int tag, MPI_Comm comm)                              \
    {                                                                                          \
        (void)lang;                                                                            \
        if (!lends(count, datatype, comm, dest, TO_PEER))                                      \
            return PMPI_##Name##suffix(buf, count, datatype, dest, tag, comm);                 \
        MPI_Request request;                                                                   \
        MPI_Status status;                                                                     \
        int cpu = lend_begin();                                                                \
        int rc = START##suffix(buf, count, datatype, dest, tag, comm, &request);               \
        return lend_end(rc != MPI_SUCCESS ? rc : lend_wait(1, &request, &status, cpu));        \
    }

/* The blocking receives also record what arrived while monitoring records:
   then a status is needed even when the application ignores it. */
#define RECV_HOOKS(COUNT, suffix)                                                                  \
    int tdm_hook_Recv##suffix(int lang, void *buf, COUNT count, MPI_Datatype datatype, int source, \
                              int tag, MPI_Comm comm, MPI_Status *status)                          \
    {                                                                                              \
        (void)lang;                                                                                \
        int lent = lends(count, datatype, comm, source, FROM_PEER);                                \
        if (!lent && !tdm_monitor_on())                                                            \
            return PMPI_Recv##suffix(buf, count, datatype, source, tag, comm, status);             \
        MPI_Status own;                                                                            \
        MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;                              \
        MPI_Request request;                                                                       \
        int rc;                                                                                    \
        if (lent) {                                                                                \
            int cpu = lend_begin();                                                                \
            rc = PMPI_Irecv##suffix(buf, count, datatype, source, tag, comm, &request);            \
            rc = lend_end(rc != MPI_SUCCESS ? rc : lend_wait(1, &request, st, cpu));               \
        } else {                                                                                   \
            rc = PMPI_Recv##suffix(buf, count, datatype, source, tag, comm, st);                   \
        }                                                                                          \
        if (rc == MPI_SUCCESS && tdm_monitor_on())                                                 \
            tdm_monitor_received(st, comm);                                                        \
        return rc;                                                                                 \
    }                                                                                              \
    int tdm_hook_Sendrecv##suffix(int lang, const void *sendbuf, COUNT sendcount,                  \
                                  MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,     \
                                  COUNT recvcount, MPI_Datatype recvtype, int source, int recvtag, \
                                  MPI_Comm comm, MPI_Status *status)                               \
    {                                                                                              \
        (void)lang;                                                                                \
        int lent = lends(sendcount, sendtype, comm, dest, TO_PEER) ||                              \
                   lends(recvcount, recvtype, comm, source, FROM_PEER);                            \
        if (lent && lend.mode != TDM_LEND_ALWAYS &&                                                \
            receives_through_shm(recvcount, recvtype, comm, source))                               \
            lent = 0; /* its receive is a copy this rank makes */                                  \
        if (!lent && !tdm_monitor_on())                                                            \
            return PMPI_Sendrecv##suffix(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,     \
                                         recvcount, recvtype, source, recvtag, comm, status);      \
        if (tdm_monitor_on())                                                                      \
            tdm_monitor_send(sendcount, sendtype, dest, comm);                                     \
        MPI_Status own[2];                                                                         \
        MPI_Status *st = status == MPI_STATUS_IGNORE ? &own[0] : status;                           \
        int rc;                                                                                    \
        if (lent) {                                                                                \
            /* the receive first, as MPI libraries post it, so a send to self matches */           \
            MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};                        \
            int cpu = lend_begin();                                                                \
            rc = PMPI_Irecv##suffix(recvbuf, recvcount, recvtype, source, recvtag, comm,           \
                                    &requests[0]);                                                 \
            if (rc == MPI_SUCCESS) {                                                               \
                rc = PMPI_Isend##suffix(sendbuf, sendcount, sendtype, dest, sendtag, comm,         \
                                        &requests[1]);                                             \
                if (rc != MPI_SUCCESS) {                                                           \
                    PMPI_Cancel(&requests[0]);                                                     \
                    PMPI_Request_free(&requests[0]);                                               \
                }                                                                                  \
            }                                                                                      \
            if (rc == MPI_SUCCESS) {                                                               \
                MPI_Status both[2];                                                                \
                rc = lend_wait(2, requests, both, cpu);                                            \
                *st = both[0];                                                                     \
            }                                                                                      \
            lend_end(rc);                                                                          \
        } else {                                                                                   \
            rc = PMPI_Sendrecv##suffix(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,       \
                                       recvcount, recvtype, source, recvtag, comm, st);            \
        }                                                                                          \
        if (rc == MPI_SUCCESS && tdm_monitor_on())                                                 \
            tdm_monitor_received(st, comm);                                                        \
        return rc;                                                                                 \
    }                                                                                              \
    int tdm_hook_Sendrecv_replace##suffix(int lang, void *buf, COUNT count, MPI_Datatype datatype, \
                                          int dest, int sendtag, int source, int recvtag,          \
                                          MPI_Comm comm, MPI_Status *status)                       \
    {                                                                                              \
        (void)lang;                                                                                \
        if (!tdm_monitor_on())                                                                     \
            return PMPI_Sendrecv_replace##suffix(buf, count, datatype, dest, sendtag, source,      \
                                                 recvtag, comm, status);                           \
        MPI_Status own;                                                                            \
        MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;                              \
        tdm_monitor_send(count, datatype, dest, comm);                                             \
        int rc = PMPI_Sendrecv_replace##suffix(buf, count, datatype, dest, sendtag, source,        \
                                               recvtag, comm, st);                                 \
        if (rc == MPI_SUCCESS)                                                                     \
            tdm_monitor_received(st, comm);                                                        \
        return rc;                                                                                 \
    }

#define BLOCKING_HOOKS(COUNT, suffix)            \
    SEND_HOOK(Send, PMPI_Isend, COUNT, suffix)   \
    SEND_HOOK(Ssend, PMPI_Issend, COUNT, suffix) \
    SEND_HOOK(Rsend, PMPI_Irsend, COUNT, suffix) \
    RECV_HOOKS(COUNT, suffix)

BLOCKING_HOOKS(int, )
#if MPI_VERSION >= 4
BLOCKING_HOOKS(MPI_Count, _c)
#endif
