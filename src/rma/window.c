/*
 * The one-sided windows of the program (rma/, ARCHITECTURE.md): for now,
 * how many there are, which core/runtime.h publishes for the components that
 * must know whether one-sided operations may target this process: the
 * progress thread serves the MPI library while one exists, so that a target
 * that computes still answers gets, puts and accumulates (core/progress.c,
 * serving), and a collective's schedule runs the MPI library's progress
 * engine once more before it returns (coll/schedule.c).
 */
#include <stdatomic.h>

#include "core/config.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/runtime.h"
#include "core/world.h"
#include "rma/served.h"
#include "wrappers/gen_hooks.h"

/* A window was made (rc is the call's result): count it. */
static int made(int rc)
{
    if (rc == MPI_SUCCESS) {
        atomic_fetch_add_explicit(&tdm_windows_open, 1, memory_order_relaxed);
        if (tdm_progress_running)
            tdm_progress_wake(); /* it serves the window from now on */
    }
    return rc;
}

/* With progress processes: a window they do not serve (not an
   MPI_Win_allocate one), said once under TANDEM_VERBOSE=1. */
static void unserved(const char *call)
{
    static atomic_int said;
    if (tdm_world_ghosts() == 0 || TDM_CONFIG_NUMBER(VERBOSE) < 1 || tdm_world_rank != 0 ||
        atomic_exchange(&said, 1))
        return;
    tdm_log_info("%s: memory the progress processes do not map; %s", call,
                 tdm_progress_running ? "the progress thread serves it"
                                      : "no progress thread runs to serve it (TANDEM_PROGRESS="
                                        "drive or proxy would)");
}

int tdm_hook_Win_create(int lang, void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                        MPI_Comm comm, MPI_Win *win)
{
    (void)lang;
    unserved("MPI_Win_create");
    return made(PMPI_Win_create(base, size, disp_unit, info, comm, win));
}

int tdm_hook_Win_allocate(int lang, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                          void *baseptr, MPI_Win *win)
{
    (void)lang;
    int rc;
    if (tdm_world_ghosts() > 0 &&
        tdm_served_allocate(size, disp_unit, info, comm, baseptr, win, &rc))
        return rc;
    return made(PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win));
}

int tdm_hook_Win_allocate_shared(int lang, MPI_Aint size, int disp_unit, MPI_Info info,
                                 MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    (void)lang;
    unserved("MPI_Win_allocate_shared");
    return made(PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win));
}

int tdm_hook_Win_create_dynamic(int lang, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    (void)lang;
    unserved("MPI_Win_create_dynamic");
    return made(PMPI_Win_create_dynamic(info, comm, win));
}

#if MPI_VERSION >= 4
/* The large-count forms (a disp_unit of MPI_Aint): mpi4py built against MPI 4
   calls these. */
int tdm_hook_Win_create_c(int lang, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                          MPI_Comm comm, MPI_Win *win)
{
    (void)lang;
    unserved("MPI_Win_create");
    return made(PMPI_Win_create_c(base, size, disp_unit, info, comm, win));
}

int tdm_hook_Win_allocate_c(int lang, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                            MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    (void)lang;
    int rc;
    if (tdm_world_ghosts() > 0 &&
        tdm_served_allocate(size, disp_unit, info, comm, baseptr, win, &rc))
        return rc;
    return made(PMPI_Win_allocate_c(size, disp_unit, info, comm, baseptr, win));
}

int tdm_hook_Win_allocate_shared_c(int lang, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                                   MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    (void)lang;
    unserved("MPI_Win_allocate_shared");
    return made(PMPI_Win_allocate_shared_c(size, disp_unit, info, comm, baseptr, win));
}
#endif

int tdm_hook_Win_free(int lang, MPI_Win *win)
{
    (void)lang;
    int rc;
    if (tdm_served_free(win, &rc))
        return rc;
    rc = PMPI_Win_free(win);
    if (rc == MPI_SUCCESS)
        atomic_fetch_sub_explicit(&tdm_windows_open, 1, memory_order_relaxed);
    return rc;
}
