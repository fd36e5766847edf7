/* The application's world and the progress processes: core/world.h. */
#define _POSIX_C_SOURCE 200809L
#include "core/world.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/log.h"
#include "core/runtime.h"
#include "impl/impl.h"
#include "wrappers/gen_hooks.h"

static MPI_Comm control = MPI_COMM_NULL; /* the whole job: the end of the run */
static MPI_Comm own = MPI_COMM_NULL;     /* a progress process's fellows */
static int ghosts_in_job;
static int progress_process;    /* this process is one */
static int *host_of;            /* per job rank: the job rank of its host's first process */
static unsigned char *ghost_at; /* per job rank: nonzero for a progress process */
static int universe_size;       /* MPI_UNIVERSE_SIZE less the progress processes (at least the
                                   application's ranks) */

/* Every process stops (exit status 1): the message on the first rank. */
static void stop(int rank)
{
    (void)rank;
    PMPI_Finalize();
    exit(1);
}

/* TANDEM_GHOSTS: take the progress processes out of 'base' (the job's
   world); a progress process does not return. '*app' gets the application's
   processes, MPI_COMM_NULL without progress processes. */
static int leave_ghosts(int ghosts, MPI_Comm *app)
{
    int rc, rank, local, local_size, too_few, fewest;
    MPI_Comm host = MPI_COMM_NULL;
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
        stop(rank);
    }
    int ghost = local >= local_size - ghosts;
    int job_size, first = rank, pair[2];
    TDM_CALL_MPI(rc, PMPI_Comm_size(MPI_COMM_WORLD, &job_size));
    TDM_CALL_MPI(rc, PMPI_Bcast(&first, 1, MPI_INT, 0, host));
    host_of = malloc(sizeof(int) * (size_t)job_size);
    ghost_at = malloc((size_t)job_size);
    int *pairs = malloc(sizeof(int) * 2 * (size_t)job_size);
    if (!host_of || !ghost_at || !pairs) {
        free(pairs);
        tdm_log_error("TANDEM_GHOSTS: out of memory for the tables of %d processes", job_size);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    pair[0] = first;
    pair[1] = ghost;
    TDM_CALL_MPI(rc, PMPI_Allgather(pair, 2, MPI_INT, pairs, 2, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < job_size; i++) {
        host_of[i] = pairs[2 * i];
        ghost_at[i] = (unsigned char)pairs[2 * i + 1];
        ghosts_in_job += ghost_at[i];
    }
    free(pairs);
    TDM_CALL_MPI(rc, PMPI_Comm_dup(MPI_COMM_WORLD, &control));
    TDM_CALL_MPI(rc, PMPI_Comm_split(MPI_COMM_WORLD, ghost, rank, app));
    PMPI_Comm_free(&host);
    if (ghost) {
        progress_process = 1;
        own = *app;
        *app = MPI_COMM_NULL;
    }
fn_exit:
    return rc;
}

/* The integer after "key": in [at, end), or -1. */
static long number_after(const char *at, const char *end, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = at; p + n < end; p++) {
        if (strncmp(p, key, n) != 0)
            continue;
        p += n;
        while (p < end && (*p == ' ' || *p == ':' || *p == '\t' || *p == '\n'))
            p++;
        char *stop_at;
        long value = strtol(p, &stop_at, 10);
        return stop_at > p && stop_at <= end ? value : -1;
    }
    return -1;
}

/* The application rank of each slot (host x cores_per_host + core: a
   process's launch order on the mapping's hosts) from a MAPPING file of
   tandem place (docs/PLACEMENT.md), for a job of 'size' ranks; 0, or -1
   with 'why' filled. */
static int read_mapping(const char *path, int size, int *rank_at, char *why, size_t room)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, room, "cannot read %s", path);
        return -1;
    }
    char *text = NULL;
    size_t length = 0, capacity = 0;
    for (;;) {
        if (length + 4096 + 1 > capacity) {
            capacity = capacity ? 2 * capacity : 1 << 16;
            char *grown = realloc(text, capacity);
            if (!grown) {
                free(text);
                fclose(f);
                snprintf(why, room, "%s: out of memory", path);
                return -1;
            }
            text = grown;
        }
        size_t got = fread(text + length, 1, 4096, f);
        length += got;
        if (got == 0)
            break;
    }
    fclose(f);
    text[length] = '\0';
    int rc = -1;
    long per_host = number_after(text, text + length, "\"cores_per_host\"");
    const char *list = strstr(text, "\"mapping\"");
    list = list ? strchr(list, '[') : NULL;
    const char *list_end = list ? strchr(list, ']') : NULL;
    if (per_host < 1 || !list || !list_end) {
        snprintf(why, room,
                 "%s is not a mapping of tandem place: it needs \"cores_per_host\" and a "
                 "\"mapping\" list of {\"rank\", \"host\", \"core\"} (docs/PLACEMENT.md)",
                 path);
        goto done;
    }
    for (int i = 0; i < size; i++)
        rank_at[i] = -1;
    int entries = 0;
    for (const char *at = strchr(list, '{'); at && at < list_end; at = strchr(at + 1, '{')) {
        const char *close = strchr(at, '}');
        if (!close || close > list_end)
            break;
        long rank = number_after(at, close, "\"rank\""), host = number_after(at, close, "\"host\"");
        long core = number_after(at, close, "\"core\"");
        long slot = host * per_host + core;
        if (rank < 0 || host < 0 || core < 0 || core >= per_host) {
            snprintf(why, room,
                     "%s: mapping entry %d needs a rank, a host index and a core from 0 "
                     "to %ld",
                     path, entries, per_host - 1);
            goto done;
        }
        if (rank >= size || slot >= size) {
            snprintf(why, room,
                     "%s places rank %ld on host %ld core %ld, the job's process %ld, but the job "
                     "has %d: launch as many processes as the mapping has ranks, block-wise on its "
                     "hosts",
                     path, rank, host, core, slot, size);
            goto done;
        }
        if (rank_at[slot] >= 0) {
            snprintf(why, room, "%s places ranks %d and %ld on host %ld core %ld", path,
                     rank_at[slot], rank, host, core);
            goto done;
        }
        rank_at[slot] = (int)rank;
        entries++;
    }
    if (entries != size) {
        snprintf(why, room, "%s maps %d ranks, and the job has %d", path, entries, size);
        goto done;
    }
    rc = 0;
done:
    free(text);
    return rc;
}

/* TANDEM_REORDER: renumber 'base' as the mapping says; '*reordered' gets
   the new world. */
static int reorder(const char *path, MPI_Comm base, MPI_Comm *reordered)
{
    int rc, rank, size, ok, all_ok;
    char why[512] = "";
    TDM_CALL_MPI(rc, PMPI_Comm_rank(base, &rank));
    TDM_CALL_MPI(rc, PMPI_Comm_size(base, &size));
    int *rank_at = malloc(sizeof(int) * (size_t)size);
    ok = rank_at && read_mapping(path, size, rank_at, why, sizeof why) == 0;
    if (!rank_at)
        snprintf(why, sizeof why, "out of memory");
    TDM_CALL_MPI(rc, PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, base));
    if (!all_ok) {
        if (rank == 0)
            tdm_log_error("TANDEM_REORDER=%s: %s; stopping", path,
                          why[0] ? why : "another rank could not read it");
        free(rank_at);
        stop(rank);
    }
    int key = rank_at[rank];
    free(rank_at);
    TDM_CALL_MPI(rc, PMPI_Comm_split(base, 0, key, reordered));
fn_exit:
    return rc;
}

int tdm_world_start(void)
{
    int ghosts = (int)TDM_CONFIG_NUMBER(GHOSTS);
    const char *mapping = tdm_config[TDM_CFG_REORDER].text;
    int reordering = mapping && mapping[0];
    if (ghosts == 0 && !reordering)
        return MPI_SUCCESS;
    int rc = MPI_SUCCESS, job_size;
    MPI_Comm app = MPI_COMM_NULL;
    if (ghosts > 0) {
        TDM_CALL_MPI(rc, leave_ghosts(ghosts, &app));
        if (progress_process)
            return MPI_SUCCESS; /* init.c hands it to rma/served.c */
    }
    if (reordering) {
        MPI_Comm renumbered;
        TDM_CALL_MPI(rc,
                     reorder(mapping, app == MPI_COMM_NULL ? MPI_COMM_WORLD : app, &renumbered));
        if (app != MPI_COMM_NULL)
            PMPI_Comm_free(&app);
        app = renumbered;
    }
    int *universe, flag = 0;
    TDM_CALL_MPI(rc, PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag));
    TDM_CALL_MPI(rc, PMPI_Comm_size(MPI_COMM_WORLD, &job_size));
    /* the job's slots less the progress processes, and never fewer than the
       application's ranks (an oversubscribed job has more ranks than slots) */
    universe_size = flag ? *universe - ghosts_in_job : 0;
    if (universe_size < job_size - ghosts_in_job)
        universe_size = job_size - ghosts_in_job;
    PMPI_Comm_set_name(app, "MPI_COMM_WORLD");
    tdm_world = app;
    tdm_world_translated = 1;
fn_exit:
    return rc;
}

void tdm_world_finish(void)
{
    if (!tdm_world_translated)
        return;
    if (control != MPI_COMM_NULL) { /* the progress processes leave with us */
        MPI_Request end;
        PMPI_Ibarrier(control, &end);
        PMPI_Wait(&end, MPI_STATUS_IGNORE);
        PMPI_Comm_free(&control);
    }
    free(host_of);
    free(ghost_at);
    host_of = NULL;
    ghost_at = NULL;
    tdm_world_translated = 0;
    PMPI_Comm_free(&tdm_world);
    tdm_world = MPI_COMM_WORLD;
}

int tdm_world_ghosts(void)
{
    return ghosts_in_job;
}

int tdm_world_progress_process(void)
{
    return progress_process;
}

MPI_Comm tdm_world_job(void)
{
    return control;
}

int tdm_world_host_of(int job_rank)
{
    return host_of[job_rank];
}

int tdm_world_is_ghost(int job_rank)
{
    return ghost_at[job_rank];
}

void tdm_world_ghost_exit(void)
{
    PMPI_Comm_free(&own);
    PMPI_Comm_free(&control);
    /* as the application's ranks do: MPICH over UCX's TCP hangs in
       MPI_Finalize without it (docs/KNOWN_ISSUES.md) */
    tdm_ucx_exit_finalize_begins(0);
    PMPI_Finalize();
    exit(0);
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
