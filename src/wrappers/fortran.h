/* Helpers of the generated Fortran entry points (gen_f_wrappers.c). */
#ifndef TDM_WRAPPERS_FORTRAN_H
#define TDM_WRAPPERS_FORTRAN_H

#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>

#include "impl/impl.h"

_Static_assert(sizeof(MPI_Fint) == sizeof(int),
               "Tandem passes Fortran INTEGER arrays to C as int arrays");

/* The length of a Fortran status: MPI_STATUS_SIZE. */
#ifdef MPI_F_STATUS_SIZE
#define TDM_F_STATUS_SIZE MPI_F_STATUS_SIZE
#else
#define TDM_F_STATUS_SIZE (sizeof(MPI_Status) / sizeof(MPI_Fint))
#endif

#define TDM_F_TRUE 1 /* gfortran's .TRUE. */
#define TDM_F_FALSE 0

/* Arrays of converted handles and statuses up to this many entries live on
   the stack; longer ones are allocated for the call. */
#define TDM_F_STACK_ITEMS 16

#define TDM_F_ARRAY(stack, n) \
    ((n) <= TDM_F_STACK_ITEMS ? (stack) : malloc(sizeof(*(stack)) * (size_t)(n)))

#define TDM_F_ARRAY_FREE(array, stack)                                                            \
    do {                                                                                          \
        if ((void *)(array) != (void *)(stack) && (void *)(array) != (void *)MPI_STATUSES_IGNORE) \
            free(array);                                                                          \
    } while (0)

/* A Fortran buffer address as C expects it: the Fortran MPI_BOTTOM and
   MPI_IN_PLACE become the C ones. */
static inline void *tdm_f_buffer(void *address)
{
    if (tdm_impl_f_is_bottom(address))
        return MPI_BOTTOM;
    if (tdm_impl_f_is_in_place(address))
        return MPI_IN_PLACE;
    return address;
}

static inline int tdm_f_is_status_ignore(const MPI_Fint *status)
{
    return tdm_impl_f_is_status_ignore(status);
}

static inline int tdm_f_is_statuses_ignore(const MPI_Fint *statuses)
{
    return tdm_impl_f_is_statuses_ignore(statuses);
}

/* A Fortran LOGICAL as C's int: anything but .FALSE. is true. */
static inline int tdm_f_logical(MPI_Fint value)
{
    return value != TDM_F_FALSE;
}

/* A Fortran array of edge weights as C expects it: the Fortran MPI_UNWEIGHTED
   and MPI_WEIGHTS_EMPTY become the C ones. */
static inline const int *tdm_f_weights(const MPI_Fint *weights)
{
    if (tdm_impl_f_is_unweighted(weights))
        return MPI_UNWEIGHTED;
    if (tdm_impl_f_is_weights_empty(weights))
        return MPI_WEIGHTS_EMPTY;
    return (const int *)weights;
}

/* gfortran's array descriptor (GCC 8 and later): what a Fortran procedure
   without BIND(C) receives for a TYPE(*), DIMENSION(..) dummy argument, and
   so what MPICH's mpi_f08 passes to its mpi_name_f08ts_ entry points for a
   choice buffer (impl/impl.h, TDM_F08_DESCRIPTOR). Element (i1, i2, ...) of
   the array lies at base_addr + sum over d of (i_d - lower_bound) * stride *
   span bytes; a scalar has rank 0. */
#define TDM_F_MAX_RANK 15 /* Fortran 2008's */
typedef struct {
    void *base_addr;
    size_t offset;
    size_t elem_len; /* bytes of one element */
    int version;
    signed char rank;
    signed char type;
    signed short attribute;
    ptrdiff_t span; /* bytes per unit of stride */
    struct {
        ptrdiff_t stride, lower_bound, upper_bound;
    } dim[TDM_F_MAX_RANK];
} tdm_f_array;

/* The address of a choice buffer of MPICH's mpi_f08 (its first element), the
   Fortran MPI_BOTTOM and MPI_IN_PLACE made the C ones. */
static inline void *tdm_f08_buffer(const tdm_f_array *array)
{
    return tdm_f_buffer(array->base_addr);
}

/* Where MPICH's mpi_f08 makes a datatype for an array section passed as a
   choice buffer with its 'count' and 'datatype' (every choice buffer
   followed by them but the receive buffer of MPI_Reduce_scatter_block),
   Tandem makes the same one: when 'array' is not contiguous, *datatype
   becomes a new datatype of 'count' elements of *datatype laid out as the
   section's first ones, and the call must pass a count of 1 (which MPICH
   passes even where it could not make the datatype, *datatype then
   unchanged). Returns whether the call must do so. Application thread. */
int tdm_f08_subarray(const tdm_f_array *array, MPI_Count count, MPI_Datatype *datatype);

/* Free a datatype of tdm_f08_subarray after its call, as the application's
   MPI_Type_free would: after the collectives in flight that use it. */
void tdm_f08_subarray_free(MPI_Datatype datatype);

/* A Fortran CHARACTER argument of 'length' characters as a C string without
   its trailing blanks, allocated (free it), or NULL without memory. */
char *tdm_f_string(const char *chars, size_t length);

/* The number of processes an array argument of 'comm' has an entry for: the
   size of 'comm', or its remote size for an inter-communicator. */
int tdm_f_size_of_comm(MPI_Comm comm);

/* The number of dimensions of the Cartesian communicator 'comm' (0 for any
   other communicator: the MPI call then reports the error). */
int tdm_f_cart_dims(MPI_Comm comm);

/* Report that a Fortran call could not allocate its temporary arrays. */
int tdm_f_no_memory(const char *function);

#endif
