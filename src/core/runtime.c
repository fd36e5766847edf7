/* The process-wide state declared in runtime.h. */
#include "core/runtime.h"

#include <stdio.h>

int tdm_active;
int tdm_trace_on;
int tdm_world_rank = -1;
int tdm_mpi_thread_level = MPI_THREAD_SINGLE;

void tdm_trace_call(const char *function, int lang)
{
    fprintf(stderr, "tandem[%d]: trace %s (%s)\n", tdm_world_rank, function,
            lang == TDM_LANG_FORTRAN ? "Fortran" : "C");
}

void tdm_status_empty(MPI_Status *status)
{
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
    PMPI_Status_set_elements_x(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
}
