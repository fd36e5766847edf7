/*
 * Completion calls. Each one goes to the MPI library; Tandem learns which
 * counted requests completed so that the progress thread can sleep once
 * nothing is outstanding (MPI sets a completed request to MPI_REQUEST_NULL,
 * so the handles are copied before the call).
 *
 * Proxies (generalized requests of the proxy strategy and of the MPI-IO
 * offload) are completed by Tandem's threads, and the MPI libraries spin while
 * they wait for a generalized request. So a wait first sleeps on Tandem's own
 * condition until the proxies it needs are finished, then lets the MPI library
 * return them at once; an array that also holds native requests is polled
 * with the Test variant instead. A proxy's error becomes the call's return
 * code (MPI_ERR_IN_STATUS and the status's MPI_ERROR for the calls that
 * complete several requests).
 *
 * While nothing is counted and no proxy exists, each hook is two loads and
 * the PMPI call. Application threads.
 */
#include <mpi.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "core/progress.h"
#include "core/proxy.h"
#include "core/request.h"
#include "core/runtime.h"
#include "impl/impl.h"
#include "monitor/monitor.h"
#include "p2p/blocking.h"
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
    if (tdm_progress_outstanding() == 0 || count <= 0)
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

/* The proxies of a request array, each held; items[i] is NULL for a native
   request. */
typedef struct {
    tdm_proxy *stack[STACK_REQUESTS];
    tdm_proxy **items; /* NULL when the array holds no proxy */
    int count;
    int natives; /* active native requests in the array */
} proxy_set;

static void proxies_take(proxy_set *ps, const MPI_Request *requests, int count)
{
    ps->items = NULL;
    ps->count = count;
    ps->natives = 0;
    if (tdm_request_proxies_known() == 0 || count <= 0)
        return;
    tdm_proxy **items =
        count <= STACK_REQUESTS ? ps->stack : malloc(sizeof(tdm_proxy *) * (size_t)count);
    if (!items) /* the MPI library then spins on the proxies: slower, still right */
        return;
    int found = 0;
    for (int i = 0; i < count; i++) {
        items[i] = tdm_proxy_hold(requests[i]);
        if (items[i])
            found++;
        else if (requests[i] != MPI_REQUEST_NULL)
            ps->natives++;
    }
    if (found)
        ps->items = items;
    else if (items != ps->stack)
        free(items);
}

static void proxies_release(proxy_set *ps)
{
    if (!ps->items)
        return;
    for (int i = 0; i < ps->count; i++)
        if (ps->items[i])
            tdm_proxy_release(ps->items[i]);
    if (ps->items != ps->stack)
        free(ps->items);
}

/* The error of entry i if it is a finished proxy that failed, else MPI_SUCCESS. */
static int proxy_error(const proxy_set *ps, int i)
{
    if (!ps->items || i < 0 || i >= ps->count || !ps->items[i] || !tdm_proxy_done(ps->items[i]))
        return MPI_SUCCESS;
    return ps->items[i]->error;
}

/* After a call that completed the entries indices[0..n) (or 0..n when indices
   is NULL): report failed proxies as MPI_ERR_IN_STATUS, as the MPI library
   does for its own requests. */
static int proxy_errors_in_status(const proxy_set *ps, int rc, int n, const int *indices,
                                  MPI_Status *statuses)
{
    if (!ps->items || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS))
        return rc;
    int failed = 0;
    for (int k = 0; k < n; k++)
        failed |= proxy_error(ps, indices ? indices[k] : k) != MPI_SUCCESS;
    if (!failed)
        return rc;
    if (statuses != MPI_STATUSES_IGNORE)
        for (int k = 0; k < n; k++) {
            int error = proxy_error(ps, indices ? indices[k] : k);
            if (error != MPI_SUCCESS || rc == MPI_SUCCESS)
                statuses[k].MPI_ERROR = error;
        }
    return MPI_ERR_IN_STATUS;
}

/* Sleep until every proxy of the set is finished. */
static void proxies_wait_all(const proxy_set *ps)
{
    for (int i = 0; ps->items && i < ps->count; i++)
        if (ps->items[i])
            tdm_proxy_wait(ps->items[i]);
}

/* The waits of a host whose ranks outnumber its CPUs, without a progress
   thread (tdm_waits_nap): the Test variant, polled with sleeps, which also
   moves what only a test moves (the poll function of a generalized request,
   ROMIO's nonblocking I/O on MPICH; MPI_Request_get_status does not call
   it in MPICH 4.0.2). Each returns what the Wait variant would, with the
   same MPI_UNDEFINED for an array of null or inactive requests; for
   Waitall see nap_waitall. Without a progress thread nothing is counted
   (tdm_progress_outstanding) and no proxy exists (the proxy strategy, the
   MPI-IO offload and Tandem's nonblocking collectives need the thread), so
   the tracker and the proxies have nothing to learn here. */
static int nap_wait(MPI_Request *request, MPI_Status *status)
{
    tdm_nap nap;
    tdm_nap_start(&nap);
    int flag = 0, rc;
    while ((rc = PMPI_Test(request, &flag, status)) == MPI_SUCCESS && !flag)
        tdm_nap_take(&nap);
    tdm_nap_end(&nap);
    return rc;
}

static int nap_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    tdm_nap nap;
    tdm_nap_start(&nap);
    int flag = 0, rc;
    while ((rc = PMPI_Testany(count, requests, index, &flag, status)) == MPI_SUCCESS && !flag)
        tdm_nap_take(&nap);
    tdm_nap_end(&nap);
    return rc;
}

static int nap_waitsome(int count, MPI_Request requests[], int *outcount, int indices[],
                        MPI_Status statuses[])
{
    tdm_nap nap;
    tdm_nap_start(&nap);
    int rc;
    while ((rc = PMPI_Testsome(count, requests, outcount, indices, statuses)) == MPI_SUCCESS &&
           *outcount == 0)
        tdm_nap_take(&nap);
    tdm_nap_end(&nap);
    return rc;
}

/* Waitall as a sleeping wait for each request in turn (MPI_Test, which
   also moves the others). Every request completes, also after one failed,
   as in Open MPI's Waitall: then MPI_ERR_IN_STATUS, with each status's
   MPI_ERROR its request's error or MPI_SUCCESS. MPICH's Waitall leaves the
   requests after a failed one pending (MPI_ERR_PENDING), which MPI allows
   as well, but a caller that ignores the statuses cannot tell which, and
   MPICH 4.0.2's Testall, polled instead, returned MPI_SUCCESS there. Each
   failed request's MPI_Test calls the communicator's error handler with
   that request's error (the error test: tests/c/p2p_errors.c). */
static int nap_waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    int failed = 0;
    for (int i = 0; i < count; i++) {
        MPI_Status own, *st = statuses == MPI_STATUSES_IGNORE ? &own : &statuses[i];
        int rc = nap_wait(&requests[i], st);
        if (rc != MPI_SUCCESS && !failed && statuses != MPI_STATUSES_IGNORE)
            for (int k = 0; k < i; k++)
                statuses[k].MPI_ERROR = MPI_SUCCESS;
        failed |= rc != MPI_SUCCESS;
        if (failed && statuses != MPI_STATUSES_IGNORE)
            statuses[i].MPI_ERROR = rc;
    }
    return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

static int wait_(MPI_Request *request, MPI_Status *status)
{
    if (tdm_waits_nap())
        return nap_wait(request, status);
    if (tdm_request_proxies_known() > 0) {
        tdm_proxy *proxy = tdm_proxy_hold(*request);
        if (proxy) {
            tdm_proxy_wait(proxy);
            int rc = PMPI_Wait(request, status);
            if (rc == MPI_SUCCESS)
                rc = proxy->error;
            tdm_proxy_release(proxy);
            return rc;
        }
    }
    if (tdm_progress_outstanding() == 0)
        return PMPI_Wait(request, status);
    MPI_Request before = *request;
    tdm_progress_blocking_enter();
    int rc = PMPI_Wait(request, status);
    tdm_progress_blocking_leave();
    tdm_request_completed(before);
    return rc;
}

static int test_(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (tdm_progress_outstanding() == 0 && tdm_request_proxies_known() == 0)
        return PMPI_Test(request, flag, status);
    MPI_Request before = *request;
    tdm_proxy *proxy = tdm_proxy_hold(before);
    if (proxy && proxy->drive) /* a collective schedule: this call moves it too */
        proxy->drive();
    int rc = PMPI_Test(request, flag, status);
    if (*flag)
        tdm_request_completed(before);
    if (proxy) {
        if (rc == MPI_SUCCESS && *flag)
            rc = proxy->error;
        tdm_proxy_release(proxy);
    }
    return rc;
}

/* Waitany over an array holding proxies: sleep while it holds only proxies,
   else poll with Testany (which also moves the native requests). */
static int wait_any_with_proxies(const proxy_set *ps, int count, MPI_Request requests[], int *index,
                                 MPI_Status *status)
{
    if (ps->natives == 0) {
        tdm_proxy_wait_any(ps->items, count);
        return PMPI_Waitany(count, requests, index, status);
    }
    for (;;) {
        int flag = 0;
        int rc = PMPI_Testany(count, requests, index, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        sched_yield();
    }
}

static int waitany_(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    if (tdm_waits_nap())
        return nap_waitany(count, array_of_requests, index, status);
    snapshot s;
    proxy_set ps;
    snapshot_take(&s, array_of_requests, count);
    proxies_take(&ps, array_of_requests, count);
    int rc;
    if (ps.items) {
        rc = wait_any_with_proxies(&ps, count, array_of_requests, index, status);
    } else {
        tdm_progress_blocking_enter();
        rc = PMPI_Waitany(count, array_of_requests, index, status);
        tdm_progress_blocking_leave();
    }
    if (s.items && *index != MPI_UNDEFINED && *index >= 0 && *index < count)
        tdm_request_completed(s.items[*index]);
    if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED)
        rc = proxy_error(&ps, *index);
    proxies_release(&ps);
    snapshot_release(&s);
    return rc;
}

static int testany_(int count, MPI_Request array_of_requests[], int *index, int *flag,
                    MPI_Status *status)
{
    snapshot s;
    proxy_set ps;
    snapshot_take(&s, array_of_requests, count);
    proxies_take(&ps, array_of_requests, count);
    int rc = PMPI_Testany(count, array_of_requests, index, flag, status);
    if (s.items && *flag && *index != MPI_UNDEFINED && *index >= 0 && *index < count)
        tdm_request_completed(s.items[*index]);
    if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED)
        rc = proxy_error(&ps, *index);
    proxies_release(&ps);
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

/* Waitsome over an array holding proxies, as wait_any_with_proxies. */
static int wait_some_with_proxies(const proxy_set *ps, int incount, MPI_Request requests[],
                                  int *outcount, int indices[], MPI_Status statuses[])
{
    if (ps->natives == 0) {
        tdm_proxy_wait_any(ps->items, incount);
        return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    }
    for (;;) {
        int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
        if ((rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) || *outcount != 0)
            return rc;
        sched_yield();
    }
}

static int waitsome_(int incount, MPI_Request array_of_requests[], int *outcount,
                     int array_of_indices[], MPI_Status array_of_statuses[])
{
    if (tdm_waits_nap())
        return nap_waitsome(incount, array_of_requests, outcount, array_of_indices,
                            array_of_statuses);
    snapshot s;
    proxy_set ps;
    snapshot_take(&s, array_of_requests, incount);
    proxies_take(&ps, array_of_requests, incount);
    int rc;
    if (ps.items) {
        rc = wait_some_with_proxies(&ps, incount, array_of_requests, outcount, array_of_indices,
                                    array_of_statuses);
    } else {
        tdm_progress_blocking_enter();
        rc = PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices,
                           array_of_statuses);
        tdm_progress_blocking_leave();
    }
    completed_some(&s, incount, outcount, array_of_indices);
    if (*outcount != MPI_UNDEFINED)
        rc = proxy_errors_in_status(&ps, rc, *outcount, array_of_indices, array_of_statuses);
    proxies_release(&ps);
    snapshot_release(&s);
    return rc;
}

static int testsome_(int incount, MPI_Request array_of_requests[], int *outcount,
                     int array_of_indices[], MPI_Status array_of_statuses[])
{
    snapshot s;
    proxy_set ps;
    snapshot_take(&s, array_of_requests, incount);
    proxies_take(&ps, array_of_requests, incount);
    int rc =
        PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    completed_some(&s, incount, outcount, array_of_indices);
    if (*outcount != MPI_UNDEFINED)
        rc = proxy_errors_in_status(&ps, rc, *outcount, array_of_indices, array_of_statuses);
    proxies_release(&ps);
    snapshot_release(&s);
    return rc;
}

static int waitall_(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    if (tdm_waits_nap())
        return nap_waitall(count, array_of_requests, array_of_statuses);
    snapshot s;
    proxy_set ps;
    snapshot_take(&s, array_of_requests, count);
    proxies_take(&ps, array_of_requests, count);
    proxies_wait_all(&ps);
    int blocks = !ps.items || ps.natives > 0;
    if (blocks)
        tdm_progress_blocking_enter();
    int rc = tdm_impl_waitall(count, array_of_requests, array_of_statuses);
    if (blocks)
        tdm_progress_blocking_leave();
    completed_all(&s, count, rc, array_of_statuses);
    rc = proxy_errors_in_status(&ps, rc, count, NULL, array_of_statuses);
    proxies_release(&ps);
    snapshot_release(&s);
    return rc;
}

static int testall_(int count, MPI_Request array_of_requests[], int *flag,
                    MPI_Status array_of_statuses[])
{
    snapshot s;
    proxy_set ps;
    snapshot_take(&s, array_of_requests, count);
    proxies_take(&ps, array_of_requests, count);
    int rc = PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    if (*flag) {
        completed_all(&s, count, rc, array_of_statuses);
        rc = proxy_errors_in_status(&ps, rc, count, NULL, array_of_statuses);
    }
    proxies_release(&ps);
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
    if (rc == MPI_SUCCESS)
        tdm_monitor_freed(before);
    return rc;
}

/* ------------------------------------------------------------ monitoring
   While monitoring remembers receive requests, each completion call keeps the
   handles it was given and a status for every request (its own when the
   application ignores them), and reports what completed: a receive's size and
   source are known only then. It claims the receives' entries before the MPI
   library may complete them (tdm_monitor_claim: a completed request's handle
   may be another thread's at once). */

typedef struct {
    MPI_Request before_stack[STACK_REQUESTS];
    MPI_Status status_stack[STACK_REQUESTS];
    void *claimed_stack[STACK_REQUESTS];
    MPI_Request *before;
    MPI_Status *statuses; /* the application's, or owned */
    void **claimed;
    int count;
} watch;

/* Returns the statuses to pass to the MPI, or NULL without memory (then the
   call goes on unwatched). */
static MPI_Status *watch_take(watch *w, const MPI_Request *requests, int count,
                              MPI_Status *statuses)
{
    size_t n = count > 0 ? (size_t)count : 1;
    w->count = count > 0 ? count : 0;
    w->before = count <= STACK_REQUESTS ? w->before_stack : malloc(sizeof(MPI_Request) * n);
    w->claimed = count <= STACK_REQUESTS ? w->claimed_stack : malloc(sizeof(void *) * n);
    w->statuses = statuses;
    if (statuses == MPI_STATUSES_IGNORE)
        w->statuses = count <= STACK_REQUESTS ? w->status_stack : malloc(sizeof(MPI_Status) * n);
    if (!w->before || !w->statuses || !w->claimed) {
        if (w->before != w->before_stack)
            free(w->before);
        if (w->claimed != w->claimed_stack)
            free(w->claimed);
        if (w->statuses != statuses && w->statuses != w->status_stack)
            free(w->statuses);
        return NULL;
    }
    if (count > 0)
        memcpy(w->before, requests, sizeof(MPI_Request) * (size_t)count);
    tdm_monitor_claim(w->count, w->before, w->claimed);
    return w->statuses;
}

/* Report n completions: request indices[k] (or k) with statuses[k] (or
   statuses[index], 'by_index'). */
static void watch_report(const watch *w, int rc, int n, const int *indices, int by_index)
{
    tdm_monitor_settle(w->count, w->claimed, indices, n, w->statuses, by_index,
                       rc == MPI_ERR_IN_STATUS);
}

/* What was claimed and did not complete is remembered again. */
static void watch_release(watch *w, MPI_Status *statuses)
{
    tdm_monitor_settle(w->count, w->claimed, NULL, 0, w->statuses, 0, 0);
    if (w->claimed != w->claimed_stack)
        free(w->claimed);
    if (w->before != w->before_stack)
        free(w->before);
    if (w->statuses != statuses && w->statuses != w->status_stack)
        free(w->statuses);
}

/* Settle the claim of one request after a call that returned 'rc': it
   completed ('done'), with data if rc is MPI_SUCCESS, or with an error. */
static void settle_one(void **claimed, int rc, int done, const MPI_Status *status)
{
    MPI_Status failed;
    if (rc != MPI_SUCCESS) {
        failed = *status;
        failed.MPI_ERROR = rc == MPI_ERR_PENDING ? MPI_ERR_OTHER : rc; /* completed */
        status = &failed;
    }
    tdm_monitor_settle(1, claimed, NULL, done, status, 0, rc != MPI_SUCCESS);
}

int tdm_hook_Wait(int lang, MPI_Request *request, MPI_Status *status)
{
    (void)lang;
    if (TDM_LIKELY(!tdm_monitor_receives_pending()))
        return wait_(request, status);
    MPI_Request before = *request;
    void *claimed;
    if (!tdm_monitor_claim(1, &before, &claimed))
        return wait_(request, status);
    MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = wait_(request, st);
    settle_one(&claimed, rc, 1, st);
    return rc;
}

int tdm_hook_Test(int lang, MPI_Request *request, int *flag, MPI_Status *status)
{
    (void)lang;
    if (TDM_LIKELY(!tdm_monitor_receives_pending()))
        return test_(request, flag, status);
    MPI_Request before = *request;
    void *claimed;
    if (!tdm_monitor_claim(1, &before, &claimed))
        return test_(request, flag, status);
    MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = test_(request, flag, st);
    settle_one(&claimed, rc, rc != MPI_SUCCESS || *flag, st);
    return rc;
}

/* Waitany and Testany: one status, for the request at *index. */
static int any_watched(int wait, int count, MPI_Request requests[], int *index, int *flag,
                       MPI_Status *status)
{
    watch w;
    MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
    if (!watch_take(&w, requests, count, st))
        return wait ? waitany_(count, requests, index, status)
                    : testany_(count, requests, index, flag, status);
    int done = 1;
    int rc =
        wait ? waitany_(count, requests, index, st) : testany_(count, requests, index, &done, st);
    if (!wait)
        *flag = done;
    if (rc == MPI_SUCCESS && done && *index != MPI_UNDEFINED && *index >= 0 && *index < count)
        tdm_monitor_settle(w.count, w.claimed, index, 1, st, 0, 0);
    watch_release(&w, st);
    return rc;
}

int tdm_hook_Waitany(int lang, int count, MPI_Request array_of_requests[], int *index,
                     MPI_Status *status)
{
    (void)lang;
    if (TDM_LIKELY(!tdm_monitor_receives_pending()))
        return waitany_(count, array_of_requests, index, status);
    return any_watched(1, count, array_of_requests, index, NULL, status);
}

int tdm_hook_Testany(int lang, int count, MPI_Request array_of_requests[], int *index, int *flag,
                     MPI_Status *status)
{
    (void)lang;
    if (TDM_LIKELY(!tdm_monitor_receives_pending()))
        return testany_(count, array_of_requests, index, flag, status);
    return any_watched(0, count, array_of_requests, index, flag, status);
}

/* Waitsome and Testsome: statuses in completion order. */
static int some_watched(int wait, int incount, MPI_Request requests[], int *outcount, int indices[],
                        MPI_Status statuses[])
{
    watch w;
    MPI_Status *st = watch_take(&w, requests, incount, statuses);
    if (!st)
        return wait ? waitsome_(incount, requests, outcount, indices, statuses)
                    : testsome_(incount, requests, outcount, indices, statuses);
    int rc = wait ? waitsome_(incount, requests, outcount, indices, st)
                  : testsome_(incount, requests, outcount, indices, st);
    if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *outcount != MPI_UNDEFINED)
        watch_report(&w, rc, *outcount, indices, 0);
    watch_release(&w, statuses);
    return rc;
}

int tdm_hook_Waitsome(int lang, int incount, MPI_Request array_of_requests[], int *outcount,
                      int array_of_indices[], MPI_Status array_of_statuses[])
{
    (void)lang;
    if (TDM_LIKELY(!tdm_monitor_receives_pending()))
        return waitsome_(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    return some_watched(1, incount, array_of_requests, outcount, array_of_indices,
                        array_of_statuses);
}

int tdm_hook_Testsome(int lang, int incount, MPI_Request array_of_requests[], int *outcount,
                      int array_of_indices[], MPI_Status array_of_statuses[])
{
    (void)lang;
    if (TDM_LIKELY(!tdm_monitor_receives_pending()))
        return testsome_(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    return some_watched(0, incount, array_of_requests, outcount, array_of_indices,
                        array_of_statuses);
}

/* Waitall and Testall: one status per request. */
static int all_watched(int wait, int count, MPI_Request requests[], int *flag,
                       MPI_Status statuses[])
{
    watch w;
    MPI_Status *st = watch_take(&w, requests, count, statuses);
    if (!st)
        return wait ? waitall_(count, requests, statuses)
                    : testall_(count, requests, flag, statuses);
    int done = 1;
    int rc = wait ? waitall_(count, requests, st) : testall_(count, requests, &done, st);
    if (!wait)
        *flag = done;
    if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && done)
        watch_report(&w, rc, count, NULL, 1);
    watch_release(&w, statuses);
    return rc;
}

int tdm_hook_Waitall(int lang, int count, MPI_Request array_of_requests[],
                     MPI_Status array_of_statuses[])
{
    (void)lang;
    if (TDM_LIKELY(!tdm_monitor_receives_pending()))
        return waitall_(count, array_of_requests, array_of_statuses);
    return all_watched(1, count, array_of_requests, NULL, array_of_statuses);
}

int tdm_hook_Testall(int lang, int count, MPI_Request array_of_requests[], int *flag,
                     MPI_Status array_of_statuses[])
{
    (void)lang;
    if (TDM_LIKELY(!tdm_monitor_receives_pending()))
        return testall_(count, array_of_requests, flag, array_of_statuses);
    return all_watched(0, count, array_of_requests, flag, array_of_statuses);
}
