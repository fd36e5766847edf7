/* The process-wide state declared in runtime.h. */
#include "core/runtime.h"

#include <stdio.h>

int tdm_active;
int tdm_trace_on;
int tdm_world_rank = -1;
MPI_Comm tdm_world = MPI_COMM_WORLD;
int tdm_world_translated;
atomic_int tdm_windows_open; /* counted by rma/window.c */
int tdm_mpi_thread_level = MPI_THREAD_SINGLE;

void tdm_trace_call(const char *function, int lang)
{
    static const char *const names[] = {"C", "Fortran", "Fortran 2008"};
    fprintf(stderr, "tandem[%d]: trace %s (%s)\n", tdm_world_rank, function, names[lang]);
}

void tdm_status_empty(MPI_Status *status)
{
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
    PMPI_Status_set_elements_x(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
}

/* Any tag the MPI library accepts: every library allows at least 32767. */
#define COPY_TAG 32767

int tdm_comm_copy(MPI_Comm comm, MPI_Comm *copy)
{
    MPI_Group group = MPI_GROUP_NULL;
    MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
    int rc;
    *copy = MPI_COMM_NULL;
    TDM_CALL_MPI(rc, PMPI_Comm_group(comm, &group));
    TDM_CALL_MPI(rc, PMPI_Comm_create_group(comm, group, COPY_TAG, copy));
    TDM_CALL_MPI(rc, PMPI_Comm_get_errhandler(comm, &handler));
    rc = PMPI_Comm_set_errhandler(*copy, handler);
fn_exit:
    if (handler != MPI_ERRHANDLER_NULL)
        PMPI_Errhandler_free(&handler);
    if (group != MPI_GROUP_NULL)
        PMPI_Group_free(&group);
    if (rc != MPI_SUCCESS && *copy != MPI_COMM_NULL)
        PMPI_Comm_free(copy);
    return rc;
}
