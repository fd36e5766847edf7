/*
 * Fortran programs as virtual ranks (`tandem fc`, docs/VIRTUAL.md): the
 * entry points of mpif.h and the mpi module under gfortran's names
 * (mpi_send_), which take Fortran's arguments, all by reference, and call
 * the TMPI_* functions. Most are generated into gen_fortran.inc
 * (tools/gen_virt_fortran.py), included at the end; those whose Fortran
 * form differs from C's are written here, with the conversions all share.
 * The process-local functions (datatypes, operations, MPI_Get_count...)
 * keep the real MPI's Fortran library, linked after this one.
 *
 * Handles. Datatypes, operations, infos and error handlers are the real
 * MPI's (its MPI_Type_f2c and kin). Communicators, groups, requests and
 * messages are the runtime's: numbers below 2^31 in C (src/virt/api.c),
 * the same numbers in Fortran, except the predefined ones (MPI_COMM_WORLD,
 * MPI_REQUEST_NULL...), whose Fortran values are the real MPI's, as its
 * mpif.h states them.
 *
 * Sentinels. MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE,
 * MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are variables of common blocks,
 * recognised by their address (as src/impl/ does for the main library):
 * Open MPI's mpi_fortran_*_, MPICH's MPIPRIV1 (MPI_BOTTOM, MPI_IN_PLACE,
 * MPI_STATUS_IGNORE), MPIPRIV2 (MPI_STATUSES_IGNORE), MPIFCMB5 and
 * MPIFCMB9. A program that never names one has no such block: its address
 * is then NULL and nothing matches it.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tmpi.h"

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran's default INTEGER is C's int");

/* A Fortran status: MPI_STATUS_SIZE integers, the C status's (Open MPI 6,
   MPICH 5). */
enum { F_STATUS_SIZE = sizeof(MPI_Status) / sizeof(MPI_Fint) };

#if defined(OPEN_MPI)
extern MPI_Fint mpi_fortran_bottom_[] __attribute__((weak));
extern MPI_Fint mpi_fortran_in_place_[] __attribute__((weak));
extern MPI_Fint mpi_fortran_status_ignore_[] __attribute__((weak));
extern MPI_Fint mpi_fortran_statuses_ignore_[] __attribute__((weak));
extern MPI_Fint mpi_fortran_unweighted_[] __attribute__((weak));
extern MPI_Fint mpi_fortran_weights_empty_[] __attribute__((weak));
#define F_BOTTOM mpi_fortran_bottom_
#define F_IN_PLACE mpi_fortran_in_place_
#define F_STATUS_IGNORE mpi_fortran_status_ignore_
#define F_STATUSES_IGNORE mpi_fortran_statuses_ignore_
#define F_UNWEIGHTED mpi_fortran_unweighted_
#define F_WEIGHTS_EMPTY mpi_fortran_weights_empty_
#else
extern MPI_Fint mpipriv1_[] __attribute__((weak));
extern MPI_Fint mpipriv2_[] __attribute__((weak));
extern MPI_Fint mpifcmb5_[] __attribute__((weak));
extern MPI_Fint mpifcmb9_[] __attribute__((weak));
#define F_BOTTOM mpipriv1_
#define F_IN_PLACE (mpipriv1_ ? mpipriv1_ + 1 : NULL)
#define F_STATUS_IGNORE (mpipriv1_ ? mpipriv1_ + 2 : NULL)
#define F_STATUSES_IGNORE mpipriv2_
#define F_UNWEIGHTED mpifcmb5_
#define F_WEIGHTS_EMPTY mpifcmb9_
#endif

static int is(const void *address, const MPI_Fint *sentinel)
{
    return sentinel && address == (const void *)sentinel;
}

/* --- Conversions --------------------------------------------------------- */

static void *tdm_virt_f_buffer(void *address)
{
    if (is(address, F_BOTTOM))
        return MPI_BOTTOM;
    if (is(address, F_IN_PLACE))
        return MPI_IN_PLACE;
    return address;
}

static int *tdm_virt_f_weights(MPI_Fint *weights)
{
    if (is(weights, F_UNWEIGHTED))
        return MPI_UNWEIGHTED;
    if (is(weights, F_WEIGHTS_EMPTY))
        return MPI_WEIGHTS_EMPTY;
    return weights;
}

static int tdm_virt_f_status_ignored(const MPI_Fint *status)
{
    return is(status, F_STATUS_IGNORE);
}

static int tdm_virt_f_statuses_ignored(const MPI_Fint *statuses)
{
    return is(statuses, F_STATUSES_IGNORE);
}

static void tdm_virt_c2f_status(const MPI_Status *c, MPI_Fint *f)
{
    if (!tdm_virt_f_status_ignored(f))
        PMPI_Status_c2f(c, f);
}

/* Room for 'count' C statuses, or NULL where the program passed
   MPI_STATUSES_IGNORE (or memory ran out). */
static MPI_Status *tdm_virt_f_statuses(const MPI_Fint *f, int count)
{
    if (tdm_virt_f_statuses_ignored(f))
        return NULL;
    return calloc((size_t)(count > 0 ? count : 1), sizeof(MPI_Status));
}

static void tdm_virt_c2f_statuses(const MPI_Status *c, MPI_Fint *f, int count)
{
    for (int i = 0; c && i < count; i++)
        PMPI_Status_c2f(&c[i], f + (size_t)i * F_STATUS_SIZE);
}

/* The runtime's handles: the real MPI's Fortran values for the predefined
   ones, the number itself for the others. */
#define VIRTUAL_HANDLE(kind, type, convert, first, second, third) \
    static type tdm_virt_f_##kind(MPI_Fint f)                     \
    {                                                             \
        if (f == convert(first))                                  \
            return first;                                         \
        if (f == convert(second))                                 \
            return second;                                        \
        if (f == convert(third))                                  \
            return third;                                         \
        return (type)(uintptr_t)(unsigned)f;                      \
    }                                                             \
    static MPI_Fint tdm_virt_c2f_##kind(type c)                   \
    {                                                             \
        if (c == first || c == second || c == third)              \
            return convert(c);                                    \
        return (MPI_Fint)(uintptr_t)c;                            \
    }

VIRTUAL_HANDLE(comm, MPI_Comm, PMPI_Comm_c2f, MPI_COMM_WORLD, MPI_COMM_SELF, MPI_COMM_NULL)
VIRTUAL_HANDLE(group, MPI_Group, PMPI_Group_c2f, MPI_GROUP_EMPTY, MPI_GROUP_NULL, MPI_GROUP_NULL)
VIRTUAL_HANDLE(request, MPI_Request, PMPI_Request_c2f, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
               MPI_REQUEST_NULL)
VIRTUAL_HANDLE(message, MPI_Message, PMPI_Message_c2f, MPI_MESSAGE_NULL, MPI_MESSAGE_NO_PROC,
               MPI_MESSAGE_NULL)

/* 'count' requests in C, or NULL without memory. */
static MPI_Request *tdm_virt_f_requests(const MPI_Fint *f, int count)
{
    MPI_Request *c = malloc(sizeof *c * (size_t)(count > 0 ? count : 1));
    for (int i = 0; c && i < count; i++)
        c[i] = tdm_virt_f_request(f[i]);
    return c;
}

static void tdm_virt_c2f_requests(const MPI_Request *c, MPI_Fint *f, int count)
{
    for (int i = 0; i < count; i++)
        f[i] = tdm_virt_c2f_request(c[i]);
}

/* A function of the MPI standard that the runtime does not implement. */
__attribute__((noreturn)) static void unsupported(const char *name)
{
    fprintf(stderr,
            "tandem virt: %s (called from Fortran) is not supported by Tandem's virtual ranks "
            "yet (docs/VIRTUAL.md)\n",
            name);
    fflush(stderr);
    PMPI_Abort(MPI_COMM_WORLD, 1);
    abort();
}

#define TDM_VIRT_F_UNSUPPORTED(symbol, name) \
    TMPI_EXPORT void symbol(void);           \
    TMPI_EXPORT void symbol(void)            \
    {                                        \
        unsupported(name);                   \
    }

/* --- Entry points whose Fortran form differs from C's -------------------- */

TMPI_EXPORT void mpi_init_(MPI_Fint *ierror);
TMPI_EXPORT void mpi_init_(MPI_Fint *ierror)
{
    *ierror = TMPI_Init(NULL, NULL);
}

TMPI_EXPORT void mpi_init_thread_(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror);
TMPI_EXPORT void mpi_init_thread_(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    *ierror = TMPI_Init_thread(NULL, NULL, *required, provided);
}

TMPI_EXPORT double mpi_wtime_(void);
TMPI_EXPORT double mpi_wtime_(void)
{
    return TMPI_Wtime();
}

TMPI_EXPORT double mpi_wtick_(void);
TMPI_EXPORT double mpi_wtick_(void)
{
    return TMPI_Wtick();
}

/* Fortran has no use for the buffer's address (the argument is a choice
   buffer, left as it is). */
TMPI_EXPORT void mpi_buffer_detach_(void *buffer_addr, MPI_Fint *size, MPI_Fint *ierror);
TMPI_EXPORT void mpi_buffer_detach_(void *buffer_addr, MPI_Fint *size, MPI_Fint *ierror)
{
    (void)buffer_addr;
    void *address;
    *ierror = TMPI_Buffer_detach(&address, size);
}

/* MPI_Waitany and MPI_Testany: Fortran's index counts from 1. */
static void one_based(MPI_Fint *index)
{
    if (*index != MPI_UNDEFINED)
        (*index)++;
}

TMPI_EXPORT void mpi_waitany_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
                              MPI_Fint *status, MPI_Fint *ierror);
TMPI_EXPORT void mpi_waitany_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
                              MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Request *c = tdm_virt_f_requests(requests, *count);
    if (!c) {
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    MPI_Status s = {0};
    *ierror =
        TMPI_Waitany(*count, c, index, tdm_virt_f_status_ignored(status) ? MPI_STATUS_IGNORE : &s);
    tdm_virt_c2f_requests(c, requests, *count);
    free(c);
    if (*ierror == MPI_SUCCESS) {
        one_based(index);
        tdm_virt_c2f_status(&s, status);
    }
}

TMPI_EXPORT void mpi_testany_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
                              MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror);
TMPI_EXPORT void mpi_testany_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
                              MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Request *c = tdm_virt_f_requests(requests, *count);
    if (!c) {
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    MPI_Status s = {0};
    *ierror = TMPI_Testany(*count, c, index, flag,
                           tdm_virt_f_status_ignored(status) ? MPI_STATUS_IGNORE : &s);
    tdm_virt_c2f_requests(c, requests, *count);
    free(c);
    if (*ierror == MPI_SUCCESS && *flag) {
        one_based(index);
        tdm_virt_c2f_status(&s, status);
    }
}

/* MPI_Alltoallw: a datatype per rank of the communicator, each side (the
   send side's unread with MPI_IN_PLACE). */
TMPI_EXPORT void mpi_alltoallw_(void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls,
                                const MPI_Fint *sendtypes, void *recvbuf,
                                const MPI_Fint *recvcounts, const MPI_Fint *rdispls,
                                const MPI_Fint *recvtypes, const MPI_Fint *comm, MPI_Fint *ierror);
TMPI_EXPORT void mpi_alltoallw_(void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls,
                                const MPI_Fint *sendtypes, void *recvbuf,
                                const MPI_Fint *recvcounts, const MPI_Fint *rdispls,
                                const MPI_Fint *recvtypes, const MPI_Fint *comm, MPI_Fint *ierror)
{
    MPI_Comm c = tdm_virt_f_comm(*comm);
    int size = 0;
    if ((*ierror = TMPI_Comm_size(c, &size)) != MPI_SUCCESS)
        return;
    MPI_Datatype *types = malloc(sizeof *types * (size_t)(2 * size + 1));
    if (!types) {
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    void *send = tdm_virt_f_buffer(sendbuf);
    for (int i = 0; i < size; i++) {
        types[i] = send == MPI_IN_PLACE ? MPI_DATATYPE_NULL : PMPI_Type_f2c(sendtypes[i]);
        types[size + i] = PMPI_Type_f2c(recvtypes[i]);
    }
    *ierror = TMPI_Alltoallw(send, sendcounts, sdispls, types, tdm_virt_f_buffer(recvbuf),
                             recvcounts, rdispls, types + size, c);
    free(types);
}

/* Open MPI's mpi_f08 module: the entry points above with ierror optional
   (its statuses are mpif.h's there: the C layout). MPI_Wtime and
   MPI_Wtick of that module are the C functions, the real MPI's. MPICH's
   mpi_f08 passes its buffers as Fortran descriptors: not supported. */
#if defined(OPEN_MPI)
static void optional(MPI_Fint *ierror, MPI_Fint rc)
{
    if (ierror)
        *ierror = rc;
}

TMPI_EXPORT void mpi_init_f08_(MPI_Fint *ierror);
TMPI_EXPORT void mpi_init_f08_(MPI_Fint *ierror)
{
    MPI_Fint rc;
    mpi_init_(&rc);
    optional(ierror, rc);
}

TMPI_EXPORT void mpi_init_thread_f08_(const MPI_Fint *required, MPI_Fint *provided,
                                      MPI_Fint *ierror);
TMPI_EXPORT void mpi_init_thread_f08_(const MPI_Fint *required, MPI_Fint *provided,
                                      MPI_Fint *ierror)
{
    MPI_Fint rc;
    mpi_init_thread_(required, provided, &rc);
    optional(ierror, rc);
}

TMPI_EXPORT void mpi_buffer_detach_f08_(void *buffer_addr, MPI_Fint *size, MPI_Fint *ierror);
TMPI_EXPORT void mpi_buffer_detach_f08_(void *buffer_addr, MPI_Fint *size, MPI_Fint *ierror)
{
    MPI_Fint rc;
    mpi_buffer_detach_(buffer_addr, size, &rc);
    optional(ierror, rc);
}

TMPI_EXPORT void mpi_waitany_f08_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
                                  MPI_Fint *status, MPI_Fint *ierror);
TMPI_EXPORT void mpi_waitany_f08_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
                                  MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Fint rc;
    mpi_waitany_(count, requests, index, status, &rc);
    optional(ierror, rc);
}

TMPI_EXPORT void mpi_testany_f08_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
                                  MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror);
TMPI_EXPORT void mpi_testany_f08_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
                                  MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Fint rc;
    mpi_testany_(count, requests, index, flag, status, &rc);
    optional(ierror, rc);
}

TMPI_EXPORT void mpi_alltoallw_f08_(void *sendbuf, const MPI_Fint *sendcounts,
                                    const MPI_Fint *sdispls, const MPI_Fint *sendtypes,
                                    void *recvbuf, const MPI_Fint *recvcounts,
                                    const MPI_Fint *rdispls, const MPI_Fint *recvtypes,
                                    const MPI_Fint *comm, MPI_Fint *ierror);
TMPI_EXPORT void mpi_alltoallw_f08_(void *sendbuf, const MPI_Fint *sendcounts,
                                    const MPI_Fint *sdispls, const MPI_Fint *sendtypes,
                                    void *recvbuf, const MPI_Fint *recvcounts,
                                    const MPI_Fint *rdispls, const MPI_Fint *recvtypes,
                                    const MPI_Fint *comm, MPI_Fint *ierror)
{
    MPI_Fint rc;
    mpi_alltoallw_(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                   comm, &rc);
    optional(ierror, rc);
}
#endif

#include "gen_fortran.inc"
