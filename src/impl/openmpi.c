/* Open MPI. Its Fortran bindings call PMPI_* directly, so Fortran calls reach
   Tandem only through Tandem's own Fortran entry points; its Fortran sentinels
   are common blocks named mpi_fortran_*_ (gfortran's mangling). */
#include <mpi.h>

#if defined(OPEN_MPI)
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
#endif
