/*
 * Starting nonblocking point-to-point operations. The operation is posted on
 * the caller's thread exactly as the application asked (this keeps MPI's
 * ordering). If it is larger than the eager limit, Tandem then either counts
 * it in the request tracker (drive strategy), which wakes the progress thread,
 * or hands it to the progress thread behind a generalized request (proxy
 * strategy). Persistent requests stay native in both strategies: a
 * generalized request cannot be started again, so they are counted while
 * active and driven. Application threads.
 */
#include <mpi.h>

#include "core/config.h"
#include "core/progress.h"
#include "core/proxy.h"
#include "core/request.h"
#include "impl/impl.h"
#include "monitor/monitor.h"
#include "wrappers/gen_hooks.h"

static long long bytes_of(MPI_Count count, MPI_Datatype datatype)
{
    int size = 0;
    if (tdm_impl_type_size(datatype, &size) != MPI_SUCCESS)
        return 0;
    return (long long)count * size;
}

/* A started operation of 'bytes' bytes whose request is *request. */
static void started(MPI_Request *request, long long bytes)
{
    if (tdm_progress_strategy != TDM_PROGRESS_PROXY)
        tdm_request_started(*request, bytes); /* it applies the eager limit */
    else if (bytes > tdm_eager_limit)
        tdm_proxy_post(request);
}

static void persistent(MPI_Request *request, long long bytes)
{
    tdm_request_persistent(*request, bytes);
}

/* What monitoring remembers of a posted operation (after the proxy, if any,
   replaced the request: the application completes that handle). */
static void monitor_send(MPI_Request request, MPI_Count count, MPI_Datatype datatype, int peer,
                         MPI_Comm comm)
{
    tdm_monitor_freed(request); /* a handle reused since a completion Tandem missed */
    tdm_monitor_send(count, datatype, peer, comm);
}

static void monitor_recv(MPI_Request request, MPI_Count count, MPI_Datatype datatype, int peer,
                         MPI_Comm comm)
{
    (void)count, (void)datatype, (void)peer;
    tdm_monitor_posted_recv(request, comm, 0);
}

static void monitor_recv_init(MPI_Request request, MPI_Count count, MPI_Datatype datatype, int peer,
                              MPI_Comm comm)
{
    (void)count, (void)datatype, (void)peer;
    tdm_monitor_posted_recv(request, comm, 1);
}

/* Isend, Ibsend, Issend, Irsend, Irecv and the five persistent *_init calls
   share one shape; 'track' counts a started request or remembers a persistent
   one, 'monitor' records it. COUNT is int, or MPI_Count for the _c variants. */
#define TDM_P2P_HOOK(name, COUNT, BUF, track, monitor)                                            \
    int tdm_hook_##name(int lang, BUF buf, COUNT count, MPI_Datatype datatype, int peer, int tag, \
                        MPI_Comm comm, MPI_Request *request)                                      \
    {                                                                                             \
        (void)lang;                                                                               \
        int rc = PMPI_##name(buf, count, datatype, peer, tag, comm, request);                     \
        if (rc == MPI_SUCCESS && tdm_progress_running)                                            \
            track(request, bytes_of(count, datatype));                                            \
        if (rc == MPI_SUCCESS && tdm_monitor_on())                                                \
            monitor(*request, count, datatype, peer, comm);                                       \
        return rc;                                                                                \
    }

/* Imrecv: the message does not tell its communicator; its probe remembered
   it (matched.c), to be taken back before the call clears the handle. */
#define TDM_IMRECV_HOOK(name, COUNT)                                             \
    int tdm_hook_##name(int lang, void *buf, COUNT count, MPI_Datatype datatype, \
                        MPI_Message *message, MPI_Request *request)              \
    {                                                                            \
        (void)lang;                                                              \
        MPI_Comm comm;                                                           \
        int known = tdm_monitor_take_message(*message, &comm);                   \
        int rc = PMPI_##name(buf, count, datatype, message, request);            \
        if (rc == MPI_SUCCESS && tdm_progress_running)                           \
            started(request, bytes_of(count, datatype));                         \
        if (rc == MPI_SUCCESS && known && tdm_monitor_on())                      \
            tdm_monitor_posted_recv(*request, comm, 0);                          \
        return rc;                                                               \
    }

#define TDM_ALL_HOOKS(COUNT, suffix)                                                           \
    TDM_P2P_HOOK(Isend##suffix, COUNT, const void *, started, monitor_send)                    \
    TDM_P2P_HOOK(Ibsend##suffix, COUNT, const void *, started, monitor_send)                   \
    TDM_P2P_HOOK(Issend##suffix, COUNT, const void *, started, monitor_send)                   \
    TDM_P2P_HOOK(Irsend##suffix, COUNT, const void *, started, monitor_send)                   \
    TDM_P2P_HOOK(Irecv##suffix, COUNT, void *, started, monitor_recv)                          \
    TDM_IMRECV_HOOK(Imrecv##suffix, COUNT)                                                     \
    TDM_P2P_HOOK(Send_init##suffix, COUNT, const void *, persistent, tdm_monitor_posted_send)  \
    TDM_P2P_HOOK(Bsend_init##suffix, COUNT, const void *, persistent, tdm_monitor_posted_send) \
    TDM_P2P_HOOK(Ssend_init##suffix, COUNT, const void *, persistent, tdm_monitor_posted_send) \
    TDM_P2P_HOOK(Rsend_init##suffix, COUNT, const void *, persistent, tdm_monitor_posted_send) \
    TDM_P2P_HOOK(Recv_init##suffix, COUNT, void *, persistent, monitor_recv_init)

TDM_ALL_HOOKS(int, )
#if MPI_VERSION >= 4
TDM_ALL_HOOKS(MPI_Count, _c)
#endif

int tdm_hook_Start(int lang, MPI_Request *request)
{
    (void)lang;
    int rc = PMPI_Start(request);
    if (rc == MPI_SUCCESS && tdm_progress_running)
        tdm_request_start_persistent(*request);
    if (rc == MPI_SUCCESS && tdm_monitor_on())
        tdm_monitor_started(*request);
    return rc;
}

int tdm_hook_Startall(int lang, int count, MPI_Request array_of_requests[])
{
    (void)lang;
    int rc = PMPI_Startall(count, array_of_requests);
    for (int i = 0; rc == MPI_SUCCESS && tdm_progress_running && i < count; i++)
        tdm_request_start_persistent(array_of_requests[i]);
    for (int i = 0; rc == MPI_SUCCESS && tdm_monitor_on() && i < count; i++)
        tdm_monitor_started(array_of_requests[i]);
    return rc;
}
