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

int tdm_f_no_memory(const char *function)
{
    tdm_log_warn("%s from Fortran: no memory for the converted arguments", function);
    return MPI_ERR_NO_MEM;
}
