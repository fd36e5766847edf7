/* MPICH (and its derivatives). Its mpif.h and mpi module bindings call
   MPI_*, so Tandem's C entry points would see Fortran calls too; Tandem's own
   Fortran entry points take precedence when the library is preloaded. Its
   mpi_f08 bindings call MPI_* only for the calls with a choice buffer, and
   PMPI_* for the others (MPI_Init and MPI_Wait among them). The Fortran
   sentinels of mpif.h (and of the mpi module) live in its common blocks:
     COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE(MPI_STATUS_SIZE)
     COMMON /MPIPRIV2/ MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1), MPI_ERRCODES_IGNORE(1)
     COMMON /MPIFCMB5/ MPI_UNWEIGHTED
     COMMON /MPIFCMB9/ MPI_WEIGHTS_EMPTY
   and those of mpi_f08 are variables: MPIR_F08_MPI_BOTTOM,
   MPIR_F08_MPI_IN_PLACE and MPIR_F08_MPI_STATUS(ES)_IGNORE_OBJ of mpi.h, and
   the module variables mpi_unweighted and mpi_weights_empty of libmpichfort's
   mpi_f08_link_constants (gfortran's names below). */
#include <mpi.h>

#if defined(MPICH_VERSION) && !defined(OPEN_MPI)
#include "impl/check.h"
#include "impl/impl.h"

#include <stdlib.h>

extern MPI_Fint mpipriv1_[] __attribute__((weak));
extern MPI_Fint mpipriv2_[] __attribute__((weak));
extern MPI_Fint mpifcmb5_[] __attribute__((weak));
extern MPI_Fint mpifcmb9_[] __attribute__((weak));
extern MPI_Fint f08_unweighted __asm__("__mpi_f08_link_constants_MOD_mpi_unweighted")
    __attribute__((weak));
extern MPI_Fint f08_weights_empty __asm__("__mpi_f08_link_constants_MOD_mpi_weights_empty")
    __attribute__((weak));

/* mpi.h of MPICH 4 declares the sentinels of mpi_f08 (libmpich defines
   them): whether 'address' is one of them. */
#if MPI_VERSION >= 4
#define F08_IS(address, object) ((const void *)(address) == (const void *)&(object))
#else
#define F08_IS(address, object) 0
#endif

const char *tdm_impl_family(void)
{
    return "MPICH";
}

const char *tdm_impl_windows_unserved(void)
{
    return NULL;
}

int tdm_impl_check_process_mpi(char *msg, size_t size)
{
    return tdm_impl_check_marker("MPICH", "MPIR_Err_create_code", msg, size);
}

/* A program may use mpif.h (or the mpi module) and mpi_f08 both; the common
   blocks and the module variables are absent (their address NULL) where it
   has not linked that binding. */
int tdm_impl_f_is_bottom(const void *address)
{
    return (mpipriv1_ && address == (const void *)&mpipriv1_[0]) ||
           F08_IS(address, MPIR_F08_MPI_BOTTOM);
}

int tdm_impl_f_is_in_place(const void *address)
{
    return (mpipriv1_ && address == (const void *)&mpipriv1_[1]) ||
           F08_IS(address, MPIR_F08_MPI_IN_PLACE);
}

int tdm_impl_f_is_status_ignore(const MPI_Fint *address)
{
    return (mpipriv1_ && address == &mpipriv1_[2]) ||
           F08_IS(address, MPIR_F08_MPI_STATUS_IGNORE_OBJ);
}

int tdm_impl_f_is_statuses_ignore(const MPI_Fint *address)
{
    return (mpipriv2_ && address == &mpipriv2_[0]) ||
           F08_IS(address, MPIR_F08_MPI_STATUSES_IGNORE_OBJ[0]);
}

int tdm_impl_f_is_unweighted(const MPI_Fint *address)
{
    return (mpifcmb5_ && address == mpifcmb5_) || (&f08_unweighted && address == &f08_unweighted);
}

int tdm_impl_f_is_weights_empty(const MPI_Fint *address)
{
    return (mpifcmb9_ && address == mpifcmb9_) ||
           (&f08_weights_empty && address == &f08_weights_empty);
}

int tdm_impl_grequest_polled(MPI_Grequest_query_function *query, MPI_Grequest_free_function *free,
                             MPI_Grequest_cancel_function *cancel,
                             int (*poll)(void *state, MPI_Status *status),
                             int (*wait)(int count, void **states, double timeout,
                                         MPI_Status *status),
                             void *state, MPI_Request *request)
{
    return MPIX_Grequest_start(query, free, cancel, poll, wait, state, request);
}

/* MPICH starts its request-based operations with the request complete or
   tracked inside its own progress. */
int tdm_impl_rma_requests_race(void)
{
    return 0;
}

/* MPICH polls generalized requests itself (MPIX_Grequest_start); its
   progress hooks are internal. */
int tdm_impl_progress_hook(int (*hook)(void))
{
    (void)hook;
    return -1;
}

int tdm_impl_waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    return PMPI_Waitall(count, requests, statuses);
}

/* A predefined datatype is a handle of MPICH's builtin kind (bits 30-31:
   01) and datatype class (bits 26-29: 0011), whose bits 8-15 hold its size
   in bytes (mpi.h: MPI_DOUBLE is 0x4c00080b); MPICH sizes them so itself
   (MPIR_Datatype_get_basic_size). Derived and pair types (MPI_FLOAT_INT is
   0x8c000000) and MPI_DATATYPE_NULL are asked, which also reports an
   invalid handle as before. */
int tdm_impl_type_size(MPI_Datatype datatype, int *size)
{
    unsigned handle = (unsigned)datatype;
    if ((handle & 0xfc000000u) == 0x4c000000u) {
        *size = (int)((handle >> 8) & 0xffu);
        return MPI_SUCCESS;
    }
    return PMPI_Type_size(datatype, size);
}

int tdm_impl_launch_local_rank(void)
{
    const char *text = getenv("MPI_LOCALRANKID");
    char *end;
    long rank = text ? strtol(text, &end, 10) : -1;
    return text && end != text && *end == '\0' && rank >= 0 && rank < 1 << 30 ? (int)rank : -1;
}

int tdm_impl_launch_shape(int *world, int *local)
{
    return tdm_impl_env_shape("PMI_SIZE", "MPI_LOCALNRANKS", world, local);
}

int tdm_impl_drive_windows(void)
{
    return 0; /* its probe moves one-sided traffic as all else */
}

const char *tdm_impl_before_threaded_init(void)
{
    /* ch4:ucx makes its UCX workers UCS_THREAD_MODE_SERIALIZED behind
       MPICH's own lock (impl/ucx_exit.c): UCX's locks are not taken. */
    return NULL;
}

/* MPIR_CVAR_NOLOCAL=1 sends to node mates through the network module. */
int tdm_impl_node_uses_shm(void)
{
    char unused[8];
    long long nolocal = 0;
    if (tdm_impl_cvar_read("MPIR_CVAR_NOLOCAL", unused, sizeof unused, &nolocal) != 0)
        return 1;
    return nolocal == 0;
}

long long tdm_impl_status_bytes(const MPI_Status *status)
{
    if (status->count_hi_and_cancelled & 1)
        return -1;
    unsigned long long high = (unsigned)status->count_hi_and_cancelled >> 1;
    return (long long)((high << (8 * sizeof(int))) + (unsigned)status->count_lo);
}

#endif
