/* The application's world and the progress processes: core/world.h. */
#define _POSIX_C_SOURCE 200809L
#include "core/world.h"

#include <mpi.h>
#include <stdlib.h>
#include <time.h>

#include "core/config.h"
#include "core/log.h"
#include "core/runtime.h"
#include "wrappers/gen_hooks.h"

static MPI_Comm control = MPI_COMM_NULL; /* the whole job: the end of the run */
static int ghosts_in_job;
static int universe_size; /* MPI_UNIVERSE_SIZE less the progress processes (at least the
                             application's ranks) */

/* A progress process: drive the MPI library until the application's ranks
   enter MPI_Finalize, then finalize too and leave. */
static void serve(MPI_Comm own)
{
    MPI_Request end;
    int done = 0;
    PMPI_Ibarrier(control, &end);
    while (!done) {
        PMPI_Test(&end, &done, MPI_STATUS_IGNORE);
        if (!done) {
            struct timespec pause = {0, 50000};
            nanosleep(&pause, NULL);
        }
    }
    PMPI_Comm_free(&own);
    PMPI_Comm_free(&control);
    PMPI_Finalize();
    exit(0);
}

int tdm_world_start(void)
{
    int ghosts = (int)TDM_CONFIG_NUMBER(GHOSTS);
    if (ghosts == 0)
        return MPI_SUCCESS;
    int rc, rank, local, local_size, too_few, fewest;
    MPI_Comm host = MPI_COMM_NULL, own = MPI_COMM_NULL;
    TDM_CALL_MPI(rc, PMPI_Comm_rank(MPI_COMM_WORLD, &rank));
    TDM_CALL_MPI(
        rc, PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host));
    TDM_CALL_MPI(rc, PMPI_Comm_rank(host, &local));
    TDM_CALL_MPI(rc, PMPI_Comm_size(host, &local_size));
    too_few = local_size <= ghosts;
    TDM_CALL_MPI(rc, PMPI_Allreduce(&local_size, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    TDM_CALL_MPI(rc, PMPI_Allreduce(MPI_IN_PLACE, &too_few, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (too_few) {
        if (rank == 0)
            tdm_log_error("TANDEM_GHOSTS=%d: a host runs only %d process%s, and each needs "
                          "more than %d: the application's ranks and %d progress process%s "
                          "(tandem run -n N --ghosts %d launches N + %d per host); stopping",
                          ghosts, fewest, fewest == 1 ? "" : "es", ghosts, ghosts,
                          ghosts == 1 ? "" : "es", ghosts, ghosts);
        PMPI_Comm_free(&host);
        PMPI_Finalize();
        exit(1);
    }
    int ghost = local >= local_size - ghosts;
    TDM_CALL_MPI(rc, PMPI_Allreduce(&ghost, &ghosts_in_job, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    TDM_CALL_MPI(rc, PMPI_Comm_dup(MPI_COMM_WORLD, &control));
    TDM_CALL_MPI(rc, PMPI_Comm_split(MPI_COMM_WORLD, ghost, rank, &own));
    PMPI_Comm_free(&host);
    if (ghost)
        serve(own);
    int *universe, flag = 0;
    TDM_CALL_MPI(rc, PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag));
    int job_size;
    TDM_CALL_MPI(rc, PMPI_Comm_size(MPI_COMM_WORLD, &job_size));
    /* the job's slots less the progress processes, and never fewer than the
       application's ranks (an oversubscribed job has more ranks than slots) */
    universe_size = flag ? *universe - ghosts_in_job : 0;
    if (universe_size < job_size - ghosts_in_job)
        universe_size = job_size - ghosts_in_job;
    PMPI_Comm_set_name(own, "MPI_COMM_WORLD");
    tdm_world = own;
    tdm_world_translated = 1;
fn_exit:
    return rc;
}

void tdm_world_finish(void)
{
    if (!tdm_world_translated)
        return;
    MPI_Request end;
    PMPI_Ibarrier(control, &end);
    PMPI_Wait(&end, MPI_STATUS_IGNORE);
    tdm_world_translated = 0;
    PMPI_Comm_free(&tdm_world);
    tdm_world = MPI_COMM_WORLD;
    PMPI_Comm_free(&control);
}

int tdm_world_ghosts(void)
{
    return ghosts_in_job;
}

/* The attributes MPI caches on MPI_COMM_WORLD are read from the job's: the
   application's world is a communicator of the MPI library's, which has
   none, and the universe is the job's less its progress processes. */
int tdm_hook_Comm_get_attr(int lang, MPI_Comm comm, int keyval, void *value, int *flag)
{
    (void)lang;
    if (!tdm_world_translated || comm != tdm_world)
        return PMPI_Comm_get_attr(comm, keyval, value, flag);
    if (keyval == MPI_UNIVERSE_SIZE) {
        int rc = PMPI_Comm_get_attr(MPI_COMM_WORLD, keyval, value, flag);
        if (rc == MPI_SUCCESS && *flag)
            *(int **)value = &universe_size;
        return rc;
    }
    if (keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO ||
        keyval == MPI_WTIME_IS_GLOBAL || keyval == MPI_APPNUM || keyval == MPI_LASTUSEDCODE)
        return PMPI_Comm_get_attr(MPI_COMM_WORLD, keyval, value, flag);
    return PMPI_Comm_get_attr(comm, keyval, value, flag);
}

/* An error handler set on the program's MPI_COMM_WORLD goes to the job's
   too, which the MPI library may use for errors of calls that name no
   communicator. */
int tdm_hook_Comm_set_errhandler(int lang, MPI_Comm comm, MPI_Errhandler errhandler)
{
    (void)lang;
    int rc = PMPI_Comm_set_errhandler(comm, errhandler);
    if (rc == MPI_SUCCESS && tdm_world_translated && comm == tdm_world)
        rc = PMPI_Comm_set_errhandler(MPI_COMM_WORLD, errhandler);
    return rc;
}
