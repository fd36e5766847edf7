/*
 * Start and end of Tandem: the hooks of MPI_Init, MPI_Init_thread,
 * MPI_Finalize, MPI_Query_thread and MPI_Is_thread_main, the library
 * constructor, and the public tandem_* queries.
 *
 * Tandem's own threads (the progress thread, the MPI-IO worker) call MPI
 * concurrently with the application, so when TANDEM_PROGRESS starts them
 * Tandem asks the MPI library for MPI_THREAD_MULTIPLE whatever the application
 * asked for. The application keeps seeing the level it would have had without
 * Tandem: MPI_Init_thread's 'provided' and MPI_Query_thread report
 * min(required, granted), and MPI_Init reports MPI_THREAD_SINGLE, as both
 * Open MPI and MPICH do by default. Without those threads (TANDEM_PROGRESS=off,
 * the default) every Tandem call runs inside an application call, so the init
 * call goes to the MPI library as the application made it: both libraries are
 * slower under MPI_THREAD_MULTIPLE (docs/PERFORMANCE.md, message rate).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "coll/schedule.h"
#include "core/affinity.h"
#include "core/config.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/request.h"
#include "core/proxy.h"
#include "core/runtime.h"
#include "core/world.h"
#include "impl/impl.h"
#include "io/offload.h"
#include "monitor/dump.h"
#include "monitor/monitor.h"
#include "p2p/blocking.h"
#include "rma/served.h"
#include "tandem.h"
#include "wrappers/gen_hooks.h"

/* Set when Tandem chose the thread level (it was not disabled); then
   MPI_Query_thread answers 'app_thread_level' instead of the MPI's level. */
static int tandem_chose_level;
static int app_thread_level = MPI_THREAD_SINGLE;

/* What TANDEM_PROGRESS=auto chose and why (empty where it was set). */
static char auto_reason[160];
/* What Tandem set in the environment for the MPI library, or NULL
   (tdm_impl_before_threaded_init). */
static const char *library_settings;

/* Why the waits sleep without a progress thread (empty where they do not). */
static char nap_reason[200];

static const char *thread_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "an unknown thread level";
    }
}

static void print_configuration(int lang, int granted)
{
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    PMPI_Get_library_version(library, &len);
    for (int i = 0; i < len; i++) { /* first line only, tabs as spaces */
        if (library[i] == '\n' || library[i] == ',') {
            library[i] = '\0';
            break;
        }
        if (library[i] == '\t')
            library[i] = ' ';
    }
    tdm_log_info("Tandem %s built for %s, running on %s; MPI granted %s; %s", tandem_version(),
                 tdm_impl_family(), library, thread_level_name(granted),
                 tdm_active ? "active" : "pass-through");
    if (auto_reason[0])
        tdm_log_info("TANDEM_PROGRESS=auto: %s", auto_reason);
    if (library_settings)
        tdm_log_info("for the MPI library beside Tandem's thread: %s (set it to override)",
                     library_settings);
    if (tdm_progress_issue_guard && tdm_progress_running)
        tdm_log_info("one-sided requests: started apart from the thread's polls (the MPI "
                     "library's osc/ucx sets their completion after the start)");
    if (lang == TDM_LANG_F08)
        tdm_log_info("MPI initialised through the mpi_f08 module: its calls go through Tandem's "
                     "mpi_f08 entry points");
    if (tdm_progress_running)
        tdm_log_info("eager limit: %lld bytes", tdm_eager_limit);
    if (tdm_progress_running && tdm_progress_cpu() >= 0)
        tdm_log_info("progress thread pinned to CPU %d", tdm_progress_cpu());
    else if (tdm_progress_running && tdm_lend_scope())
        tdm_log_info("progress thread runs on any CPU of this node's ranks (no spare CPU)");
    else if (tdm_progress_running && tdm_affinity_spare_for(-1))
        tdm_log_info("progress thread runs where the OS puts it: the node's ranks may run on "
                     "twice as many CPUs as there are ranks");
    else if (tdm_progress_running)
        tdm_log_info("progress thread shares this rank's CPUs (no spare CPU)");
    if (atomic_load(&tdm_progress_follows_app))
        tdm_log_info("progress thread runs on this rank's CPU while it computes (the node's "
                     "ranks are in sessions of their own, which the kernel shares a CPU between)");
    if (tdm_lend_scope())
        tdm_log_info("blocking sends and receives above the eager limit lend their core while "
                     "they wait, with %s",
                     tdm_lend_scope());
    if (tdm_waits_nap())
        tdm_log_info("waits sleep between their polls (blocking sends and receives, MPI_Wait, "
                     "Waitall, Waitany, Waitsome): %s",
                     nap_reason);
    for (int i = 0; i < TDM_CFG_COUNT; i++) {
        char value[256];
        tdm_config_format(&tdm_config_table[i], &tdm_config[i], value, sizeof value);
        tdm_log_info("  %s=%s%s", tdm_config_table[i].name, value,
                     tdm_config[i].from_env ? "" : " (default)");
    }
}

/* TANDEM_PROGRESS=auto (docs/AUTO.md): what to run, decided before
   PMPI_Init, since the thread level is asked for there and Open MPI charges
   MPI_THREAD_MULTIPLE on every small message (+53% latency for 8 bytes,
   docs/PERFORMANCE.md "The thread level's cost"). From what the launcher
   told the rank:
     - ranks on more than one host: drive, waiting on the sockets (event,
       unless TANDEM_POLL says otherwise): over a network shaped to 2 Gbit/s
       it hid 95-100% of a 4 MiB transfer while one side computed, at the
       network's speed, where the MPI library alone hid 4-10% (both MPIs);
     - every rank on this host, with a spare CPU per rank beside what its
       computation takes (tdm_affinity_room_for_threads): proxy. On 16
       cores it hid 79-99% of 1-4 MiB transfers on 8 ranks and 54-100% on
       2, where the MPI library alone hid 0-15% (but for MPICH's shared
       memory, 0-97%), at the thread level's cost to small messages;
     - every rank on this host, no CPU to spare: off (and waits_nap decides
       how the waits wait). There the MPI library moves messages
       through its shared memory by itself, and without a spare core
       Tandem's thread hid 0-9% more of a receiver's transfer, made some
       transfers up to 1.7 times slower (14 of 16 cores running ranks:
       proxy beyond native's spread in 27 of 36 cells), and the thread level
       slows every small message on Open MPI;
     - the launcher said nothing (a singleton, another launcher): off.
   'reason' says why, for TANDEM_VERBOSE=1. */
static int auto_progress(char *reason, size_t size)
{
    int world, local;
    if (tdm_impl_launch_shape(&world, &local) != 0) {
        snprintf(reason, size, "off: the launcher does not say how the ranks spread over hosts");
        return TDM_PROGRESS_OFF;
    }
    const char *omp = getenv("OMP_NUM_THREADS");
    int cpus = tdm_affinity_launch_cpus();
    if (local >= world && world >= 2 && tdm_affinity_room_for_threads(local, cpus, omp)) {
        snprintf(reason, size,
                 "proxy: all %d ranks run on this host, whose %d CPUs leave a spare one per "
                 "rank%s%s for its progress thread",
                 world, cpus, omp ? " beside OMP_NUM_THREADS=" : "", omp ? omp : "");
        return TDM_PROGRESS_PROXY;
    }
    if (local >= world && world < 2) {
        snprintf(reason, size, "off: the job has one rank, with no peer to exchange messages with");
        return TDM_PROGRESS_OFF;
    }
    if (local >= world) {
        snprintf(reason, size,
                 "off: all %d ranks run on this host, where the MPI library's shared memory "
                 "moves messages by itself and the %d CPUs leave no spare one per rank",
                 world, cpus);
        return TDM_PROGRESS_OFF;
    }
    snprintf(reason, size,
             "drive: %d of the %d ranks run on this host, the others across a network, where "
             "the thread waits on the sockets",
             local, world);
    if (!tdm_config[TDM_CFG_POLL].from_env)
        tdm_config[TDM_CFG_POLL].number = TDM_POLL_EVENT;
    return TDM_PROGRESS_DRIVE;
}

/* Across hosts the progress thread does not poll without pause (yield)
   unless TANDEM_POLL says so: driving, it waits on the sockets (event, as
   auto's drive); proxying, it sleeps between polls (sleep). A proxied
   blocking MPI_Send of 1 MiB to a rank of another host, Open MPI over
   TCP, took 7.7-8.8 ms against native's 0.86 with yield and 0.89 with
   sleep on the 16-core machine (10gbit), and on 2 cores (1gbit, 5 rounds)
   13.9 ms with yield, 10.5 with event and 8.2 with sleep against 8.7
   native (docs/perf/device/hosts-poll/probe.txt, docs/AUTO.md). */
static void poll_across_hosts(void)
{
    int world, local;
    if (tdm_config[TDM_CFG_POLL].from_env || tdm_impl_launch_shape(&world, &local) != 0 ||
        local >= world)
        return;
    int proxy = TDM_CONFIG_NUMBER(PROGRESS) == TDM_PROGRESS_PROXY;
    tdm_config[TDM_CFG_POLL].number = proxy ? TDM_POLL_SLEEP : TDM_POLL_EVENT;
}

/* How many CPUs the ranks of a one-host job may run on, all together, or
   -1 where the job spans hosts, has one rank, or the launch's shape is
   unknown. Collective over the application's world in a one-host job: every rank
   with Tandem enabled calls it in MPI_Init, whatever its own TANDEM_WAIT
   and TANDEM_PROGRESS and whether its progress thread started, so that
   ranks whose settings differ still meet in it. */
static int one_host_cpus(void)
{
    int world, local;
    if (tdm_impl_launch_shape(&world, &local) != 0 || local < world || world < 2)
        return -1;
    return tdm_affinity_host_cpus(tdm_world);
}

/* Without a progress thread, how the waits wait (TANDEM_WAIT; docs/AUTO.md):
   spin inside the MPI library, as without Tandem, or poll and sleep between
   the polls (tdm_nap_init). auto sleeps where the job runs on one host whose
   ranks outnumber the 'cpus' they may run on (one_host_cpus): there a wait
   that spins holds a CPU that another rank needs to compute or to send what
   it waits for, and sleeping waits ran NPB's CG in 0.16 times native's time
   on 4 MPICH ranks on 2 cores, LU in 0.08, MG in 0.51 and the ghost cells
   in 0.75, Open MPI's (which yields by itself there) within native's spread
   or below (docs/PERFORMANCE.md, "Real applications: NPB and ghost cells").
   With a CPU per rank a sleeping wait only answers later. 'reason' says
   why, for TANDEM_VERBOSE=1. */
static int waits_nap(int cpus, char *reason, size_t size)
{
    int world = 0;
    PMPI_Comm_size(tdm_world, &world);
    switch ((int)TDM_CONFIG_NUMBER(WAIT)) {
    case TDM_WAIT_SPIN: return 0;
    case TDM_WAIT_LEND: snprintf(reason, size, "TANDEM_WAIT=lend"); return 1;
    default:
        if (cpus < 1 || world <= cpus)
            return 0;
        snprintf(reason, size,
                 "all %d ranks run on this host, on %d CPU%s, where a wait that spun would hold a "
                 "CPU another rank needs (TANDEM_WAIT=auto)",
                 world, cpus, cpus == 1 ? "" : "s");
        return 1;
    }
}

/* TANDEM_STRICT=1: where any rank's configuration warned, every rank says
   its warnings and stops (the ranks agree first: their variables may
   differ). As for TANDEM_REQUIRE_THREADS, each finalizes and exits, which
   cannot lose the message in the launcher's output forwarding as
   MPI_Abort can. */
static void stop_on_warnings(int warnings)
{
    int anywhere = warnings;
    PMPI_Allreduce(&warnings, &anywhere, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anywhere == 0)
        return;
    tdm_log_flush_deferred(warnings > 0);
    if (tdm_world_rank == 0)
        tdm_log_error("TANDEM_STRICT=1: stopping, since the TANDEM_* settings of %s are not "
                      "all valid",
                      warnings > 0 ? "this rank (above)" : "some rank");
    PMPI_Finalize();
    exit(1);
}

/* The common part of both init hooks. 'required' is < 0 for MPI_Init. */
static int start(int lang, int *argc, char ***argv, int required, int *provided)
{
    int rc, granted = MPI_THREAD_SINGLE;
    int disabled, threads;

    int config_warnings = tdm_config_load(tdm_log_defer, NULL);
    disabled = (int)TDM_CONFIG_NUMBER(DISABLE);
    auto_reason[0] = '\0';
    if (TDM_CONFIG_NUMBER(PROGRESS) == TDM_PROGRESS_AUTO)
        tdm_config[TDM_CFG_PROGRESS].number = auto_progress(auto_reason, sizeof auto_reason);
    poll_across_hosts();
    threads = !disabled && TDM_CONFIG_NUMBER(PROGRESS) != TDM_PROGRESS_OFF;
    /* A progress process makes the windows of overlapping communicators at
       once, on threads (rma/served.h): it asks for MPI_THREAD_MULTIPLE
       whatever the ranks do, where the launcher tells it is one. */
    int job_size, host_size, host_rank = tdm_impl_launch_local_rank();
    long ghosts = TDM_CONFIG_NUMBER(GHOSTS);
    if (!disabled && ghosts > 0 && host_rank >= 0 &&
        tdm_impl_launch_shape(&job_size, &host_size) == 0 && host_rank >= host_size - ghosts)
        threads = 1;

    tdm_ucx_exit_init_begins();
    if (!threads) {
        rc =
            required < 0 ? PMPI_Init(argc, argv) : PMPI_Init_thread(argc, argv, required, &granted);
        if (rc == MPI_SUCCESS && required < 0)
            rc = PMPI_Query_thread(&granted);
        if (rc == MPI_SUCCESS && provided)
            *provided = granted;
    } else {
        library_settings = tdm_impl_before_threaded_init();
        rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &granted);
        tandem_chose_level = 1;
        app_thread_level =
            required < 0 ? MPI_THREAD_SINGLE : (required < granted ? required : granted);
        if (rc == MPI_SUCCESS && provided)
            *provided = app_thread_level;
    }
    tdm_ucx_exit_init_ends();
    if (rc != MPI_SUCCESS) {
        tdm_log_flush_deferred(1);
        return rc;
    }

    PMPI_Comm_rank(MPI_COMM_WORLD, &tdm_world_rank);
    tdm_mpi_thread_level = granted;
    int verbose = (int)TDM_CONFIG_NUMBER(VERBOSE);
    int speaks = tdm_world_rank == 0 || verbose >= 2;
    if (TDM_CONFIG_NUMBER(STRICT))
        stop_on_warnings(config_warnings);
    tdm_log_flush_deferred(speaks);

    if (threads && granted < MPI_THREAD_MULTIPLE) {
        if (TDM_CONFIG_NUMBER(REQUIRE_THREADS)) {
            /* Every rank reaches this point (same library, same variables), so
               each one finalizes and exits: unlike MPI_Abort, this cannot lose
               the message in the launcher's output forwarding. */
            if (speaks)
                tdm_log_warn("the MPI library granted %s, not MPI_THREAD_MULTIPLE, and "
                             "TANDEM_REQUIRE_THREADS=1: stopping",
                             thread_level_name(granted));
            PMPI_Finalize();
            exit(1);
        }
        /* Every Tandem call then runs inside an application call, at a level
           the application may use (it was granted at least as much). */
        if (speaks)
            tdm_log_warn("the MPI library granted %s, not MPI_THREAD_MULTIPLE: Tandem runs "
                         "without its threads, as with TANDEM_PROGRESS=off (set "
                         "TANDEM_REQUIRE_THREADS=1 to stop instead)",
                         thread_level_name(granted));
        tdm_config[TDM_CFG_PROGRESS].number = TDM_PROGRESS_OFF;
    }
    /* A progress process does not return from here (core/world.h,
       rma/served.h); rank 0, the first on its host, is never one. */
    if (!disabled && (rc = tdm_world_start()) != MPI_SUCCESS)
        return rc;
    if (!disabled && tdm_world_progress_process())
        tdm_served_ghost_run();
    PMPI_Comm_rank(tdm_world, &tdm_world_rank);
    tdm_active = !disabled;
    tdm_trace_on = tdm_active && TDM_CONFIG_NUMBER(TRACE);
    tdm_progress_windows_poll = tdm_impl_drive_windows;
    tdm_progress_issue_guard = tdm_active && tdm_impl_rma_requests_race();
    if (tdm_active && (rc = tdm_progress_start(tdm_proxy_poll)) != MPI_SUCCESS) {
        tdm_log_warn("cannot set up the progress engine (MPI error %d); Tandem runs in "
                     "pass-through mode",
                     rc);
        tdm_active = tdm_trace_on = 0;
    }
    nap_reason[0] = '\0';
    int host_cpus = disabled ? -1 : one_host_cpus();
    if (tdm_active && tdm_progress_running) {
        int has_core = tdm_affinity_thread_has_core(tdm_progress_cpu());
        tdm_lend_init(has_core);
        tdm_proxy_watch_init(has_core);
    } else if (tdm_active && waits_nap(host_cpus, nap_reason, sizeof nap_reason))
        tdm_nap_init();
    if (tdm_lend_scope()) /* a rank that lends its core may take another's thread */
        tdm_progress_share_node(!tdm_impl_node_uses_shm());
    if (tdm_active) {
        tdm_coll_init();
        if (tdm_monitor_init() == 0)
            tdm_monitor_run_start();
    }
    if (verbose >= 1 && speaks)
        print_configuration(lang, granted);
    return MPI_SUCCESS;
}

int tdm_hook_Init(int lang, int *argc, char ***argv)
{
    return start(lang, argc, argv, -1, NULL);
}

int tdm_hook_Init_thread(int lang, int *argc, char ***argv, int required, int *provided)
{
    return start(lang, argc, argv, required, provided);
}

int tdm_hook_Finalize(int lang)
{
    TDM_TRACE_CALL("MPI_Finalize", lang);
    /* Tandem's threads stop before the MPI library goes away. */
    int report = tdm_progress_running && TDM_CONFIG_NUMBER(VERBOSE) >= 2;
    if (tdm_world_ghosts() > 0 && TDM_CONFIG_NUMBER(VERBOSE) >= 2) {
        long across, handed = tdm_served_offloaded(&across);
        tdm_log_info("progress processes: %ld one-sided operations handed to them (origin "
                     "offload), %ld of them to other hosts",
                     handed, across);
    }
    tdm_io_stop();
    tdm_progress_stop();
    tdm_request_reset();
    tdm_lend_stop();
    tdm_coll_stop();
    tdm_monitor_run_finish();
    tdm_monitor_finalize();
    if (report) {
        double cpu, wall;
        tdm_progress_times(&cpu, &wall);
        tdm_log_info("progress thread: %ld polls (%ld serving windows only, %ld woken by sockets), "
                     "%ld requests counted, %ld moves to a lent CPU, "
                     "%ld by a waiter, slices of %d us (0: the kernel's), "
                     "%.3f ms CPU in %.3f s (%.2f%%); %ld operations proxied, %ld file operations "
                     "offloaded, %ld collectives run (%ld finished in application calls, %ld "
                     "posted without waking the thread, %ld through the shared-memory slots), "
                     "%ld waits watched the thread, %ld polls ran the one-sided progress, %ld "
                     "skipped for a one-sided start",
                     tdm_progress_polls(), tdm_progress_serve_polls(), tdm_progress_socket_wakes(),
                     tdm_request_counted_total(), tdm_progress_moves(), tdm_progress_unstuck(),
                     tdm_progress_slice_us(), cpu * 1e3, wall, wall > 0 ? 100 * cpu / wall : 0.0,
                     tdm_proxy_posted(), tdm_io_offloaded(), tdm_coll_started(),
                     tdm_coll_finished_by_calls(), tdm_coll_unwoken(), tdm_coll_slot_uses(),
                     tdm_proxy_watched(), tdm_progress_window_polls(), tdm_progress_issue_skips());
    }
    /* Always: without it, 13-15 of 20 4-rank MPICH runs over UCX's TCP hung
       here, and it costs nothing measurable (docs/PERFORMANCE.md, "MPICH's
       MPI_Finalize over UCX's TCP"). */
    if (tdm_active)
        tdm_ucx_exit_finalize_begins(TDM_CONFIG_NUMBER(VERBOSE) >= 2);
    tdm_trace_on = 0;
    tdm_active = 0;
    tdm_world_finish();
    return PMPI_Finalize();
}

int tdm_hook_Query_thread(int lang, int *provided)
{
    TDM_TRACE_CALL("MPI_Query_thread", lang);
    if (!tandem_chose_level)
        return PMPI_Query_thread(provided);
    int initialized = 0;
    PMPI_Initialized(&initialized);
    if (!initialized) /* let the MPI library report the error */
        return PMPI_Query_thread(provided);
    *provided = app_thread_level;
    return MPI_SUCCESS;
}

int tdm_hook_Is_thread_main(int lang, int *flag)
{
    /* Tandem initialises MPI on the application's thread, so the MPI library's
       answer is already the one the application would get without Tandem. */
    TDM_TRACE_CALL("MPI_Is_thread_main", lang);
    return PMPI_Is_thread_main(flag);
}

/* Before main: refuse to run inside a program that uses another MPI than the
   one this library was built for. Its handles and constants differ, so the
   first intercepted call would crash; a clear message is better. */
__attribute__((constructor)) static void check_process_mpi(void)
{
    char msg[1024];
    if (tdm_impl_check_process_mpi(msg, sizeof msg) != 0) {
        fprintf(stderr, "tandem: error: %s\n", msg);
        exit(1);
    }
}

TDM_EXPORT const char *tandem_version(void)
{
#define TDM_STR2(x) #x
#define TDM_STR(x) TDM_STR2(x)
    return TDM_STR(TANDEM_VERSION_MAJOR) "." TDM_STR(TANDEM_VERSION_MINOR) "." TDM_STR(
        TANDEM_VERSION_PATCH);
}

TDM_EXPORT const char *tandem_mpi_family(void)
{
    return tdm_impl_family();
}

TDM_EXPORT int tandem_active(void)
{
    return tdm_active;
}
