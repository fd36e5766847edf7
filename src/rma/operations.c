/*
 * The one-sided operations. Each first goes where its window is served:
 * on a window of the progress processes' (rma/served.h), to the progress
 * process of the target's host, with the displacement moved to the
 * target's part of the host's memory. The request-based ones (MPI_Rput,
 * MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate) are then counted in the
 * request tracker like a nonblocking point-to-point operation of as many
 * bytes, so that the progress thread drives the MPI library until the
 * application completes the request (with either strategy: the request
 * stays the MPI library's, since its completion means only local
 * completion, which the application's MPI_Wait or MPI_Test reads from it).
 * Operations without a request complete at a flush or unlock, a call that
 * progresses on its own; until then the thread moves them while it serves
 * the window (core/progress.c). Contiguous puts and gets, with a request
 * or without, may instead be handed to the origin's progress process
 * whole (origin offload, rma/served.h). Application threads.
 */
#include <mpi.h>

#include "core/progress.h"
#include "core/request.h"
#include "impl/impl.h"
#include "rma/served.h"
#include "wrappers/gen_hooks.h"

static long long bytes_of(MPI_Count count, MPI_Datatype datatype)
{
    int size = 0;
    if (tdm_impl_type_size(datatype, &size) != MPI_SUCCESS)
        return 0;
    return (long long)count * size;
}

/* Before the MPI library starts a request-based operation: apart from the
   thread's polls where its request needs that (core/progress.h). Returns
   whether to call issued() after it. */
static int issuing(void)
{
    if (!tdm_progress_issue_guard || !tdm_progress_running)
        return 0;
    tdm_progress_issue_begin();
    return 1;
}

static int issued(int guarded, int rc)
{
    if (guarded)
        tdm_progress_issue_end();
    return rc;
}

/* Count a posted operation (rc its result) while a progress thread runs. */
static int posted(int rc, MPI_Request *request, long long bytes)
{
    if (rc == MPI_SUCCESS && tdm_progress_running)
        tdm_request_started(*request, bytes); /* it applies the eager limit */
    return rc;
}

#define RMA_REQUEST_HOOKS(suffix, COUNT)                                                           \
    int tdm_hook_Rput##suffix(int lang, const void *origin_addr, COUNT origin_count,               \
                              MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, \
                              COUNT target_count, MPI_Datatype target_datatype, MPI_Win win,       \
                              MPI_Request *request)                                                \
    {                                                                                              \
        (void)lang;                                                                                \
        if (tdm_served_offload(win, 0, origin_addr, origin_count, origin_datatype, target_rank,    \
                               target_disp, target_count, target_datatype, request))               \
            return MPI_SUCCESS;                                                                    \
        tdm_served_route(&win, &target_rank, &target_disp);                                        \
        int guarded = issuing();                                                                   \
        int rc = PMPI_Rput##suffix(origin_addr, origin_count, origin_datatype, target_rank,        \
                                   target_disp, target_count, target_datatype, win, request);      \
        return posted(issued(guarded, rc), request, bytes_of(origin_count, origin_datatype));      \
    }                                                                                              \
    int tdm_hook_Rget##suffix(int lang, void *origin_addr, COUNT origin_count,                     \
                              MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, \
                              COUNT target_count, MPI_Datatype target_datatype, MPI_Win win,       \
                              MPI_Request *request)                                                \
    {                                                                                              \
        (void)lang;                                                                                \
        if (tdm_served_offload(win, 1, origin_addr, origin_count, origin_datatype, target_rank,    \
                               target_disp, target_count, target_datatype, request))               \
            return MPI_SUCCESS;                                                                    \
        tdm_served_route(&win, &target_rank, &target_disp);                                        \
        int guarded = issuing();                                                                   \
        int rc = PMPI_Rget##suffix(origin_addr, origin_count, origin_datatype, target_rank,        \
                                   target_disp, target_count, target_datatype, win, request);      \
        return posted(issued(guarded, rc), request, bytes_of(origin_count, origin_datatype));      \
    }                                                                                              \
    int tdm_hook_Raccumulate##suffix(                                                              \
        int lang, const void *origin_addr, COUNT origin_count, MPI_Datatype origin_datatype,       \
        int target_rank, MPI_Aint target_disp, COUNT target_count, MPI_Datatype target_datatype,   \
        MPI_Op op, MPI_Win win, MPI_Request *request)                                              \
    {                                                                                              \
        (void)lang;                                                                                \
        tdm_served_route(&win, &target_rank, &target_disp);                                        \
        int guarded = issuing();                                                                   \
        int rc = PMPI_Raccumulate##suffix(origin_addr, origin_count, origin_datatype, target_rank, \
                                          target_disp, target_count, target_datatype, op, win,     \
                                          request);                                                \
        return posted(issued(guarded, rc), request, bytes_of(origin_count, origin_datatype));      \
    }

RMA_REQUEST_HOOKS(, int)
#if MPI_VERSION >= 4
RMA_REQUEST_HOOKS(_c, MPI_Count)
#endif

int tdm_hook_Rget_accumulate(int lang, const void *origin_addr, int origin_count,
                             MPI_Datatype origin_datatype, void *result_addr, int result_count,
                             MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                             int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                             MPI_Request *request)
{
    (void)lang;
    /* With MPI_NO_OP the origin buffer is not significant: its count and
       type may be anything, so only the result's size counts then. */
    long long bytes = bytes_of(result_count, result_datatype);
    tdm_served_route(&win, &target_rank, &target_disp);
    if (op != MPI_NO_OP)
        bytes += bytes_of(origin_count, origin_datatype);
    int guarded = issuing();
    int rc = PMPI_Rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                                  result_count, result_datatype, target_rank, target_disp,
                                  target_count, target_datatype, op, win, request);
    return posted(issued(guarded, rc), request, bytes);
}

/* The operations without a request: routed, then the MPI library's. */
#define RMA_HOOKS(suffix, COUNT)                                                                  \
    int tdm_hook_Put##suffix(int lang, const void *origin_addr, COUNT origin_count,               \
                             MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, \
                             COUNT target_count, MPI_Datatype target_datatype, MPI_Win win)       \
    {                                                                                             \
        (void)lang;                                                                               \
        if (tdm_served_offload(win, 0, origin_addr, origin_count, origin_datatype, target_rank,   \
                               target_disp, target_count, target_datatype, NULL))                 \
            return MPI_SUCCESS;                                                                   \
        tdm_served_route(&win, &target_rank, &target_disp);                                       \
        return PMPI_Put##suffix(origin_addr, origin_count, origin_datatype, target_rank,          \
                                target_disp, target_count, target_datatype, win);                 \
    }                                                                                             \
    int tdm_hook_Get##suffix(int lang, void *origin_addr, COUNT origin_count,                     \
                             MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, \
                             COUNT target_count, MPI_Datatype target_datatype, MPI_Win win)       \
    {                                                                                             \
        (void)lang;                                                                               \
        if (tdm_served_offload(win, 1, origin_addr, origin_count, origin_datatype, target_rank,   \
                               target_disp, target_count, target_datatype, NULL))                 \
            return MPI_SUCCESS;                                                                   \
        tdm_served_route(&win, &target_rank, &target_disp);                                       \
        return PMPI_Get##suffix(origin_addr, origin_count, origin_datatype, target_rank,          \
                                target_disp, target_count, target_datatype, win);                 \
    }                                                                                             \
    int tdm_hook_Accumulate##suffix(int lang, const void *origin_addr, COUNT origin_count,        \
                                    MPI_Datatype origin_datatype, int target_rank,                \
                                    MPI_Aint target_disp, COUNT target_count,                     \
                                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)         \
    {                                                                                             \
        (void)lang;                                                                               \
        tdm_served_route(&win, &target_rank, &target_disp);                                       \
        return PMPI_Accumulate##suffix(origin_addr, origin_count, origin_datatype, target_rank,   \
                                       target_disp, target_count, target_datatype, op, win);      \
    }

RMA_HOOKS(, int)
#if MPI_VERSION >= 4
RMA_HOOKS(_c, MPI_Count)
#endif

int tdm_hook_Get_accumulate(int lang, const void *origin_addr, int origin_count,
                            MPI_Datatype origin_datatype, void *result_addr, int result_count,
                            MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                            int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    (void)lang;
    tdm_served_route(&win, &target_rank, &target_disp);
    return PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                               result_count, result_datatype, target_rank, target_disp,
                               target_count, target_datatype, op, win);
}

int tdm_hook_Fetch_and_op(int lang, const void *origin_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Op op,
                          MPI_Win win)
{
    (void)lang;
    tdm_served_route(&win, &target_rank, &target_disp);
    return PMPI_Fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op, win);
}

int tdm_hook_Compare_and_swap(int lang, const void *origin_addr, const void *compare_addr,
                              void *result_addr, MPI_Datatype datatype, int target_rank,
                              MPI_Aint target_disp, MPI_Win win)
{
    (void)lang;
    tdm_served_route(&win, &target_rank, &target_disp);
    return PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank,
                                 target_disp, win);
}
