/* Any other MPI: no process check and no known Fortran sentinels, so Fortran
   programs must not pass MPI_BOTTOM, MPI_IN_PLACE, the status sentinels,
   MPI_UNWEIGHTED or MPI_WEIGHTS_EMPTY. */
#include <mpi.h>

#if !defined(OPEN_MPI) && !defined(MPICH_VERSION)
#include "impl/impl.h"

const char *tdm_impl_family(void)
{
    return "MPI";
}

const char *tdm_impl_windows_unserved(void)
{
    return NULL;
}

int tdm_impl_launch_local_rank(void)
{
    return -1;
}

int tdm_impl_check_process_mpi(char *msg, size_t size)
{
    (void)msg;
    (void)size;
    return 0;
}

int tdm_impl_f_is_bottom(const void *address)
{
    return address == NULL;
}

int tdm_impl_f_is_in_place(const void *address)
{
    (void)address;
    return 0;
}

int tdm_impl_f_is_status_ignore(const MPI_Fint *address)
{
    (void)address;
    return 0;
}

int tdm_impl_f_is_statuses_ignore(const MPI_Fint *address)
{
    (void)address;
    return 0;
}

int tdm_impl_f_is_unweighted(const MPI_Fint *address)
{
    (void)address;
    return 0;
}

int tdm_impl_type_size(MPI_Datatype datatype, int *size)
{
    return PMPI_Type_size(datatype, size);
}

int tdm_impl_f_is_weights_empty(const MPI_Fint *address)
{
    (void)address;
    return 0;
}
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

int tdm_impl_rma_requests_race(void)
{
    return 0;
}

int tdm_impl_progress_hook(int (*hook)(void))
{
    (void)hook;
    return -1;
}

int tdm_impl_waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    return PMPI_Waitall(count, requests, statuses);
}

int tdm_impl_launch_shape(int *world, int *local)
{
    *world = *local = -1;
    return -1;
}

int tdm_impl_drive_windows(void)
{
    return 0; /* its probe moves one-sided traffic as all else */
}

const char *tdm_impl_before_threaded_init(void)
{
    return NULL;
}

int tdm_impl_node_uses_shm(void)
{
    return 1; /* as MPI libraries do unless told otherwise */
}

long long tdm_impl_status_bytes(const MPI_Status *status)
{
    int cancelled = 0;
    MPI_Count bytes = 0;
    PMPI_Test_cancelled(status, &cancelled);
    if (cancelled)
        return -1;
    PMPI_Get_elements_x(status, MPI_BYTE, &bytes);
    return bytes;
}

#endif
