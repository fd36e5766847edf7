/* Open MPI. Its Fortran bindings call PMPI_* directly, so Fortran calls reach
   Tandem only through Tandem's own Fortran entry points; its Fortran sentinels
   are common blocks named mpi_fortran_*_ (gfortran's mangling). */
#include <mpi.h>
#include <stdlib.h>

#if defined(OPEN_MPI)
#include "core/runtime.h"
#include "impl/check.h"
#include "impl/impl.h"

extern int mpi_fortran_bottom_ __attribute__((weak));
extern int mpi_fortran_in_place_ __attribute__((weak));
extern MPI_Fint mpi_fortran_status_ignore_[] __attribute__((weak));
extern MPI_Fint mpi_fortran_statuses_ignore_[] __attribute__((weak));

const char *tdm_impl_family(void)
{
    return "Open MPI";
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
/* Open MPI 4.1.4's MPI_Waitall never returns under MPI_THREAD_MULTIPLE when
   one of the requests fails (seen with a truncated receive: always with one
   process, often with two or four), while MPI_Waitsome returns. An application
   that asked for less than MPI_THREAD_MULTIPLE would not meet this without
   Tandem, so at that level Tandem waits with MPI_Waitsome calls and puts the
   statuses together as MPI_Waitall would. Below it, MPI_Waitall is left alone:
   the Waitsome loop cost 7-20% of the 8-byte message rate here. */
int tdm_impl_waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    enum { STACK = 16 };
    if (count <= 1 || tdm_mpi_thread_level < MPI_THREAD_MULTIPLE)
        return PMPI_Waitall(count, requests, statuses);
    int stack_indices[STACK];
    MPI_Status stack_statuses[STACK];
    int *indices = count <= STACK ? stack_indices : malloc(sizeof(int) * (size_t)count);
    MPI_Status *some = count <= STACK ? stack_statuses : malloc(sizeof(MPI_Status) * (size_t)count);
    if (!indices || !some) {
        if (indices != stack_indices)
            free(indices);
        if (some != stack_statuses)
            free(some);
        return PMPI_Waitall(count, requests, statuses);
    }
    int ignore = statuses == MPI_STATUSES_IGNORE;
    for (int i = 0; !ignore && i < count; i++) /* what a null request reports */
        tdm_status_empty(&statuses[i]);
    int rc = MPI_SUCCESS, failed = 0;
    for (;;) {
        int done = 0;
        int some_rc = PMPI_Waitsome(count, requests, &done, indices, some);
        if (some_rc != MPI_SUCCESS && some_rc != MPI_ERR_IN_STATUS) {
            rc = some_rc;
            break;
        }
        if (done == MPI_UNDEFINED)
            break;
        for (int k = 0; k < done; k++) {
            int error = some_rc == MPI_ERR_IN_STATUS ? some[k].MPI_ERROR : MPI_SUCCESS;
            failed |= error != MPI_SUCCESS;
            if (!ignore) {
                statuses[indices[k]] = some[k];
                statuses[indices[k]].MPI_ERROR = error;
            }
        }
    }
    if (indices != stack_indices)
        free(indices);
    if (some != stack_statuses)
        free(some);
    return rc == MPI_SUCCESS && failed ? MPI_ERR_IN_STATUS : rc;
}

long long tdm_impl_status_bytes(const MPI_Status *status)
{
    return status->_cancelled ? -1 : (long long)status->_ucount;
}

#endif
