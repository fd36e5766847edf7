/* Out-of-line helpers of the generated Fortran entry points. */
#include "wrappers/fortran.h"

#include <limits.h>
#include <string.h>

#include "core/log.h"
#include "core/runtime.h"
#include "wrappers/gen_hooks.h"

int tdm_f_size_of_comm(MPI_Comm comm)
{
    int inter = 0, size = 0;
    comm = tdm_world_in(comm); /* the arrays have an entry per application rank */
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return 0;
    if (inter)
        PMPI_Comm_remote_size(comm, &size);
    else
        PMPI_Comm_size(comm, &size);
    return size;
}

int tdm_f_cart_dims(MPI_Comm comm)
{
    int topology = MPI_UNDEFINED, dims = 0;
    if (comm == MPI_COMM_NULL || PMPI_Topo_test(comm, &topology) != MPI_SUCCESS ||
        topology != MPI_CART || PMPI_Cartdim_get(comm, &dims) != MPI_SUCCESS)
        return 0;
    return dims;
}

int tdm_f_no_memory(const char *function)
{
    tdm_log_warn("%s from Fortran: no memory for the converted arguments", function);
    return MPI_ERR_NO_MEM;
}

char *tdm_f_string(const char *chars, size_t length)
{
    while (length > 0 && chars[length - 1] == ' ')
        length--;
    char *string = malloc(length + 1);
    if (string) {
        memcpy(string, chars, length);
        string[length] = '\0';
    }
    return string;
}

/* Dimension d of an array descriptor as ISO_Fortran_binding.h's CFI_cdesc_t
   has it, which MPICH makes of it before it decides: the number of elements
   (-1 for the last dimension of an assumed-size array) and the bytes from one
   element to the next. */
static ptrdiff_t extent_of(const tdm_f_array *array, int d)
{
    return array->dim[d].upper_bound - array->dim[d].lower_bound + 1;
}

static ptrdiff_t step_of(const tdm_f_array *array, int d)
{
    return array->dim[d].stride * array->span;
}

/* Whether the elements lie one after the other, as gfortran's
   CFI_is_contiguous decides: an assumed-size array always does. */
static int contiguous(const tdm_f_array *array)
{
    int rank = array->rank;
    if (extent_of(array, rank - 1) == -1)
        return 1;
    ptrdiff_t step = (ptrdiff_t)array->elem_len;
    for (int d = 0; d < rank; d++) {
        if (step_of(array, d) != step)
            return 0;
        step = step_of(array, d) * extent_of(array, d);
    }
    return 1;
}

/* MPICH's datatype for a section: dimension by dimension, from the fastest,
   a vector of the previous dimension's datatype (contiguous where the
   dimension's elements follow each other), until 'count' elements are
   described. 'count' must be a whole number of the dimensions taken so far,
   and the section must hold it. */
int tdm_f08_subarray(const tdm_f_array *array, MPI_Count count, MPI_Datatype *datatype)
{
    int rank = array->rank;
    if (rank <= 0 || rank > TDM_F_MAX_RANK || contiguous(array))
        return 0;
    MPI_Datatype types[TDM_F_MAX_RANK + 1] = {*datatype};
    MPI_Count elements = 1;                      /* in the dimensions described so far */
    ptrdiff_t step = (ptrdiff_t)array->elem_len; /* of a contiguous next dimension */
    int made = 0, done = 0, rc = MPI_SUCCESS;
    for (int d = 0; d < rank && !done && rc == MPI_SUCCESS; d++) {
        ptrdiff_t extent = extent_of(array, d), bytes = step_of(array, d);
        if (elements <= 0 || count % elements != 0) {
            rc = MPI_ERR_ARG;
            break;
        }
        MPI_Count n = count / elements;
        if (n > extent)
            n = extent;
        else
            done = 1;
        if (n > INT_MAX)
            rc = MPI_ERR_COUNT;
        else if (bytes == step)
            rc = PMPI_Type_contiguous((int)n, types[d], &types[d + 1]);
        else
            rc = PMPI_Type_create_hvector((int)n, 1, (MPI_Aint)bytes, types[d], &types[d + 1]);
        if (rc == MPI_SUCCESS) {
            made = d + 1;
            rc = PMPI_Type_commit(&types[made]);
        }
        step = bytes * extent;
        elements *= extent;
    }
    for (int i = 1; i < made; i++)
        PMPI_Type_free(&types[i]);
    if (done && rc == MPI_SUCCESS)
        *datatype = types[made];
    else if (made > 0)
        PMPI_Type_free(&types[made]);
    return 1;
}

void tdm_f08_subarray_free(MPI_Datatype datatype)
{
    tdm_hook_Type_free(TDM_LANG_F08, &datatype);
}
