/* Open MPI. Its Fortran bindings call PMPI_* directly, so Fortran calls reach
   Tandem only through Tandem's own Fortran entry points; its Fortran sentinels
   are common blocks named mpi_fortran_*_ (gfortran's mangling), the same for
   mpif.h, the mpi module and the mpi_f08 module. */
#include <mpi.h>

#if defined(OPEN_MPI)
#include "core/runtime.h"
#include "impl/check.h"
#include "impl/impl.h"
#include "impl/ompi_pml.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int mpi_fortran_bottom_ __attribute__((weak));
extern int mpi_fortran_in_place_ __attribute__((weak));
extern MPI_Fint mpi_fortran_status_ignore_[] __attribute__((weak));
extern MPI_Fint mpi_fortran_statuses_ignore_[] __attribute__((weak));
extern MPI_Fint mpi_fortran_unweighted_[] __attribute__((weak));
extern MPI_Fint mpi_fortran_weights_empty_[] __attribute__((weak));

const char *tdm_impl_family(void)
{
    return "Open MPI";
}

/* The windows the progress processes make are MPI_Win_create ones. On UCX
   (pml ucx: a cluster's InfiniBand, or OMPI_MCA_pml=ucx) they are osc/ucx's,
   as the program's own windows across hosts; on Open MPI's other transports
   they are osc/rdma's, with its wrong results (docs/ONESIDED.md). */
const char *tdm_impl_windows_unserved(void)
{
    const char *pml = tdm_ompi_pml_selected();
    if (pml && strcmp(pml, "ucx") == 0)
        return NULL;
    return "MPI_Win_allocate: Open MPI's own window, not the progress processes': on one host it "
           "completes operations without the target's calls already (osc sm), and off UCX "
           "(OMPI_MCA_pml=ucx) the windows the progress processes would make are osc/rdma's, "
           "which gives wrong results (docs/ONESIDED.md)";
}

int tdm_impl_check_process_mpi(char *msg, size_t size)
{
    return tdm_impl_check_marker("Open MPI", "ompi_comm_activate", msg, size);
}

int tdm_impl_f_is_bottom(const void *address)
{
    return &mpi_fortran_bottom_ && address == (const void *)&mpi_fortran_bottom_;
}

int tdm_impl_f_is_in_place(const void *address)
{
    return &mpi_fortran_in_place_ && address == (const void *)&mpi_fortran_in_place_;
}

int tdm_impl_f_is_status_ignore(const MPI_Fint *address)
{
    return mpi_fortran_status_ignore_ && address == mpi_fortran_status_ignore_;
}

int tdm_impl_f_is_statuses_ignore(const MPI_Fint *address)
{
    return mpi_fortran_statuses_ignore_ && address == mpi_fortran_statuses_ignore_;
}

int tdm_impl_f_is_unweighted(const MPI_Fint *address)
{
    return mpi_fortran_unweighted_ && address == mpi_fortran_unweighted_;
}

/* Open MPI's PMPI_Type_size reads the size off the datatype's object after
   its checks: 1.8 ns here, against MPICH's 3.3. */
int tdm_impl_type_size(MPI_Datatype datatype, int *size)
{
    return PMPI_Type_size(datatype, size);
}

int tdm_impl_f_is_weights_empty(const MPI_Fint *address)
{
    return mpi_fortran_weights_empty_ && address == mpi_fortran_weights_empty_;
}
/* Open MPI 4.1.4's MPI_Waitall never returns under MPI_THREAD_MULTIPLE when
   one of the requests fails (seen with a truncated receive: always with one
   process, often with two or four), while MPI_Wait on that request returns.
   An application that asked for less than MPI_THREAD_MULTIPLE would not meet
   this without Tandem, so at that level Tandem waits for the requests one by
   one and puts the statuses together as MPI_Waitall would. Below it,
   MPI_Waitall is left alone. (A loop of MPI_Waitsome calls, the earlier
   workaround, scanned the whole array once per completion: it cost a third of
   the 8-byte message rate.) */
int tdm_impl_grequest_polled(MPI_Grequest_query_function *query, MPI_Grequest_free_function *free,
                             MPI_Grequest_cancel_function *cancel,
                             int (*poll)(void *state, MPI_Status *status),
                             int (*wait)(int count, void **states, double timeout,
                                         MPI_Status *status),
                             void *state, MPI_Request *request)
{
    (void)query, (void)free, (void)cancel, (void)poll, (void)wait, (void)state, (void)request;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

/* Seen as a hang in MPI_Waitall on an MPI_Rget across 2 simulated hosts
   with Tandem's thread polling while the request was out, 11 of 120
   launches of bench/heat3d.c (docs/PERFORMANCE.md, "Open MPI's one-sided
   requests beside the thread"). */
int tdm_impl_rma_requests_race(void)
{
    const char *pml = tdm_ompi_pml_selected();
    return pml && strcmp(pml, "ucx") == 0;
}

/* opal_progress, the loop that every wait, test and probe of Open MPI's
   runs (and Tandem's thread while windows exist: tdm_impl_drive_windows),
   calls the functions given to opal_progress_register, exported by
   libopen-pal since Open MPI 1.x. */
int tdm_impl_progress_hook(int (*hook)(void))
{
    int (*add)(int (*)(void));
    *(void **)&add = dlsym(RTLD_DEFAULT, "opal_progress_register");
    return add && add(hook) == 0 ? 0 : -1;
}

int tdm_impl_waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    if (count <= 1 || tdm_mpi_thread_level < MPI_THREAD_MULTIPLE || !requests)
        return PMPI_Waitall(count, requests, statuses);
    for (int i = 0; i < count; i++)
        if (!requests[i]) /* an invalid handle: the MPI library reports it, completing nothing */
            return PMPI_Waitall(count, requests, statuses);
    int ignore = statuses == MPI_STATUSES_IGNORE;
    int failed = 0;
    for (int i = 0; i < count; i++) {
        int error = PMPI_Wait(&requests[i], ignore ? MPI_STATUS_IGNORE : &statuses[i]);
        failed |= error != MPI_SUCCESS;
        if (!ignore)
            statuses[i].MPI_ERROR = error;
    }
    return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

/* Whether a comma-separated component list names vader or sm. */
static int names_shm(const char *list)
{
    char copy[512];
    snprintf(copy, sizeof copy, "%s", list);
    char *saved;
    for (char *item = strtok_r(copy, ",", &saved); item; item = strtok_r(NULL, ",", &saved))
        if (strcmp(item, "vader") == 0 || strcmp(item, "sm") == 0)
            return 1;
    return 0;
}

int tdm_impl_launch_local_rank(void)
{
    const char *text = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    char *end;
    long rank = text ? strtol(text, &end, 10) : -1;
    return text && end != text && *end == '\0' && rank >= 0 && rank < 1 << 30 ? (int)rank : -1;
}

int tdm_impl_launch_shape(int *world, int *local)
{
    return tdm_impl_env_shape("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", world, local);
}

/* Under MPI_THREAD_MULTIPLE, Open MPI's pml/ucx and osc/ucx make their UCX
   workers UCS_THREAD_MODE_MULTI, and UCX guards each with a spinlock unless
   UCX_USE_MT_MUTEX says otherwise. With Tandem's thread polling beside the
   application's, a 1 MiB MPI_Get across two hosts (osc/ucx, TCP, 10 Gbit/s)
   then took 8 or 16 ms instead of 0.9-1.3 now and then, in every poll
   policy and placement of the thread (on 2 cores, and on the 16-core
   machine, where a host's ranks had CPUs to spare); with the mutex, 1.1-1.3
   ms (docs/PERFORMANCE.md, "UCX's lock"). */
const char *tdm_impl_before_threaded_init(void)
{
    if (getenv("UCX_USE_MT_MUTEX"))
        return NULL;
    setenv("UCX_USE_MT_MUTEX", "y", 1);
    return "UCX_USE_MT_MUTEX=y";
}

/* On UCX, MPI_Iprobe (the thread's probe) runs opal_progress, which moves
   osc/ucx's workers and with them the one-sided traffic, only once in
   opal_common_ucx_progress_iterations (100) calls, so a target's thread
   served gets and puts a hundredth of its polls. While windows exist the
   thread runs it on every poll. On 2 cores, 2 hosts, Open MPI on UCX, a
   1 MiB get from a target that computes: see docs/PERFORMANCE.md, "Every
   poll moves Open MPI's one-sided traffic". */
static void (*opal_progress_fn)(void);
static pthread_once_t opal_progress_once = PTHREAD_ONCE_INIT;

static void find_opal_progress(void)
{
    const char *pml = tdm_ompi_pml_selected();
    if (pml && strcmp(pml, "ucx") == 0)
        *(void **)&opal_progress_fn = dlsym(RTLD_DEFAULT, "opal_progress");
}

int tdm_impl_drive_windows(void)
{
    pthread_once(&opal_progress_once, find_opal_progress);
    if (!opal_progress_fn)
        return 0;
    opal_progress_fn();
    return 1;
}

/* The btl selection: "self,tcp" includes only those; "^tcp" excludes. */
int tdm_impl_node_uses_shm(void)
{
    char btl[512] = "";
    long long unused;
    if (tdm_impl_cvar_read("btl", btl, sizeof btl, &unused) != 0 || btl[0] == '\0')
        return 1;
    return btl[0] == '^' ? !names_shm(btl + 1) : names_shm(btl);
}

long long tdm_impl_status_bytes(const MPI_Status *status)
{
    return status->_cancelled ? -1 : (long long)status->_ucount;
}

#endif
