/*
 * Completion calls. Each one goes to the MPI library unchanged; Tandem only
 * learns which counted requests completed so that the progress thread can
 * sleep once nothing is outstanding. MPI sets a completed request to
 * MPI_REQUEST_NULL, so the handles are copied before the call. While nothing
 * is counted the hooks are a single load and the PMPI call. Application
 * threads.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/progress.h"
#include "core/request.h"
#include "wrappers/gen_hooks.h"

enum { STACK_REQUESTS = 32 };

/* A copy of a request array, on the stack when short. */
typedef struct {
    MPI_Request stack[STACK_REQUESTS];
    MPI_Request *items; /* NULL when nothing is counted (or no memory) */
} snapshot;

static void snapshot_take(snapshot *s, const MPI_Request *requests, int count)
{
    s->items = NULL;
    if (tdm_request_outstanding() == 0 || count <= 0)
        return;
    s->items = count <= STACK_REQUESTS ? s->stack : malloc(sizeof(MPI_Request) * (size_t)count);
    if (s->items)
        memcpy(s->items, requests, sizeof(MPI_Request) * (size_t)count);
}

static void snapshot_release(snapshot *s)
{
    if (s->items && s->items != s->stack)
        free(s->items);
}

/* After a call that completes every request (Waitall, a successful Testall):
   with MPI_ERR_IN_STATUS, the ones whose status says MPI_ERR_PENDING are not
   complete. */
static void completed_all(const snapshot *s, int count, int rc, const MPI_Status *statuses)
{
    if (!s->items)
        return;
    for (int i = 0; i < count; i++) {
        if (rc == MPI_ERR_IN_STATUS && statuses != MPI_STATUSES_IGNORE &&
            statuses[i].MPI_ERROR == MPI_ERR_PENDING)
            continue;
        tdm_request_completed(s->items[i]);
    }
}

int tdm_hook_Wait(int lang, MPI_Request *request, MPI_Status *status)
{
    (void)lang;
    if (tdm_request_outstanding() == 0)
        return PMPI_Wait(request, status);
    MPI_Request before = *request;
    tdm_progress_blocking_enter();
    int rc = PMPI_Wait(request, status);
    tdm_progress_blocking_leave();
    tdm_request_completed(before);
    return rc;
}

int tdm_hook_Test(int lang, MPI_Request *request, int *flag, MPI_Status *status)
{
    (void)lang;
    if (tdm_request_outstanding() == 0)
        return PMPI_Test(request, flag, status);
    MPI_Request before = *request;
    int rc = PMPI_Test(request, flag, status);
    if (*flag)
        tdm_request_completed(before);
    return rc;
}

int tdm_hook_Waitany(int lang, int count, MPI_Request array_of_requests[], int *index,
                     MPI_Status *status)
{
    (void)lang;
    snapshot s;
    snapshot_take(&s, array_of_requests, count);
    tdm_progress_blocking_enter();
    int rc = PMPI_Waitany(count, array_of_requests, index, status);
    tdm_progress_blocking_leave();
    if (s.items && *index != MPI_UNDEFINED && *index >= 0 && *index < count)
        tdm_request_completed(s.items[*index]);
    snapshot_release(&s);
    return rc;
}

int tdm_hook_Testany(int lang, int count, MPI_Request array_of_requests[], int *index, int *flag,
                     MPI_Status *status)
{
    (void)lang;
    snapshot s;
    snapshot_take(&s, array_of_requests, count);
    int rc = PMPI_Testany(count, array_of_requests, index, flag, status);
    if (s.items && *flag && *index != MPI_UNDEFINED && *index >= 0 && *index < count)
        tdm_request_completed(s.items[*index]);
    snapshot_release(&s);
    return rc;
}

static void completed_some(const snapshot *s, int count, const int *outcount, const int *indices)
{
    if (!s->items || *outcount == MPI_UNDEFINED)
        return;
    for (int i = 0; i < *outcount; i++)
        if (indices[i] >= 0 && indices[i] < count)
            tdm_request_completed(s->items[indices[i]]);
}

int tdm_hook_Waitsome(int lang, int incount, MPI_Request array_of_requests[], int *outcount,
                      int array_of_indices[], MPI_Status array_of_statuses[])
{
    (void)lang;
    snapshot s;
    snapshot_take(&s, array_of_requests, incount);
    tdm_progress_blocking_enter();
    int rc =
        PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    tdm_progress_blocking_leave();
    completed_some(&s, incount, outcount, array_of_indices);
    snapshot_release(&s);
    return rc;
}

int tdm_hook_Testsome(int lang, int incount, MPI_Request array_of_requests[], int *outcount,
                      int array_of_indices[], MPI_Status array_of_statuses[])
{
    (void)lang;
    snapshot s;
    snapshot_take(&s, array_of_requests, incount);
    int rc =
        PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    completed_some(&s, incount, outcount, array_of_indices);
    snapshot_release(&s);
    return rc;
}

int tdm_hook_Waitall(int lang, int count, MPI_Request array_of_requests[],
                     MPI_Status array_of_statuses[])
{
    (void)lang;
    snapshot s;
    snapshot_take(&s, array_of_requests, count);
    tdm_progress_blocking_enter();
    int rc = PMPI_Waitall(count, array_of_requests, array_of_statuses);
    tdm_progress_blocking_leave();
    completed_all(&s, count, rc, array_of_statuses);
    snapshot_release(&s);
    return rc;
}

int tdm_hook_Testall(int lang, int count, MPI_Request array_of_requests[], int *flag,
                     MPI_Status array_of_statuses[])
{
    (void)lang;
    snapshot s;
    snapshot_take(&s, array_of_requests, count);
    int rc = PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    if (*flag)
        completed_all(&s, count, rc, array_of_statuses);
    snapshot_release(&s);
    return rc;
}

int tdm_hook_Request_free(int lang, MPI_Request *request)
{
    (void)lang;
    MPI_Request before = *request;
    int rc = PMPI_Request_free(request);
    if (rc == MPI_SUCCESS && tdm_progress_running)
        tdm_request_freed(before);
    return rc;
}
