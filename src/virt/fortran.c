/*
 * Fortran programs as virtual ranks (`tandem fc`, docs/VIRTUAL.md): the
 * entry points of mpif.h and the mpi module under gfortran's names
 * (mpi_send_), which take Fortran's arguments, all by reference, and call
 * the TMPI_* functions; and those of the mpi_f08 module (mpi_send_f08_ on
 * Open MPI, mpi_send_f08ts_ on MPICH, whose array sections are read from
 * gfortran's descriptors, below). Most are generated into gen_fortran.inc
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
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmpi.h"
#include "virt/attr.h"
#include "virt/queue.h"

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
/* MPICH's mpi_f08 module has its own (declared by mpi.h, defined by the
   Fortran library). */
#pragma weak MPIR_F08_MPI_BOTTOM
#pragma weak MPIR_F08_MPI_IN_PLACE
#pragma weak MPIR_F08_MPI_STATUS_IGNORE_OBJ
#pragma weak MPIR_F08_MPI_STATUSES_IGNORE_OBJ
extern MPI_Fint __mpi_f08_link_constants_MOD_mpi_unweighted[] __attribute__((weak));
extern MPI_Fint __mpi_f08_link_constants_MOD_mpi_weights_empty[] __attribute__((weak));
#define F08_BOTTOM (&MPIR_F08_MPI_BOTTOM)
#define F08_IN_PLACE (&MPIR_F08_MPI_IN_PLACE)
#define F08_STATUS_IGNORE (&MPIR_F08_MPI_STATUS_IGNORE_OBJ)
#define F08_STATUSES_IGNORE MPIR_F08_MPI_STATUSES_IGNORE_OBJ
#define F08_UNWEIGHTED __mpi_f08_link_constants_MOD_mpi_unweighted
#define F08_WEIGHTS_EMPTY __mpi_f08_link_constants_MOD_mpi_weights_empty
#endif
#if defined(OPEN_MPI)
#define F08_STATUS_IGNORE NULL
#define F08_STATUSES_IGNORE NULL
#define F08_UNWEIGHTED NULL
#define F08_WEIGHTS_EMPTY NULL
#endif

static int is(const void *address, const void *sentinel)
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
    if (is(weights, F_UNWEIGHTED) || is(weights, F08_UNWEIGHTED))
        return MPI_UNWEIGHTED;
    if (is(weights, F_WEIGHTS_EMPTY) || is(weights, F08_WEIGHTS_EMPTY))
        return MPI_WEIGHTS_EMPTY;
    return weights;
}

static int tdm_virt_f_status_ignored(const MPI_Fint *status)
{
    return is(status, F_STATUS_IGNORE) || is(status, F08_STATUS_IGNORE);
}

static int tdm_virt_f_statuses_ignored(const MPI_Fint *statuses)
{
    return is(statuses, F_STATUSES_IGNORE) || is(statuses, F08_STATUSES_IGNORE);
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

/* --- Names, the real MPI's handles, MPI_Waitsome -------------------------- */

/* Fortran's strings come with their length after every argument
   (gfortran's hidden argument), padded with blanks. */
TMPI_EXPORT void mpi_comm_set_name_(const MPI_Fint *comm, const char *name, MPI_Fint *ierror,
                                    size_t length);
TMPI_EXPORT void mpi_comm_set_name_(const MPI_Fint *comm, const char *name, MPI_Fint *ierror,
                                    size_t length)
{
    while (length > 0 && name[length - 1] == ' ')
        length--;
    char text[MPI_MAX_OBJECT_NAME];
    snprintf(text, sizeof text, "%.*s", (int)length, name);
    *ierror = TMPI_Comm_set_name(tdm_virt_f_comm(*comm), text);
}

TMPI_EXPORT void mpi_comm_get_name_(const MPI_Fint *comm, char *name, MPI_Fint *resultlen,
                                    MPI_Fint *ierror, size_t length);
TMPI_EXPORT void mpi_comm_get_name_(const MPI_Fint *comm, char *name, MPI_Fint *resultlen,
                                    MPI_Fint *ierror, size_t length)
{
    char text[MPI_MAX_OBJECT_NAME];
    int n = 0;
    *ierror = TMPI_Comm_get_name(tdm_virt_f_comm(*comm), text, &n);
    if (*ierror != MPI_SUCCESS)
        return;
    size_t kept = (size_t)n < length ? (size_t)n : length;
    memcpy(name, text, kept);
    memset(name + kept, ' ', length - kept);
    *resultlen = (MPI_Fint)kept;
}

TMPI_EXPORT void mpi_comm_get_info_(const MPI_Fint *comm, MPI_Fint *info, MPI_Fint *ierror);
TMPI_EXPORT void mpi_comm_get_info_(const MPI_Fint *comm, MPI_Fint *info, MPI_Fint *ierror)
{
    MPI_Info c = MPI_INFO_NULL;
    if ((*ierror = TMPI_Comm_get_info(tdm_virt_f_comm(*comm), &c)) == MPI_SUCCESS)
        *info = PMPI_Info_c2f(c);
}

TMPI_EXPORT void mpi_comm_get_errhandler_(const MPI_Fint *comm, MPI_Fint *errhandler,
                                          MPI_Fint *ierror);
TMPI_EXPORT void mpi_comm_get_errhandler_(const MPI_Fint *comm, MPI_Fint *errhandler,
                                          MPI_Fint *ierror)
{
    MPI_Errhandler c = MPI_ERRHANDLER_NULL;
    if ((*ierror = TMPI_Comm_get_errhandler(tdm_virt_f_comm(*comm), &c)) == MPI_SUCCESS)
        *errhandler = PMPI_Errhandler_c2f(c);
}

/* A handler of the program's: a Fortran subroutine (COMM, ERROR_CODE). */
TMPI_EXPORT void mpi_comm_create_errhandler_(void (*fn)(void), MPI_Fint *errhandler,
                                             MPI_Fint *ierror);
TMPI_EXPORT void mpi_comm_create_errhandler_(void (*fn)(void), MPI_Fint *errhandler,
                                             MPI_Fint *ierror)
{
    MPI_Errhandler c = MPI_ERRHANDLER_NULL;
    if ((*ierror = tdm_virt_errhandler_create(fn, 1, &c)) == MPI_SUCCESS)
        *errhandler = PMPI_Errhandler_c2f(c);
}

TMPI_EXPORT void mpi_comm_create_errhandler_f08_(void (*fn)(void), MPI_Fint *errhandler,
                                                 MPI_Fint *ierror);
TMPI_EXPORT void mpi_comm_create_errhandler_f08_(void (*fn)(void), MPI_Fint *errhandler,
                                                 MPI_Fint *ierror)
{
    MPI_Fint rc;
    mpi_comm_create_errhandler_(fn, errhandler, &rc);
    if (ierror)
        *ierror = rc;
}

TMPI_EXPORT void mpi_pcontrol_(const MPI_Fint *level, MPI_Fint *ierror);
TMPI_EXPORT void mpi_pcontrol_(const MPI_Fint *level, MPI_Fint *ierror)
{
    *ierror = TMPI_Pcontrol(*level);
}

/* MPI_Waitsome and MPI_Testsome: the indices count from 1. */
static void f_some(int wait, const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                   MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierror)
{
    MPI_Request *c = tdm_virt_f_requests(requests, *incount);
    MPI_Status *st = tdm_virt_f_statuses(statuses, *incount);
    if (!c || (!st && !tdm_virt_f_statuses_ignored(statuses))) {
        free(c);
        free(st);
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    MPI_Status *given = st ? st : MPI_STATUSES_IGNORE;
    *ierror = wait ? TMPI_Waitsome(*incount, c, outcount, indices, given)
                   : TMPI_Testsome(*incount, c, outcount, indices, given);
    tdm_virt_c2f_requests(c, requests, *incount);
    for (int i = 0; *outcount != MPI_UNDEFINED && i < *outcount; i++)
        indices[i]++;
    if (*outcount != MPI_UNDEFINED)
        tdm_virt_c2f_statuses(st, statuses, *outcount);
    free(c);
    free(st);
}

TMPI_EXPORT void mpi_waitsome_(const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                               MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierror);
TMPI_EXPORT void mpi_waitsome_(const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                               MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierror)
{
    f_some(1, incount, requests, outcount, indices, statuses, ierror);
}

TMPI_EXPORT void mpi_testsome_(const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                               MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierror);
TMPI_EXPORT void mpi_testsome_(const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                               MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierror)
{
    f_some(0, incount, requests, outcount, indices, statuses, ierror);
}

/* Their mpi_f08 forms: ierror optional (a string's length still last). */
TMPI_EXPORT void mpi_comm_set_name_f08_(const MPI_Fint *comm, const char *name, MPI_Fint *ierror,
                                        size_t length);
TMPI_EXPORT void mpi_comm_set_name_f08_(const MPI_Fint *comm, const char *name, MPI_Fint *ierror,
                                        size_t length)
{
    MPI_Fint rc;
    mpi_comm_set_name_(comm, name, &rc, length);
    if (ierror)
        *ierror = rc;
}

TMPI_EXPORT void mpi_comm_get_name_f08_(const MPI_Fint *comm, char *name, MPI_Fint *resultlen,
                                        MPI_Fint *ierror, size_t length);
TMPI_EXPORT void mpi_comm_get_name_f08_(const MPI_Fint *comm, char *name, MPI_Fint *resultlen,
                                        MPI_Fint *ierror, size_t length)
{
    MPI_Fint rc;
    mpi_comm_get_name_(comm, name, resultlen, &rc, length);
    if (ierror)
        *ierror = rc;
}

TMPI_EXPORT void mpi_comm_get_info_f08_(const MPI_Fint *comm, MPI_Fint *info, MPI_Fint *ierror);
TMPI_EXPORT void mpi_comm_get_info_f08_(const MPI_Fint *comm, MPI_Fint *info, MPI_Fint *ierror)
{
    MPI_Fint rc;
    mpi_comm_get_info_(comm, info, &rc);
    if (ierror)
        *ierror = rc;
}

TMPI_EXPORT void mpi_comm_get_errhandler_f08_(const MPI_Fint *comm, MPI_Fint *errhandler,
                                              MPI_Fint *ierror);
TMPI_EXPORT void mpi_comm_get_errhandler_f08_(const MPI_Fint *comm, MPI_Fint *errhandler,
                                              MPI_Fint *ierror)
{
    MPI_Fint rc;
    mpi_comm_get_errhandler_(comm, errhandler, &rc);
    if (ierror)
        *ierror = rc;
}

TMPI_EXPORT void mpi_pcontrol_f08_(const MPI_Fint *level);
TMPI_EXPORT void mpi_pcontrol_f08_(const MPI_Fint *level)
{
    (void)level;
}

TMPI_EXPORT void mpi_waitsome_f08_(const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                                   MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierror);
TMPI_EXPORT void mpi_waitsome_f08_(const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                                   MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierror)
{
    MPI_Fint rc;
    f_some(1, incount, requests, outcount, indices, statuses, &rc);
    if (ierror)
        *ierror = rc;
}

TMPI_EXPORT void mpi_testsome_f08_(const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                                   MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierror);
TMPI_EXPORT void mpi_testsome_f08_(const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                                   MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierror)
{
    MPI_Fint rc;
    f_some(0, incount, requests, outcount, indices, statuses, &rc);
    if (ierror)
        *ierror = rc;
}

/* --- Attributes ----------------------------------------------------------- */

/* Fortran's attribute values are integers (INTEGER(KIND=MPI_ADDRESS_KIND),
   or a default INTEGER for MPI-1's MPI_ATTR_PUT), kept by the runtime as a
   pointer's bits; its callbacks take every argument by reference. A keyval
   made from Fortran keeps them in its extra state, which these C callbacks
   unwrap. A predefined attribute (MPI_TAG_UB...) reads as its value. */
typedef void f_copy_attr(MPI_Fint *oldcomm, MPI_Fint *keyval, void *extra_state, void *value_in,
                         void *value_out, MPI_Fint *flag, MPI_Fint *ierror);
typedef void f_delete_attr(MPI_Fint *comm, MPI_Fint *keyval, void *value, void *extra_state,
                           MPI_Fint *ierror);

typedef struct {
    f_copy_attr *copy;
    f_delete_attr *del;
    MPI_Aint extra_state;
    int wide; /* values of MPI_ADDRESS_KIND (else default INTEGERs) */
} f_keyval;

static int f_copy_call(MPI_Comm oldcomm, int keyval, void *extra_state, void *in, void *out,
                       int *flag)
{
    const f_keyval *k = extra_state;
    MPI_Fint comm = tdm_virt_c2f_comm(oldcomm), key = keyval, copied = 0, ierror = MPI_SUCCESS;
    if (k->wide) {
        MPI_Aint extra = k->extra_state, value_in = (MPI_Aint)(intptr_t)in, value_out = 0;
        k->copy(&comm, &key, &extra, &value_in, &value_out, &copied, &ierror);
        *(void **)out = (void *)(intptr_t)value_out;
    } else {
        MPI_Fint extra = (MPI_Fint)k->extra_state, value_in = (MPI_Fint)(intptr_t)in;
        MPI_Fint value_out = 0;
        k->copy(&comm, &key, &extra, &value_in, &value_out, &copied, &ierror);
        *(void **)out = (void *)(intptr_t)value_out;
    }
    *flag = copied != 0;
    return ierror;
}

static int f_delete_call(MPI_Comm handle, int keyval, void *value, void *extra_state)
{
    const f_keyval *k = extra_state;
    MPI_Fint comm = tdm_virt_c2f_comm(handle), key = keyval, ierror = MPI_SUCCESS;
    if (k->wide) {
        MPI_Aint extra = k->extra_state, v = (MPI_Aint)(intptr_t)value;
        k->del(&comm, &key, &v, &extra, &ierror);
    } else {
        MPI_Fint extra = (MPI_Fint)k->extra_state, v = (MPI_Fint)(intptr_t)value;
        k->del(&comm, &key, &v, &extra, &ierror);
    }
    return ierror;
}

/* The keyval's record lives as long as the process: values set with it
   keep its callbacks after MPI_Comm_free_keyval. */
static MPI_Fint f_keyval_create(f_copy_attr *copy, f_delete_attr *del, MPI_Fint *keyval,
                                MPI_Aint extra_state, int wide)
{
    f_keyval *k = malloc(sizeof *k);
    if (!k)
        return MPI_ERR_NO_MEM;
    *k = (f_keyval){.copy = copy, .del = del, .extra_state = extra_state, .wide = wide};
    int rc = TMPI_Comm_create_keyval(f_copy_call, f_delete_call, keyval, k);
    if (rc != MPI_SUCCESS)
        free(k);
    return rc;
}

/* A keyval from Fortran in C: MPICH's Fortran MPI_TAG_UB and kin are the
   C keyval plus 1 (Open MPI's are C's). */
static int f_keyval_of(MPI_Fint keyval)
{
#if !defined(OPEN_MPI)
    if (tdm_virt_attr_predefined(keyval - 1))
        return keyval - 1;
#endif
    return keyval;
}

/* The value as Fortran reads it, in *value (1 if set). */
static int f_attr_get(const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Aint *value,
                      MPI_Fint *ierror)
{
    void *v = NULL;
    int flag = 0, key = f_keyval_of(*keyval);
    *ierror = TMPI_Comm_get_attr(tdm_virt_f_comm(*comm), key, &v, &flag);
    if (*ierror != MPI_SUCCESS || !flag)
        return 0;
    *value = tdm_virt_attr_predefined(key) ? (MPI_Aint) * (const int *)v : (MPI_Aint)(intptr_t)v;
    return 1;
}

TMPI_EXPORT void mpi_comm_create_keyval_(f_copy_attr *copy, f_delete_attr *del, MPI_Fint *keyval,
                                         const MPI_Aint *extra_state, MPI_Fint *ierror);
TMPI_EXPORT void mpi_comm_create_keyval_(f_copy_attr *copy, f_delete_attr *del, MPI_Fint *keyval,
                                         const MPI_Aint *extra_state, MPI_Fint *ierror)
{
    *ierror = f_keyval_create(copy, del, keyval, *extra_state, 1);
}

TMPI_EXPORT void mpi_keyval_create_(f_copy_attr *copy, f_delete_attr *del, MPI_Fint *keyval,
                                    const MPI_Fint *extra_state, MPI_Fint *ierror);
TMPI_EXPORT void mpi_keyval_create_(f_copy_attr *copy, f_delete_attr *del, MPI_Fint *keyval,
                                    const MPI_Fint *extra_state, MPI_Fint *ierror)
{
    *ierror = f_keyval_create(copy, del, keyval, *extra_state, 0);
}

TMPI_EXPORT void mpi_comm_set_attr_(const MPI_Fint *comm, const MPI_Fint *keyval,
                                    const MPI_Aint *value, MPI_Fint *ierror);
TMPI_EXPORT void mpi_comm_set_attr_(const MPI_Fint *comm, const MPI_Fint *keyval,
                                    const MPI_Aint *value, MPI_Fint *ierror)
{
    *ierror =
        TMPI_Comm_set_attr(tdm_virt_f_comm(*comm), f_keyval_of(*keyval), (void *)(intptr_t)*value);
}

TMPI_EXPORT void mpi_attr_put_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Fint *value,
                               MPI_Fint *ierror);
TMPI_EXPORT void mpi_attr_put_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Fint *value,
                               MPI_Fint *ierror)
{
    *ierror =
        TMPI_Comm_set_attr(tdm_virt_f_comm(*comm), f_keyval_of(*keyval), (void *)(intptr_t)*value);
}

TMPI_EXPORT void mpi_comm_get_attr_(const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Aint *value,
                                    MPI_Fint *flag, MPI_Fint *ierror);
TMPI_EXPORT void mpi_comm_get_attr_(const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Aint *value,
                                    MPI_Fint *flag, MPI_Fint *ierror)
{
    *flag = f_attr_get(comm, keyval, value, ierror);
}

TMPI_EXPORT void mpi_attr_get_(const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Fint *value,
                               MPI_Fint *flag, MPI_Fint *ierror);
TMPI_EXPORT void mpi_attr_get_(const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Fint *value,
                               MPI_Fint *flag, MPI_Fint *ierror)
{
    MPI_Aint wide = 0;
    if ((*flag = f_attr_get(comm, keyval, &wide, ierror)))
        *value = (MPI_Fint)wide;
}

/* The mpi_f08 module's (ierror optional; its handles and callbacks are
   mpif.h's, by reference). */
TMPI_EXPORT void mpi_comm_create_keyval_f08_(f_copy_attr *copy, f_delete_attr *del,
                                             MPI_Fint *keyval, const MPI_Aint *extra_state,
                                             MPI_Fint *ierror);
TMPI_EXPORT void mpi_comm_create_keyval_f08_(f_copy_attr *copy, f_delete_attr *del,
                                             MPI_Fint *keyval, const MPI_Aint *extra_state,
                                             MPI_Fint *ierror)
{
    MPI_Fint rc = f_keyval_create(copy, del, keyval, *extra_state, 1);
    if (ierror)
        *ierror = rc;
}

TMPI_EXPORT void mpi_comm_set_attr_f08_(const MPI_Fint *comm, const MPI_Fint *keyval,
                                        const MPI_Aint *value, MPI_Fint *ierror);
TMPI_EXPORT void mpi_comm_set_attr_f08_(const MPI_Fint *comm, const MPI_Fint *keyval,
                                        const MPI_Aint *value, MPI_Fint *ierror)
{
    MPI_Fint rc;
    mpi_comm_set_attr_(comm, keyval, value, &rc);
    if (ierror)
        *ierror = rc;
}

TMPI_EXPORT void mpi_comm_get_attr_f08_(const MPI_Fint *comm, const MPI_Fint *keyval,
                                        MPI_Aint *value, MPI_Fint *flag, MPI_Fint *ierror);
TMPI_EXPORT void mpi_comm_get_attr_f08_(const MPI_Fint *comm, const MPI_Fint *keyval,
                                        MPI_Aint *value, MPI_Fint *flag, MPI_Fint *ierror)
{
    MPI_Fint rc;
    mpi_comm_get_attr_(comm, keyval, value, flag, &rc);
    if (ierror)
        *ierror = rc;
}

/* --- The mpi_f08 module ---------------------------------------------------- */

/* Its entry points take mpif.h's arguments, with ierror optional. Open
   MPI's (mpi_send_f08_) take the choice buffers by address too, and its
   MPI_Wtime and MPI_Wtick are the C functions, the real MPI's. MPICH's
   (mpi_comm_rank_f08_, mpi_wtime_f08_) pass each choice buffer as
   gfortran's descriptor of an assumed-rank array (mpi_send_f08ts_), which
   may describe a non-contiguous array section: below. */
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

/* The buffer's address: a TYPE(C_PTR) on MPICH, left as it is on Open
   MPI (a choice buffer there). */
TMPI_EXPORT void mpi_buffer_detach_f08_(void *buffer_addr, MPI_Fint *size, MPI_Fint *ierror);
TMPI_EXPORT void mpi_buffer_detach_f08_(void *buffer_addr, MPI_Fint *size, MPI_Fint *ierror)
{
    void *address = NULL;
    MPI_Fint rc = TMPI_Buffer_detach(&address, size);
#if !defined(OPEN_MPI)
    if (rc == MPI_SUCCESS)
        *(void **)buffer_addr = address;
#else
    (void)buffer_addr;
#endif
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

#if defined(OPEN_MPI)
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
#else
TMPI_EXPORT double mpi_wtime_f08_(void) __attribute__((alias("mpi_wtime_")));
TMPI_EXPORT double mpi_wtick_f08_(void) __attribute__((alias("mpi_wtick_")));

/* gfortran's descriptor of an assumed-rank array (GCC 8 and later): the
   element of the section at 0-based indices i_k lies at
   base + sum(i_k * stride_k) * span bytes. */
typedef struct {
    ptrdiff_t stride, lower, upper;
} f_dim;

typedef struct {
    void *base; /* the section's first element */
    size_t offset;
    size_t elem_len;
    int version;
    signed char rank, type;
    short attribute;
    ptrdiff_t span;
    f_dim dim[15];
} f_array;

static ptrdiff_t f_extent(const f_array *a, int k)
{
    ptrdiff_t extent = a->dim[k].upper - a->dim[k].lower + 1;
    return extent > 0 ? extent : 0;
}

static ptrdiff_t f_step(const f_array *a, int k)
{
    return a->dim[k].stride * (a->span ? a->span : (ptrdiff_t)a->elem_len);
}

static MPI_Aint f_elements(const f_array *a)
{
    MPI_Aint n = 1;
    for (int k = 0; k < a->rank; k++)
        n *= f_extent(a, k);
    return n;
}

static int f_contiguous(const f_array *a)
{
    if (f_elements(a) == 0)
        return 1;
    ptrdiff_t expected = (ptrdiff_t)a->elem_len;
    for (int k = 0; k < a->rank; k++) {
        if (f_extent(a, k) > 1 && f_step(a, k) != expected)
            return 0;
        expected *= f_extent(a, k);
    }
    return 1;
}

__attribute__((noreturn)) static void f_refuse(const char *call, const char *arg, const char *why)
{
    fprintf(stderr,
            "tandem virt: %s: %s is a non-contiguous array section %s, which Tandem's virtual "
            "ranks do not take from MPICH's mpi_f08; pass a contiguous array (docs/VIRTUAL.md)\n",
            call, arg, why);
    fflush(stderr);
    PMPI_Abort(MPI_COMM_WORLD, 1);
    abort();
}

/* The first m elements of the section, each one 'element': nested
   vectors for the whole section, the elements' displacements for a part
   of it. */
static MPI_Datatype f_section_type(const f_array *a, MPI_Datatype element, MPI_Aint m)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    if (m == f_elements(a)) {
        MPI_Datatype inner = element;
        for (int k = 0; k < a->rank; k++) {
            PMPI_Type_create_hvector((int)f_extent(a, k), 1, f_step(a, k), inner, &type);
            if (inner != element)
                PMPI_Type_free(&inner);
            inner = type;
        }
    } else {
        MPI_Aint *at = malloc(sizeof *at * (size_t)(m > 0 ? m : 1));
        ptrdiff_t index[15] = {0};
        for (MPI_Aint i = 0; at && i < m; i++) {
            at[i] = 0;
            for (int k = 0; k < a->rank; k++)
                at[i] += index[k] * f_step(a, k);
            for (int k = 0; k < a->rank && ++index[k] == f_extent(a, k); k++)
                index[k] = 0;
        }
        if (!at)
            f_refuse("tandem", "an array", "(out of memory)");
        PMPI_Type_create_hindexed_block((int)m, 1, at, element, &type);
        free(at);
    }
    PMPI_Type_commit(&type);
    return type;
}

/* A choice buffer as the C call takes it: its address, and what was made
   for a non-contiguous section (its datatype; or a contiguous copy of its
   'bytes', which a blocking receive copies back). */
typedef struct {
    void *address;
    MPI_Datatype type;
    void *copy;
    int bytes;
    int copy_back;
    void *section;
} f_buffer;

/* The buffer's address, or the C sentinel it stands for; 1 if that is
   all the call needs. */
static int f_plain(f_buffer *b, const f_array *a)
{
    *b = (f_buffer){.address = a->base, .type = MPI_DATATYPE_NULL};
    if (is(a->base, F08_BOTTOM)) {
        b->address = MPI_BOTTOM;
        return 1;
    }
    if (is(a->base, F08_IN_PLACE)) {
        b->address = MPI_IN_PLACE;
        return 1;
    }
    return a->rank == 0 || f_contiguous(a);
}

/* A buffer with a count and datatype of its own: a section becomes one
   item of a datatype made of the user's, one (or several, for a smaller
   datatype) per array element. */
static void f_pair(f_buffer *b, const char *call, const char *arg, const f_array *a,
                   MPI_Fint *count, MPI_Fint *datatype)
{
    if (f_plain(b, a) || *count == 0)
        return;
    MPI_Datatype type = PMPI_Type_f2c(*datatype);
    int size = 0;
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_size(type, &size);
    PMPI_Type_get_extent(type, &lb, &extent);
    if (size <= 0 || lb != 0 || extent != size || a->elem_len % (size_t)size)
        f_refuse(call, arg, "of a datatype other than its elements' own");
    int per = (int)(a->elem_len / (size_t)size);
    if (*count % per || *count / per > f_elements(a))
        f_refuse(call, arg, "whose count does not end on one of its elements");
    MPI_Datatype element = type;
    if (per > 1)
        PMPI_Type_contiguous(per, type, &element);
    b->type = f_section_type(a, element, *count / per);
    if (element != type)
        PMPI_Type_free(&element);
    *count = 1;
    *datatype = PMPI_Type_c2f(b->type);
}

/* A buffer without a count and datatype of its own (a reduction's sendbuf
   and recvbuf share theirs; a v or w collective's counts come as arrays):
   a section is copied into a contiguous buffer, which the call takes, and
   a receiving one copied back once the operation completed: after a
   blocking call, when a nonblocking one's request is released (its wait
   or test). 'mode': 0 blocking, 1 nonblocking, 2 persistent, where a copy
   would go stale between starts: refused. */
static void f_copy(f_buffer *b, const char *call, const char *arg, const f_array *a, int receive,
                   int mode)
{
    if (f_plain(b, a))
        return;
    if (mode == 2)
        f_refuse(call, arg, "in a persistent operation (a copy would go stale between starts)");
    MPI_Datatype element;
    PMPI_Type_contiguous((int)a->elem_len, MPI_BYTE, &element);
    b->type = f_section_type(a, element, f_elements(a));
    PMPI_Type_free(&element);
    b->bytes = (int)(f_elements(a) * (MPI_Aint)a->elem_len);
    b->copy = malloc(b->bytes ? (size_t)b->bytes : 1);
    if (!b->copy)
        f_refuse(call, arg, "(out of memory for its copy)");
    int position = 0;
    PMPI_Pack(a->base, 1, b->type, b->copy, b->bytes, &position, MPI_COMM_SELF);
    b->address = b->copy;
    b->copy_back = receive;
    b->section = a->base;
}

/* A buffer whose address the runtime keeps (MPI_Buffer_attach's): a
   section is refused. */
static void f_kept(f_buffer *b, const char *call, const char *arg, const f_array *a)
{
    if (!f_plain(b, a))
        f_refuse(call, arg, "that the runtime would keep");
}

/* What was made for the buffers (two at most): copies back into their
   sections, then freed. */
static void f_release(void *made)
{
    f_buffer *b = made;
    for (int i = 0; i < 2; i++) {
        if (b[i].copy_back) {
            int position = 0;
            PMPI_Unpack(b[i].copy, b[i].bytes, &position, b[i].section, 1, b[i].type,
                        MPI_COMM_SELF);
        }
        if (b[i].type != MPI_DATATYPE_NULL)
            PMPI_Type_free(&b[i].type);
        free(b[i].copy);
    }
    free(b);
}

/* After the call: what was made handed to the request that still uses it
   (a nonblocking or persistent call's), or, after a blocking call, copied
   back and freed; after an error, freed. */
static void f_finish(MPI_Fint rc, const MPI_Fint *request, f_buffer *first, f_buffer *second)
{
    int kept = first->type != MPI_DATATYPE_NULL || first->copy ||
               (second && (second->type != MPI_DATATYPE_NULL || second->copy));
    if (!kept)
        return; /* contiguous buffers, the common case: nothing made */
    f_buffer *made = calloc(2, sizeof *made);
    if (!made)
        f_refuse("tandem", "an array", "(out of memory)");
    made[0] = *first;
    made[1] = second ? *second : (f_buffer){.type = MPI_DATATYPE_NULL};
    for (int i = 0; i < 2; i++)
        made[i].copy_back &= rc == MPI_SUCCESS;
    if (request && rc == MPI_SUCCESS &&
        tdm_virt_request_on_release(tdm_virt_f_request(*request), f_release, made) == MPI_SUCCESS)
        return;
    f_release(made);
}

TMPI_EXPORT void mpi_alltoallw_f08ts_(f_array *sendbuf, const MPI_Fint *sendcounts,
                                      const MPI_Fint *sdispls, const MPI_Fint *sendtypes,
                                      f_array *recvbuf, const MPI_Fint *recvcounts,
                                      const MPI_Fint *rdispls, const MPI_Fint *recvtypes,
                                      const MPI_Fint *comm, MPI_Fint *ierror);
TMPI_EXPORT void mpi_alltoallw_f08ts_(f_array *sendbuf, const MPI_Fint *sendcounts,
                                      const MPI_Fint *sdispls, const MPI_Fint *sendtypes,
                                      f_array *recvbuf, const MPI_Fint *recvcounts,
                                      const MPI_Fint *rdispls, const MPI_Fint *recvtypes,
                                      const MPI_Fint *comm, MPI_Fint *ierror)
{
    f_buffer send, recv;
    f_copy(&send, "MPI_Alltoallw", "sendbuf", sendbuf, 0, 0);
    f_copy(&recv, "MPI_Alltoallw", "recvbuf", recvbuf, 1, 0);
    MPI_Fint rc;
    mpi_alltoallw_(send.address, sendcounts, sdispls, sendtypes, recv.address, recvcounts, rdispls,
                   recvtypes, comm, &rc);
    f_finish(rc, NULL, &send, &recv);
    optional(ierror, rc);
}
#endif

#include "gen_fortran.inc"
