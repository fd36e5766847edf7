/* Out-of-line helpers of the generated Fortran entry points. */
#include "wrappers/fortran.h"

#include "core/log.h"

int tdm_f_comm_size(MPI_Comm comm)
{
    int inter = 0, size = 0;
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
