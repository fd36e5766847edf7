/*
 * The TMPI_* entry points: handles of the application's types (MPI_Comm,
 * MPI_Request) to the runtime's objects, argument checks, and errors, which
 * abort unless the communicator has MPI_ERRORS_RETURN. Every function runs
 * on a virtual rank (user-level thread); called from any other thread it
 * stops with a message.
 */
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl/impl.h"
#include "tmpi.h"
#include "virt/attr.h"
#include "virt/coll.h"
#include "virt/comm.h"
#include "virt/net.h"
#include "virt/private.h"
#include "virt/queue.h"
#include "virt/room.h"
#include "virt/sched.h"

/* Handles of communicators beyond the world and self, and of requests: a
   base plus a number, which MPI_Comm and MPI_Request hold whether they are
   pointers (Open MPI) or integers (MPICH). The real MPI never sees them. */
#define COMM_BASE ((uintptr_t)0x5a000000u)
#define REQUEST_BASE ((uintptr_t)0x6b000000u)
#define HANDLE_SPAN ((uintptr_t)0x01000000u)

/* A buffered send (MPI_Bsend) in flight: its bytes of the attached buffer
   (its packed data, then MPI_BSEND_OVERHEAD unused), until its send
   completes. */
typedef struct {
    size_t offset, bytes;
    tdm_virt_request *send;
} buffered;

typedef struct {
    int initialized, finalized;
    int thread_level;
    char *buffer; /* MPI_Buffer_attach's, or NULL */
    size_t buffer_size;
    buffered *pending; /* in the order of their offsets */
    int n_pending, cap_pending;
    MPI_Comm err_comm; /* the communicator of the call (GET_COMM), for fail */
} rank_state;

static rank_state *states;

static tdm_virt_rank *self_or_die(const char *call)
{
    tdm_virt_rank *self = tdm_virt_self();
    if (!self) {
        fprintf(stderr,
                "tandem virt: %s was called outside a virtual rank (from a thread the "
                "program started?); only a rank's own thread may call MPI\n",
                call);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    return self;
}

/* Error handlers: a communicator's errors_return is 0 for
   MPI_ERRORS_ARE_FATAL, 1 for MPI_ERRORS_RETURN, else 2 + the index of a
   handler of the program's (MPI_Comm_create_errhandler) in this table of
   the process. */
typedef struct {
    void (*fn)(void); /* C's MPI_Comm_errhandler_function, or Fortran's */
    int fortran;
    MPI_Errhandler handle; /* the real MPI's, which the program frees */
    MPI_Comm holder;       /* a real communicator that keeps it (a reference
                              of its own, and one more for each
                              MPI_Comm_get_errhandler, as MPI counts them) */
} handler_entry;

static pthread_mutex_t handlers_mutex = PTHREAD_MUTEX_INITIALIZER;
static handler_entry *handlers;
static int n_handlers, cap_handlers;

static handler_entry handler_at(int errors_return)
{
    pthread_mutex_lock(&handlers_mutex);
    handler_entry e = handlers[errors_return - 2];
    pthread_mutex_unlock(&handlers_mutex);
    return e;
}

/* Call the program's handler (errors_return >= 2) on the call's
   communicator with 'err', as MPI does; 'err' is then returned. */
static void call_handler(tdm_virt_rank *self, int errors_return, int err)
{
    handler_entry e = handler_at(errors_return);
    MPI_Comm comm = states[self->local].err_comm;
    if (e.fortran) {
        MPI_Fint f_comm = (MPI_Fint)(uintptr_t)comm, code = err;
        if (comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF)
            f_comm = PMPI_Comm_c2f(comm);
        ((void (*)(MPI_Fint *, MPI_Fint *))e.fn)(&f_comm, &code);
    } else {
        ((MPI_Comm_errhandler_function *)(void (*)(void))e.fn)(&comm, &err);
    }
}

/* An error of 'call': returned where the communicator asks for it, after
   its handler of the program's, otherwise reported and the job stopped, as
   MPI_ERRORS_ARE_FATAL does. */
static int fail(tdm_virt_rank *self, int errors_return, int err, const char *call)
{
    if (err != MPI_SUCCESS && errors_return >= 2)
        call_handler(self, errors_return, err);
    if (err == MPI_SUCCESS || errors_return)
        return err;
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    PMPI_Error_string(err, text, &len);
    fprintf(stderr, "tandem virt: %s on virtual rank %d failed: %s\n", call, self->world, text);
    fflush(stderr);
    PMPI_Abort(MPI_COMM_WORLD, err);
    return err;
}

static tdm_virt_comm *comm_of(tdm_virt_rank *self, MPI_Comm handle, int *slot)
{
    int s;
    if (handle == MPI_COMM_WORLD)
        s = TDM_VIRT_COMM_WORLD;
    else if (handle == MPI_COMM_SELF)
        s = TDM_VIRT_COMM_SELF;
    else if ((uintptr_t)handle >= COMM_BASE && (uintptr_t)handle < COMM_BASE + HANDLE_SPAN)
        s = (int)((uintptr_t)handle - COMM_BASE);
    else
        return NULL;
    if (slot)
        *slot = s;
    return tdm_virt_comm_get(self->local, s);
}

static MPI_Comm comm_handle(int slot)
{
    if (slot == TDM_VIRT_COMM_WORLD)
        return MPI_COMM_WORLD;
    if (slot == TDM_VIRT_COMM_SELF)
        return MPI_COMM_SELF;
    return (MPI_Comm)(COMM_BASE + (uintptr_t)slot);
}

static tdm_virt_request *request_of(MPI_Request handle)
{
    if ((uintptr_t)handle < REQUEST_BASE || (uintptr_t)handle >= REQUEST_BASE + HANDLE_SPAN)
        return NULL;
    return tdm_virt_request_at((int)((uintptr_t)handle - REQUEST_BASE));
}

static MPI_Request request_handle(const tdm_virt_request *req)
{
    return (MPI_Request)(REQUEST_BASE + (uintptr_t)req->index);
}

int tdm_virt_request_on_release(MPI_Request handle, void (*fn)(void *), void *arg)
{
    tdm_virt_request *req = request_of(handle);
    if (!req)
        return MPI_ERR_REQUEST;
    req->on_release = fn;
    req->on_release_arg = arg;
    return MPI_SUCCESS;
}

static void fill_status(MPI_Status *status, const tdm_virt_request *req)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = req->status_source;
    status->MPI_TAG = req->status_tag;
    status->MPI_ERROR = req->status_error;
    PMPI_Status_set_elements_x(status, MPI_BYTE, (MPI_Count)req->status_bytes);
    PMPI_Status_set_cancelled(status, req->status_cancelled);
}

/* A persistent request between its completion and its next MPI_Start:
   waits and tests take it as MPI_REQUEST_NULL. */
static int inactive(const tdm_virt_request *req)
{
    return req->persistent && !req->active;
}

/* The handle of a request that completed: MPI_REQUEST_NULL, except a
   persistent request's, which stays. */
static void retire_handle(const tdm_virt_request *req, MPI_Request *handle)
{
    if (!req->persistent)
        *handle = MPI_REQUEST_NULL;
}

/* Move the rank's nonblocking collectives on (tests, MPI_Waitany). */
static void progress(tdm_virt_rank *self)
{
    if (self->coll)
        tdm_virt_coll_progress(self, 1);
}

static const char *wait_call(const tdm_virt_request *req, const char *receive, const char *send,
                             const char *collective)
{
    return req->kind == TDM_VIRT_RECV ? receive : req->kind == TDM_VIRT_COLL ? collective : send;
}

static void empty_status(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
    PMPI_Status_set_elements_x(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
}

/* A request already complete, for MPI_PROC_NULL. */
static tdm_virt_request *null_peer_request(tdm_virt_rank *self, int kind)
{
    tdm_virt_request *req = tdm_virt_request_new(self);
    if (!req)
        return NULL;
    req->kind = kind;
    req->status_source = MPI_PROC_NULL;
    req->status_tag = MPI_ANY_TAG;
    req->done = 1;
    return req;
}

/* ------------------------------------------------------------ start, end */

static int (*program_main)(int, char **);
static int program_argc;
static int rank_time; /* TANDEM_VIRT_WTIME=rank: MPI_Wtime is the rank's own time */
/* TMPI_Set_private: the program's variables to privatize, or NULL */
static const char *const *private_names;
static const void *private_anchor;
static const char *private_anchor_name;

void TMPI_Set_private(const char *const *names, const void *anchor, const char *anchor_name)
{
    private_names = names;
    private_anchor = anchor;
    private_anchor_name = anchor_name;
}

/* TMPI_Set_program_copy: the program as a shared object, or NULL; and with
   more than one core, each rank's loaded copy of it */
static const void *program_image;
static size_t program_image_bytes;
static tdm_virt_copy *program_copies;

void TMPI_Set_program_copy(const void *image, size_t bytes)
{
    program_image = image;
    program_image_bytes = bytes;
}

/* A rank's own copy of the program: its entry, as the process's main
   would run it (src/virt/main.c). */
static int run_copy(const tdm_virt_copy *copy, int argc, char **argv)
{
    if (copy->kind == TDM_VIRT_ENTRY_VOID)
        return ((int (*)(void))copy->entry)();
    if (copy->kind == TDM_VIRT_ENTRY_MAIN)
        return ((int (*)(int, char **))copy->entry)(argc, argv);
    int provided, code;
    if ((code = TMPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided)) != MPI_SUCCESS)
        return code;
    code = ((int (*)(int, char **))copy->entry)(argc, argv);
    TMPI_Finalize();
    return code;
}

static char **program_argv;

static int rank_main(tdm_virt_rank *rank)
{
    /* Each rank has its own argv array (getopt reorders it), not its own
       strings. */
    char **argv = calloc((size_t)program_argc + 1, sizeof *argv);
    if (!argv)
        return 1;
    memcpy(argv, program_argv, sizeof *argv * (size_t)program_argc);
    int code = program_copies ? run_copy(&program_copies[rank->local], program_argc, argv)
                              : program_main(program_argc, argv);
    free(argv);
    return code;
}

static void abort_job(int code)
{
    PMPI_Abort(MPI_COMM_WORLD, code);
}

typedef struct {
    int fatal;
} config_warnings;

static void on_config_warning(void *context, const char *message)
{
    config_warnings *w = context;
    if (strncmp(message, "TANDEM_VIRT_", 12) == 0) {
        /* The runtime's own settings are not replaced by a default. */
        const char *cut = strstr(message, "; using the default");
        int n = cut ? (int)(cut - message) : (int)strlen(message);
        fprintf(stderr, "tandem virt: error: %.*s\n", n, message);
        w->fatal = 1;
    } else if (strstr(message, "TANDEM_VIRT_")) {
        fprintf(stderr, "tandem virt: error: %s\n", message);
        w->fatal = 1;
    }
}

#include "core/config.h"

/* MPI_Finalize of the process, with impl/ucx_exit.c's helper armed. */
static void finalize_mpi(void)
{
    tdm_ucx_exit_finalize_begins(0);
    PMPI_Finalize();
}

/* TANDEM_VIRT_PROGRESS: auto runs the progress thread where this host has
   a CPU left over by the cores of its processes (a thread on a CPU a core
   computes on takes its time: the stencil of docs/VIRTUAL.md on 2 hosts of
   one CPU each ran slower with it). Several processes. */
static int wants_progress_thread(int cores, int host)
{
    enum { OFF, THREAD, AUTO };
    int setting = (int)TDM_CONFIG_NUMBER(VIRT_PROGRESS);
    int verbose = TDM_CONFIG_NUMBER(VERBOSE) >= 1 && host == 0;
    if (setting != AUTO) {
        if (verbose)
            fprintf(stderr, "tandem virt: progress thread %s (TANDEM_VIRT_PROGRESS=%s)\n",
                    setting == THREAD ? "on" : "off", setting == THREAD ? "thread" : "off");
        return setting == THREAD;
    }
    MPI_Comm node;
    int local = 1;
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        PMPI_Comm_size(node, &local);
        PMPI_Comm_free(&node);
    }
    cpu_set_t allowed;
    int cpus = sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : 1;
    int spare = cpus > local * cores;
    if (verbose)
        fprintf(stderr,
                "tandem virt: progress thread %s (TANDEM_VIRT_PROGRESS=auto: %d CPUs for %d "
                "process(es) of %d core(s) on this host)\n",
                spare ? "on" : "off: no CPU to spare", cpus, local, cores);
    return spare;
}

/* TANDEM_VIRT_EAGER: the real MPI's eager limit over TCP, for the
   messages between processes, where the environment leaves it (read by
   the MPI library in MPI_Init). A rendezvous message waits until both
   processes poll, which their cores do only between ranks' turns: on 2
   simulated hosts at 1gbit with a 16 KiB bucket the blocking stencil at V
   = 2 / 4 took 11.2 / 7.0 ms per step with Open MPI's 64 KiB limit and
   6.7-8.2 / 4.6-5.4 at 1 MiB, MPICH 10.9 / 11.0-11.6 and 8.0 / 7.4. UCX's
   threshold holds for every transport, hence the check for hosts. */
static void set_eager_limit(void)
{
    /* Only where the launcher says the processes span hosts: between
       processes of one host a rendezvous is a single copy. */
#ifdef OPEN_MPI
    const char *world = getenv("OMPI_COMM_WORLD_SIZE");
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
#else
    const char *world = getenv("PMI_SIZE");
    const char *local = getenv("MPI_LOCALNRANKS");
    const char *rank = getenv("PMI_RANK");
#endif
    long long limit = TDM_CONFIG_NUMBER(VIRT_EAGER);
    if (limit <= 0 || !world || !local || atoi(local) >= atoi(world))
        return;
    char value[32];
    snprintf(value, sizeof value, "%lld", limit);
    if (!getenv("OMPI_MCA_btl_tcp_eager_limit") && !getenv("OMPI_MCA_btl_tcp_max_send_size")) {
        setenv("OMPI_MCA_btl_tcp_eager_limit", value, 0);
        setenv("OMPI_MCA_btl_tcp_max_send_size", value, 0);
    }
    setenv("UCX_RNDV_THRESH", value, 0);
    if (TDM_CONFIG_NUMBER(VERBOSE) >= 1 && rank && atoi(rank) == 0)
        fprintf(stderr,
                "tandem virt: eager limit between hosts %s bytes (TANDEM_VIRT_EAGER; "
                "btl_tcp_eager_limit %s, UCX_RNDV_THRESH %s)\n",
                value, getenv("OMPI_MCA_btl_tcp_eager_limit"), getenv("UCX_RNDV_THRESH"));
}

static void enter_rank(tdm_virt_rank *rank)
{
    tdm_virt_private_enter(rank->local);
}

/* The exit handlers the ranks of a privatized program registered. */
typedef struct {
    void (*handler)(void *);
    void *arg;
    int rank;
} exit_handler;
static exit_handler *exit_handlers;
static int exit_handler_count, exit_handler_room;
static int privatized; /* the ranks' copies are in use */

int TMPI_Private_atexit(void (*handler)(void *), void *arg)
{
    tdm_virt_rank *self = privatized ? tdm_virt_self() : NULL;
    if (!self)
        return 0;
    if (exit_handler_count == exit_handler_room) {
        int room = exit_handler_room ? 2 * exit_handler_room : 16;
        exit_handler *more = realloc(exit_handlers, sizeof *more * (size_t)room);
        if (!more)
            return 0; /* the C library's, as without privatization */
        exit_handlers = more;
        exit_handler_room = room;
    }
    exit_handlers[exit_handler_count++] = (exit_handler){handler, arg, self->local};
    return 1;
}

/* Run the ranks' exit handlers, last registered first, each with its
   rank's copies in place. */
static void run_exit_handlers(void)
{
    while (exit_handler_count > 0) {
        exit_handler h = exit_handlers[--exit_handler_count];
        tdm_virt_private_enter(h.rank);
        h.handler(h.arg);
    }
    free(exit_handlers);
    exit_handlers = NULL;
    exit_handler_room = 0;
}

/* The privatized variables of TMPI_Set_private, a copy for each of 'count'
   ranks: on one core swapped in turn, on more a copy of the program per
   rank; 0, or -1 after saying why (host 0 says it). */
static int privatize(int count, int cores, int host)
{
    char why[512];
    if (cores > 1 && !program_image) {
        if (host == 0)
            fprintf(stderr,
                    "tandem virt: error: the program was built with `tandem cc --privatize` "
                    "without a copy of itself for its ranks (tandem cc said why: an object not "
                    "compiled with -fPIC), so its ranks take turns with its globals on one core: "
                    "give each process one core (TANDEM_VIRT_CORES=1, tandem run --cores 1) and "
                    "more processes instead of %d cores\n",
                    cores);
        return -1;
    }
    if (cores > 1) {
        program_copies = calloc((size_t)count, sizeof *program_copies);
        if (!program_copies || tdm_virt_private_load(program_image, program_image_bytes, count,
                                                     program_copies, why, sizeof why) != 0) {
            if (host == 0)
                fprintf(stderr,
                        "tandem virt: error: cannot give each rank a copy of the program: %s\n",
                        program_copies ? why : "no memory");
            return -1;
        }
        if (TDM_CONFIG_NUMBER(VERBOSE) >= 1 && host == 0)
            fprintf(stderr,
                    "tandem virt: globals privatized, a copy of the program (%zu bytes) per "
                    "rank\n",
                    program_image_bytes);
        return 0;
    }
    if (tdm_virt_private_find(private_names, private_anchor, private_anchor_name, why,
                              sizeof why) != 0 ||
        tdm_virt_private_start(count) != 0) {
        if (host == 0)
            fprintf(stderr, "tandem virt: error: cannot privatize the program's globals: %s\n",
                    why);
        return -1;
    }
    if (TDM_CONFIG_NUMBER(VERBOSE) >= 1 && host == 0)
        fprintf(stderr, "tandem virt: %zu bytes of globals privatized, a copy per rank\n",
                tdm_virt_private_bytes());
    privatized = 1;
    return 0;
}

/* MPI_COMM_TYPE_SHARED's color of this process's ranks: the lowest rank of
   the real MPI's processes on this host. */
static int node_color;

static int node_init(void)
{
    MPI_Comm node;
    int me = 0, err = PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (err == MPI_SUCCESS)
        err = PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (err == MPI_SUCCESS) {
        err = PMPI_Allreduce(&me, &node_color, 1, MPI_INT, MPI_MIN, node);
        PMPI_Comm_free(&node);
    }
    return err;
}

/* The predefined attributes' values: the world's size, the real MPI's last
   error code. */
static int attr_init(int world_size)
{
    int *last = NULL, flag = 0;
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
    tdm_virt_attr_init(world_size, flag && last ? *last : MPI_ERR_LASTCODE);
    return MPI_SUCCESS;
}

int TMPI_Run(int argc, char **argv, int (*main_of_rank)(int, char **))
{
    int provided;
    /* The settings first: some go to the MPI library's own variables. */
    config_warnings warnings = {0};
    tdm_config_load(on_config_warning, &warnings);
    if (!warnings.fatal)
        set_eager_limit();
    /* MPICH over UCX's TCP hangs in MPI_Finalize now and then; the helper
       of impl/ucx_exit.c drives the workers it records here. */
    tdm_ucx_exit_init_begins();
    PMPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    tdm_ucx_exit_init_ends();
    if (warnings.fatal) {
        finalize_mpi();
        return 1;
    }
    int hosts, host;
    PMPI_Comm_size(MPI_COMM_WORLD, &hosts);
    PMPI_Comm_rank(MPI_COMM_WORLD, &host);
    int cores = (int)TDM_CONFIG_NUMBER(VIRT_CORES);
    int per_core = (int)TDM_CONFIG_NUMBER(VIRT_RANKS);
    if (cores > 1 && provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr,
                "tandem virt: error: TANDEM_VIRT_CORES=%d needs MPI_THREAD_MULTIPLE from the MPI "
                "library, which gives only level %d\n",
                cores, provided);
        finalize_mpi();
        return 1;
    }
    int count = cores * per_core;
    program_main = main_of_rank;
    program_argc = argc;
    program_argv = argv;
    states = calloc((size_t)count, sizeof *states);
    tdm_virt_sched_config config = {
        .cores = cores,
        .ranks_per_core = per_core,
        .stack_size = (size_t)TDM_CONFIG_NUMBER(VIRT_STACK),
        .world_offset = host * count,
        .world_size = hosts * count,
        .single_process = hosts == 1,
        .main = rank_main,
        .poll = hosts > 1 ? tdm_virt_net_poll : NULL,
        .abort = abort_job,
        .quiet = hosts > 1 ? tdm_virt_net_quiet : NULL,
        .reported = hosts > 1 ? tdm_virt_net_reported : NULL,
        .rank_time = (int)TDM_CONFIG_NUMBER(VIRT_WTIME) == 1, /* wall|rank */
        .enter = private_names && cores == 1 ? enter_rank : NULL,
    };
    rank_time = config.rank_time;
    if (private_names && privatize(count, cores, host) != 0) {
        finalize_mpi();
        return 1;
    }
    if (!states || tdm_virt_queue_init(count) != MPI_SUCCESS ||
        tdm_virt_net_init(count, host, hosts) != MPI_SUCCESS ||
        tdm_virt_comm_init(count, config.world_offset, config.world_size, host, hosts) != 0 ||
        attr_init(config.world_size) != MPI_SUCCESS || node_init() != MPI_SUCCESS ||
        tdm_virt_sched_init(&config) != 0) {
        fprintf(stderr, "tandem virt: error: cannot make %d virtual ranks\n", count);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (hosts > 1 && wants_progress_thread(cores, host) &&
        (provided < MPI_THREAD_MULTIPLE || tdm_virt_net_start_progress() != 0))
        fprintf(stderr,
                "tandem virt: warning: no progress thread (TANDEM_VIRT_PROGRESS)%s: large "
                "messages between processes move only between the ranks' turns\n",
                provided < MPI_THREAD_MULTIPLE ? ", the MPI library gives no MPI_THREAD_MULTIPLE"
                                               : "");
    tdm_virt_queue_set_progress(tdm_virt_coll_progress);
    int code = tdm_virt_sched_run();
    tdm_virt_net_finish();
    run_exit_handlers();
    privatized = 0;
    free(program_copies); /* the copies stay loaded: their exit handlers run at exit */
    program_copies = NULL;
    tdm_virt_sched_finish();
    tdm_virt_private_finish();
    tdm_virt_comm_finish();
    tdm_virt_queue_finish();
    free(states);
    states = NULL;
    finalize_mpi();
    return code;
}

int TMPI_Init(int *argc, char ***argv)
{
    int provided;
    return TMPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
}

int TMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc;
    (void)argv;
    tdm_virt_rank *self = self_or_die("MPI_Init");
    rank_state *st = &states[self->local];
    if (st->initialized)
        return fail(self, 0, MPI_ERR_OTHER, "MPI_Init (called twice)");
    st->initialized = 1;
    /* A rank is one user-level thread: threads it starts cannot call MPI. */
    st->thread_level = required < MPI_THREAD_FUNNELED ? required : MPI_THREAD_FUNNELED;
    *provided = st->thread_level;
    return MPI_SUCCESS;
}

int TMPI_Initialized(int *flag)
{
    tdm_virt_rank *self = tdm_virt_self();
    *flag = self && states[self->local].initialized;
    return MPI_SUCCESS;
}

static void deliver_buffered(tdm_virt_rank *self, rank_state *st, const char *call);

int TMPI_Finalize(void)
{
    tdm_virt_rank *self = self_or_die("MPI_Finalize");
    rank_state *st = &states[self->local];
    /* MPI_COMM_SELF's attributes go first, their delete callbacks called
       (where libraries hook the end of MPI). */
    int err = tdm_virt_attr_delete_all(self->local, TDM_VIRT_COMM_SELF, MPI_COMM_SELF);
    if (err != MPI_SUCCESS)
        return fail(self, 0, err, "MPI_Finalize (an attribute's delete callback on MPI_COMM_SELF)");
    /* The buffered sends are delivered, as MPI_Buffer_detach would. */
    deliver_buffered(self, st, "MPI_Finalize");
    free(st->pending);
    st->pending = NULL;
    st->cap_pending = 0;
    st->finalized = 1;
    return MPI_SUCCESS;
}

int TMPI_Finalized(int *flag)
{
    tdm_virt_rank *self = tdm_virt_self();
    *flag = self && states[self->local].finalized;
    return MPI_SUCCESS;
}

int TMPI_Query_thread(int *provided)
{
    tdm_virt_rank *self = self_or_die("MPI_Query_thread");
    *provided = states[self->local].thread_level;
    return MPI_SUCCESS;
}

int TMPI_Is_thread_main(int *flag)
{
    *flag = tdm_virt_self() != NULL;
    return MPI_SUCCESS;
}

int TMPI_Abort(MPI_Comm comm, int errorcode)
{
    (void)comm; /* every rank of every process stops, as most MPIs do */
    tdm_virt_rank *self = tdm_virt_self();
    fprintf(stderr, "tandem virt: MPI_Abort with error code %d on virtual rank %d\n", errorcode,
            self ? self->world : -1);
    fflush(stderr);
    return PMPI_Abort(MPI_COMM_WORLD, errorcode);
}

double TMPI_Wtime(void)
{
    tdm_virt_rank *self = rank_time ? tdm_virt_self() : NULL;
    return self ? tdm_virt_rank_wtime(self) : PMPI_Wtime();
}

double TMPI_Wtick(void)
{
    return PMPI_Wtick();
}

/* ------------------------------------------------------- communicators */

#define GET_COMM(call, handle)                           \
    tdm_virt_rank *self = self_or_die(call);             \
    int slot_;                                           \
    tdm_virt_comm *comm = comm_of(self, handle, &slot_); \
    (void)slot_;                                         \
    if (!comm)                                           \
        return fail(self, 0, MPI_ERR_COMM, call);        \
    states[self->local].err_comm = handle;

int TMPI_Comm_rank(MPI_Comm handle, int *rank)
{
    GET_COMM("MPI_Comm_rank", handle);
    *rank = comm->rank;
    return MPI_SUCCESS;
}

int TMPI_Comm_size(MPI_Comm handle, int *size)
{
    GET_COMM("MPI_Comm_size", handle);
    *size = comm->size;
    return MPI_SUCCESS;
}

int TMPI_Comm_set_errhandler(MPI_Comm handle, MPI_Errhandler errhandler)
{
    GET_COMM("MPI_Comm_set_errhandler", handle);
    int found = -1;
    pthread_mutex_lock(&handlers_mutex);
    for (int i = 0; i < n_handlers && found < 0; i++)
        if (handlers[i].handle == errhandler)
            found = i;
    pthread_mutex_unlock(&handlers_mutex);
    if (errhandler == MPI_ERRORS_RETURN)
        comm->errors_return = 1;
    else if (errhandler == MPI_ERRORS_ARE_FATAL)
        comm->errors_return = 0;
    else if (found >= 0)
        comm->errors_return = 2 + found;
    else
        return fail(self, comm->errors_return, MPI_ERR_ARG,
                    "MPI_Comm_set_errhandler (MPI_ERRORS_RETURN, MPI_ERRORS_ARE_FATAL and "
                    "handlers of MPI_Comm_create_errhandler are taken)");
    return MPI_SUCCESS;
}

/* A handler of the program's: the real MPI's handle (which the program
   frees with MPI_Errhandler_free, the real MPI's), its function in the
   process's table. */
int tdm_virt_errhandler_create(void (*fn)(void), int fortran, MPI_Errhandler *errhandler)
{
    tdm_virt_rank *self = self_or_die("MPI_Comm_create_errhandler");
    MPI_Comm holder = MPI_COMM_NULL;
    int err = PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)fn, errhandler);
    if (err == MPI_SUCCESS)
        err = PMPI_Comm_dup(MPI_COMM_SELF, &holder);
    if (err == MPI_SUCCESS)
        err = PMPI_Comm_set_errhandler(holder, *errhandler);
    pthread_mutex_lock(&handlers_mutex);
    handler_entry *grown = NULL;
    if (err == MPI_SUCCESS &&
        !(grown = tdm_virt_room(handlers, n_handlers, &cap_handlers, sizeof *grown, 8)))
        err = MPI_ERR_NO_MEM;
    if (grown)
        handlers = grown;
    if (err == MPI_SUCCESS)
        handlers[n_handlers++] =
            (handler_entry){.fn = fn, .fortran = fortran, .handle = *errhandler, .holder = holder};
    pthread_mutex_unlock(&handlers_mutex);
    states[self->local].err_comm = MPI_COMM_WORLD;
    return fail(self, comm_of(self, MPI_COMM_WORLD, NULL)->errors_return, err,
                "MPI_Comm_create_errhandler");
}

int TMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return tdm_virt_errhandler_create((void (*)(void))fn, 0, errhandler);
}

/* The communicator's handler called with 'errorcode': the program's, or
   the job stopped (MPI_ERRORS_ARE_FATAL), or nothing (MPI_ERRORS_RETURN). */
int TMPI_Comm_call_errhandler(MPI_Comm handle, int errorcode)
{
    GET_COMM("MPI_Comm_call_errhandler", handle);
    fail(self, comm->errors_return, errorcode, "MPI_Comm_call_errhandler");
    return MPI_SUCCESS;
}

static int split(tdm_virt_rank *self, int parent_slot, int color, int key, MPI_Comm *newcomm,
                 const char *call)
{
    tdm_virt_comm *parent = tdm_virt_comm_get(self->local, parent_slot);
    int n = parent->size, me = parent->rank, errors_return = parent->errors_return;
    int mine[2] = {color, key};
    int *all = malloc(sizeof *all * 2 * (size_t)n);
    if (!all)
        return fail(self, errors_return, MPI_ERR_NO_MEM, call);
    int err = tdm_virt_allgather(self, parent, mine, 2, MPI_INT, all, 2, MPI_INT, NULL);
    /* Rank 0 takes n contexts that no process uses; each color takes the
       one of its first member. */
    int contexts[2] = {0, 0};
    if (me == 0)
        tdm_virt_comm_new_contexts(n, &contexts[0], &contexts[1]);
    if (err == MPI_SUCCESS)
        err = tdm_virt_bcast(self, parent, contexts, 2, MPI_INT, 0, NULL);
    if (err != MPI_SUCCESS) {
        free(all);
        return fail(self, errors_return, err, call);
    }
    if (color == MPI_UNDEFINED) {
        free(all);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    /* The members of this color ordered by key, then by rank in the parent. */
    int *order = malloc(sizeof *order * (size_t)n);
    int size = 0, first = -1;
    for (int r = 0; order && r < n; r++) {
        if (all[2 * r] != color)
            continue;
        if (first < 0)
            first = r;
        int at = size++;
        while (at > 0 && all[2 * order[at - 1] + 1] > all[2 * r + 1]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = r;
    }
    int *members = order ? malloc(sizeof *members * (size_t)size) : NULL;
    int rank = 0;
    for (int i = 0; members && i < size; i++) {
        members[i] = tdm_virt_comm_world_rank(parent, order[i]);
        if (order[i] == me)
            rank = i;
    }
    free(order);
    free(all);
    if (!members)
        return fail(self, errors_return, MPI_ERR_NO_MEM, call);
    int slot =
        tdm_virt_comm_add(self->local, contexts[0] + first * contexts[1], size, rank, members);
    if (slot < 0) {
        free(members);
        return fail(self, errors_return, MPI_ERR_NO_MEM, call);
    }
    tdm_virt_comm_get(self->local, slot)->errors_return = errors_return;
    *newcomm = comm_handle(slot);
    return MPI_SUCCESS;
}

static int set_cart(tdm_virt_rank *self, MPI_Comm handle, int ndims, const int *dims,
                    const int *periods);

/* A malloc'ed copy of 'n' ints, or NULL without memory. */
static int *copy_ints(const int *from, int n)
{
    int *copy = malloc(sizeof *copy * (size_t)(n + 1));
    if (copy && n > 0)
        memcpy(copy, from, sizeof *copy * (size_t)n);
    return copy;
}

int TMPI_Comm_dup(MPI_Comm handle, MPI_Comm *newcomm)
{
    GET_COMM("MPI_Comm_dup", handle);
    int err = split(self, slot_, 0, comm->rank, newcomm, "MPI_Comm_dup");
    if (err == MPI_SUCCESS) {
        int made = 0;
        comm_of(self, *newcomm, &made);
        err = tdm_virt_attr_copy(self->local, slot_, handle, made);
    }
    comm = tdm_virt_comm_get(self->local, slot_); /* the table may have moved */
    if (err != MPI_SUCCESS)
        return fail(self, comm->errors_return, err, "MPI_Comm_dup");
    if (comm->cart)
        err = set_cart(self, *newcomm, comm->ndims, comm->topo, comm->topo + comm->ndims);
    if (comm->dist_graph) {
        /* the same distributed graph */
        int n = comm->indegree + comm->outdegree;
        tdm_virt_comm *made = comm_of(self, *newcomm, NULL);
        if (!(made->edges = copy_ints(comm->edges, n)))
            err = MPI_ERR_NO_MEM;
        made->dist_graph = made->edges != NULL;
        made->indegree = comm->indegree;
        made->outdegree = comm->outdegree;
        if (made->dist_graph && comm->graph) {
            /* and the whole graph */
            int length = comm->ndims + (comm->ndims ? comm->topo[comm->ndims - 1] : 0);
            if (!(made->topo = copy_ints(comm->topo, length)))
                err = MPI_ERR_NO_MEM;
            made->graph = made->topo != NULL;
            made->ndims = comm->ndims;
        }
    }
    return fail(self, comm->errors_return, err, "MPI_Comm_dup");
}

int TMPI_Comm_split(MPI_Comm handle, int color, int key, MPI_Comm *newcomm)
{
    GET_COMM("MPI_Comm_split", handle);
    if (color < 0 && color != MPI_UNDEFINED)
        return fail(self, comm->errors_return, MPI_ERR_ARG, "MPI_Comm_split (negative color)");
    return split(self, slot_, color, key, newcomm, "MPI_Comm_split");
}

/* MPI_COMM_TYPE_SHARED: the ranks of the processes on this host. */
int TMPI_Comm_split_type(MPI_Comm handle, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    (void)info;
    GET_COMM("MPI_Comm_split_type", handle);
    if (split_type != MPI_UNDEFINED && split_type != MPI_COMM_TYPE_SHARED)
        return fail(self, comm->errors_return, MPI_ERR_ARG,
                    "MPI_Comm_split_type (a split type other than MPI_COMM_TYPE_SHARED and "
                    "MPI_UNDEFINED)");
    int color = split_type == MPI_UNDEFINED ? MPI_UNDEFINED : node_color;
    return split(self, slot_, color, key, newcomm, "MPI_Comm_split_type");
}

int TMPI_Comm_dup_with_info(MPI_Comm handle, MPI_Info info, MPI_Comm *newcomm)
{
    (void)info; /* no hint changes what the runtime does */
    return TMPI_Comm_dup(handle, newcomm);
}

int TMPI_Comm_set_info(MPI_Comm handle, MPI_Info info)
{
    (void)info;
    GET_COMM("MPI_Comm_set_info", handle);
    return MPI_SUCCESS;
}

/* No hint is used: a new empty info of the real MPI's, the program's to
   free. */
int TMPI_Comm_get_info(MPI_Comm handle, MPI_Info *info_used)
{
    GET_COMM("MPI_Comm_get_info", handle);
    return fail(self, comm->errors_return, PMPI_Info_create(info_used), "MPI_Comm_get_info");
}

int TMPI_Comm_get_errhandler(MPI_Comm handle, MPI_Errhandler *errhandler)
{
    GET_COMM("MPI_Comm_get_errhandler", handle);
    if (comm->errors_return >= 2)
        return fail(self, comm->errors_return,
                    PMPI_Comm_get_errhandler(handler_at(comm->errors_return).holder, errhandler),
                    "MPI_Comm_get_errhandler");
    *errhandler = comm->errors_return ? MPI_ERRORS_RETURN : MPI_ERRORS_ARE_FATAL;
    return MPI_SUCCESS;
}

/* MPI_IDENT for one communicator, MPI_CONGRUENT for the same ranks in the
   same order, MPI_SIMILAR in another order, else MPI_UNEQUAL. */
int TMPI_Comm_compare(MPI_Comm handle1, MPI_Comm handle2, int *result)
{
    tdm_virt_rank *self = self_or_die("MPI_Comm_compare");
    const tdm_virt_comm *a = comm_of(self, handle1, NULL), *b = comm_of(self, handle2, NULL);
    if (!a || !b)
        return fail(self, a ? a->errors_return : 0, MPI_ERR_COMM, "MPI_Comm_compare");
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    *result = MPI_UNEQUAL;
    if (a->size != b->size)
        return MPI_SUCCESS;
    int same_order = 1, found = 1;
    for (int i = 0; i < a->size && found; i++) {
        int w = tdm_virt_comm_world_rank(a, i);
        same_order &= w == tdm_virt_comm_world_rank(b, i);
        found = 0;
        for (int j = 0; j < b->size && !found; j++)
            found = w == tdm_virt_comm_world_rank(b, j);
    }
    if (found)
        *result = same_order ? MPI_CONGRUENT : MPI_SIMILAR;
    return MPI_SUCCESS;
}

int TMPI_Comm_set_name(MPI_Comm handle, const char *name)
{
    GET_COMM("MPI_Comm_set_name", handle);
    char *copy = malloc(MPI_MAX_OBJECT_NAME);
    if (!copy)
        return fail(self, comm->errors_return, MPI_ERR_NO_MEM, "MPI_Comm_set_name");
    snprintf(copy, MPI_MAX_OBJECT_NAME, "%s", name);
    free(comm->name);
    comm->name = copy;
    return MPI_SUCCESS;
}

int TMPI_Comm_get_name(MPI_Comm handle, char *name, int *resultlen)
{
    GET_COMM("MPI_Comm_get_name", handle);
    const char *given = comm->name                 ? comm->name
                        : handle == MPI_COMM_WORLD ? "MPI_COMM_WORLD"
                        : handle == MPI_COMM_SELF  ? "MPI_COMM_SELF"
                                                   : "";
    snprintf(name, MPI_MAX_OBJECT_NAME, "%s", given);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

/* No inter-communicators, no spawned processes. */
int TMPI_Comm_test_inter(MPI_Comm handle, int *flag)
{
    GET_COMM("MPI_Comm_test_inter", handle);
    *flag = 0;
    return MPI_SUCCESS;
}

int TMPI_Comm_get_parent(MPI_Comm *parent)
{
    self_or_die("MPI_Comm_get_parent");
    *parent = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* The profiling level: nothing to change. */
int TMPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}

/* ------------------------------------------------- Cartesian topologies */

/* Give the communicator of 'handle' a Cartesian topology of 'ndims'
   dimensions (sizes 'dims', periodic where 'periods'). */
static int set_cart(tdm_virt_rank *self, MPI_Comm handle, int ndims, const int *dims,
                    const int *periods)
{
    tdm_virt_comm *c = comm_of(self, handle, NULL);
    int *topo = malloc(sizeof *topo * (size_t)(2 * ndims + 1));
    if (!c || !topo) {
        free(topo);
        return MPI_ERR_NO_MEM;
    }
    for (int d = 0; d < ndims; d++) {
        topo[d] = dims[d];
        topo[ndims + d] = periods[d] != 0;
    }
    free(c->topo);
    c->cart = 1;
    c->ndims = ndims;
    c->topo = topo;
    return MPI_SUCCESS;
}

/* The coordinates of rank 'r' of a Cartesian communicator (row-major:
   the last dimension varies fastest). */
static void cart_coords(const tdm_virt_comm *c, int r, int *coords)
{
    for (int d = c->ndims - 1; d >= 0; d--) {
        coords[d] = r % c->topo[d];
        r /= c->topo[d];
    }
}

/* The communicator of 'handle', which must have a Cartesian topology
   (MPI_ERR_TOPOLOGY, the class MPI gives a call on one without). */
#define GET_CART(call, handle) \
    GET_COMM(call, handle);    \
    if (!comm->cart)           \
        return fail(self, comm->errors_return, MPI_ERR_TOPOLOGY, call);

int TMPI_Cart_create(MPI_Comm handle, int ndims, const int dims[], const int periods[], int reorder,
                     MPI_Comm *comm_cart)
{
    GET_COMM("MPI_Cart_create", handle);
    (void)reorder; /* the ranks keep their order: MPI allows it */
    long cells = 1;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0)
            return fail(self, comm->errors_return, MPI_ERR_DIMS,
                        "MPI_Cart_create (a dimension of 0 or fewer ranks)");
        cells *= dims[d];
        if (cells > comm->size)
            break;
    }
    if (ndims < 0 || cells > comm->size)
        return fail(self, comm->errors_return, MPI_ERR_DIMS,
                    "MPI_Cart_create (more ranks in the grid than in the communicator, or "
                    "ndims below 0)");
    int err = split(self, slot_, comm->rank < cells ? 0 : MPI_UNDEFINED, comm->rank, comm_cart,
                    "MPI_Cart_create");
    if (err != MPI_SUCCESS || *comm_cart == MPI_COMM_NULL)
        return err;
    err = set_cart(self, *comm_cart, ndims, dims, periods);
    return fail(self, 0, err, "MPI_Cart_create");
}

int TMPI_Cartdim_get(MPI_Comm handle, int *ndims)
{
    GET_CART("MPI_Cartdim_get", handle);
    *ndims = comm->ndims;
    return MPI_SUCCESS;
}

int TMPI_Cart_get(MPI_Comm handle, int maxdims, int dims[], int periods[], int coords[])
{
    GET_CART("MPI_Cart_get", handle);
    int mine[64], n = comm->ndims < maxdims ? comm->ndims : maxdims;
    if (comm->ndims > 64)
        return fail(self, comm->errors_return, MPI_ERR_DIMS, "MPI_Cart_get (over 64 dimensions)");
    cart_coords(comm, comm->rank, mine);
    for (int d = 0; d < n; d++) {
        dims[d] = comm->topo[d];
        periods[d] = comm->topo[comm->ndims + d];
        coords[d] = mine[d];
    }
    return MPI_SUCCESS;
}

int TMPI_Cart_rank(MPI_Comm handle, const int coords[], int *rank)
{
    GET_CART("MPI_Cart_rank", handle);
    int r = 0;
    for (int d = 0; d < comm->ndims; d++) {
        int size = comm->topo[d], c = coords[d];
        if (comm->topo[comm->ndims + d])
            c = ((c % size) + size) % size;
        else if (c < 0 || c >= size)
            return fail(self, comm->errors_return, MPI_ERR_ARG,
                        "MPI_Cart_rank (a coordinate outside a dimension that is not periodic)");
        r = r * size + c;
    }
    *rank = r;
    return MPI_SUCCESS;
}

int TMPI_Cart_coords(MPI_Comm handle, int rank, int maxdims, int coords[])
{
    GET_CART("MPI_Cart_coords", handle);
    if (rank < 0 || rank >= comm->size)
        return fail(self, comm->errors_return, MPI_ERR_RANK, "MPI_Cart_coords");
    int all[64];
    if (comm->ndims > 64)
        return fail(self, comm->errors_return, MPI_ERR_DIMS,
                    "MPI_Cart_coords (over 64 dimensions)");
    cart_coords(comm, rank, all);
    for (int d = 0; d < comm->ndims && d < maxdims; d++)
        coords[d] = all[d];
    return MPI_SUCCESS;
}

int TMPI_Cart_shift(MPI_Comm handle, int direction, int disp, int *source, int *dest)
{
    GET_CART("MPI_Cart_shift", handle);
    if (direction < 0 || direction >= comm->ndims || comm->ndims > 64)
        return fail(self, comm->errors_return, MPI_ERR_ARG,
                    "MPI_Cart_shift (a direction outside the dimensions)");
    int coords[64], size = comm->topo[direction], periodic = comm->topo[comm->ndims + direction];
    int ends[2] = {-disp, disp}, *out[2] = {source, dest};
    for (int i = 0; i < 2; i++) {
        cart_coords(comm, comm->rank, coords);
        int c = coords[direction] + ends[i];
        if (periodic)
            c = ((c % size) + size) % size;
        if (c < 0 || c >= size) {
            *out[i] = MPI_PROC_NULL;
            continue;
        }
        coords[direction] = c;
        int r = 0;
        for (int d = 0; d < comm->ndims; d++)
            r = r * comm->topo[d] + coords[d];
        *out[i] = r;
    }
    return MPI_SUCCESS;
}

int TMPI_Cart_sub(MPI_Comm handle, const int remain_dims[], MPI_Comm *newcomm)
{
    GET_CART("MPI_Cart_sub", handle);
    int coords[64], dims[64], periods[64], kept = 0, color = 0;
    if (comm->ndims > 64)
        return fail(self, comm->errors_return, MPI_ERR_DIMS, "MPI_Cart_sub (over 64 dimensions)");
    cart_coords(comm, comm->rank, coords);
    for (int d = 0; d < comm->ndims; d++) {
        if (remain_dims[d]) {
            dims[kept] = comm->topo[d];
            periods[kept++] = comm->topo[comm->ndims + d];
        } else {
            color = color * comm->topo[d] + coords[d]; /* the dropped coordinates */
        }
    }
    int errors_return = comm->errors_return;
    int err = split(self, slot_, color, comm->rank, newcomm, "MPI_Cart_sub");
    if (err != MPI_SUCCESS)
        return err;
    err = set_cart(self, *newcomm, kept, dims, periods);
    return fail(self, errors_return, err, "MPI_Cart_sub");
}

int TMPI_Topo_test(MPI_Comm handle, int *status)
{
    GET_COMM("MPI_Topo_test", handle);
    *status = comm->cart         ? MPI_CART
              : comm->graph      ? MPI_GRAPH
              : comm->dist_graph ? MPI_DIST_GRAPH
                                 : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- groups */

/* Groups: ordered lists of world ranks, in one table of the process (any
   rank of any core may free what another made: they are local objects, but
   the table is shared), handles GROUP_BASE plus their slot. MPI_GROUP_EMPTY
   stays the real MPI's constant, the group of no rank. */
#define GROUP_BASE ((uintptr_t)0x7c000000u)

typedef struct {
    int size;
    int *world; /* world rank of each member */
} group;

static group **groups;
static int group_slots;
static pthread_mutex_t group_lock = PTHREAD_MUTEX_INITIALIZER;

/* The group of 'handle' (its size and members in *out), or -1 if it is not
   one. MPI_GROUP_EMPTY is the empty group. */
static int group_of(MPI_Group handle, group *out)
{
    if (handle == MPI_GROUP_EMPTY) {
        *out = (group){0, NULL};
        return 0;
    }
    uintptr_t h = (uintptr_t)handle;
    if (h < GROUP_BASE || h >= GROUP_BASE + HANDLE_SPAN)
        return -1;
    int slot = (int)(h - GROUP_BASE);
    pthread_mutex_lock(&group_lock);
    group *g = slot < group_slots ? groups[slot] : NULL;
    if (g)
        *out = *g;
    pthread_mutex_unlock(&group_lock);
    return g ? 0 : -1;
}

/* A new group of 'size' members (world: malloc'ed, taken over). */
static int group_new(int size, int *world, MPI_Group *handle)
{
    if (size == 0) {
        free(world);
        *handle = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    group *g = malloc(sizeof *g);
    if (!g) {
        free(world);
        return MPI_ERR_NO_MEM;
    }
    *g = (group){size, world};
    pthread_mutex_lock(&group_lock);
    int slot = 0;
    while (slot < group_slots && groups[slot])
        slot++;
    if (slot == group_slots) {
        int more = group_slots ? 2 * group_slots : 64;
        group **grown = realloc(groups, sizeof *grown * (size_t)more);
        if (!grown) {
            pthread_mutex_unlock(&group_lock);
            free(world);
            free(g);
            return MPI_ERR_NO_MEM;
        }
        for (int i = group_slots; i < more; i++)
            grown[i] = NULL;
        groups = grown;
        group_slots = more;
    }
    groups[slot] = g;
    pthread_mutex_unlock(&group_lock);
    *handle = (MPI_Group)(GROUP_BASE + (uintptr_t)slot);
    return MPI_SUCCESS;
}

/* The rank of world rank 'world' in g, or MPI_UNDEFINED. */
static int rank_in(const group *g, int world)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == world)
            return i;
    return MPI_UNDEFINED;
}

static int bad_group(const char *call)
{
    return fail(self_or_die(call), 0, MPI_ERR_GROUP, call);
}

int TMPI_Comm_group(MPI_Comm handle, MPI_Group *out)
{
    GET_COMM("MPI_Comm_group", handle);
    int *world = malloc(sizeof *world * (size_t)comm->size);
    if (!world)
        return fail(self, comm->errors_return, MPI_ERR_NO_MEM, "MPI_Comm_group");
    for (int r = 0; r < comm->size; r++)
        world[r] = tdm_virt_comm_world_rank(comm, r);
    return fail(self, comm->errors_return, group_new(comm->size, world, out), "MPI_Comm_group");
}

int TMPI_Group_size(MPI_Group handle, int *size)
{
    group g;
    if (group_of(handle, &g) != 0)
        return bad_group("MPI_Group_size");
    *size = g.size;
    return MPI_SUCCESS;
}

int TMPI_Group_rank(MPI_Group handle, int *rank)
{
    tdm_virt_rank *self = self_or_die("MPI_Group_rank");
    group g;
    if (group_of(handle, &g) != 0)
        return bad_group("MPI_Group_rank");
    *rank = rank_in(&g, self->world);
    return MPI_SUCCESS;
}

/* MPI_Group_incl ('exclude' 0) and MPI_Group_excl. */
static int incl_excl(const char *call, MPI_Group handle, int n, const int ranks[], int exclude,
                     MPI_Group *out)
{
    tdm_virt_rank *self = self_or_die(call);
    group g;
    if (group_of(handle, &g) != 0)
        return bad_group(call);
    if (n < 0 || n > g.size)
        return fail(self, 0, MPI_ERR_ARG, call);
    /* Each listed rank must be in the group, and listed once. */
    char *listed = calloc((size_t)g.size + 1, 1);
    int *world = malloc(sizeof *world * ((size_t)g.size + 1));
    if (!listed || !world) {
        free(listed);
        free(world);
        return fail(self, 0, MPI_ERR_NO_MEM, call);
    }
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g.size || listed[ranks[i]]) {
            free(listed);
            free(world);
            return fail(self, 0, MPI_ERR_RANK, call);
        }
        listed[ranks[i]] = 1;
    }
    int size = 0;
    if (exclude) {
        for (int r = 0; r < g.size; r++)
            if (!listed[r])
                world[size++] = g.world[r];
    } else {
        for (int i = 0; i < n; i++)
            world[size++] = g.world[ranks[i]];
    }
    free(listed);
    return fail(self, 0, group_new(size, world, out), call);
}

int TMPI_Group_incl(MPI_Group group_handle, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl("MPI_Group_incl", group_handle, n, ranks, 0, newgroup);
}

int TMPI_Group_excl(MPI_Group group_handle, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl("MPI_Group_excl", group_handle, n, ranks, 1, newgroup);
}

int TMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[])
{
    group a, b;
    if (group_of(group1, &a) != 0 || group_of(group2, &b) != 0)
        return bad_group("MPI_Group_translate_ranks");
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (ranks1[i] < 0 || ranks1[i] >= a.size)
            return fail(self_or_die("MPI_Group_translate_ranks"), 0, MPI_ERR_RANK,
                        "MPI_Group_translate_ranks");
        ranks2[i] = rank_in(&b, a.world[ranks1[i]]);
    }
    return MPI_SUCCESS;
}

int TMPI_Group_free(MPI_Group *handle)
{
    if (*handle == MPI_GROUP_EMPTY) {
        *handle = MPI_GROUP_NULL;
        return MPI_SUCCESS;
    }
    uintptr_t h = (uintptr_t)*handle;
    group *g = NULL;
    if (h >= GROUP_BASE && h < GROUP_BASE + HANDLE_SPAN) {
        int slot = (int)(h - GROUP_BASE);
        pthread_mutex_lock(&group_lock);
        if (slot < group_slots) {
            g = groups[slot];
            groups[slot] = NULL;
        }
        pthread_mutex_unlock(&group_lock);
    }
    if (!g)
        return bad_group("MPI_Group_free");
    free(g->world);
    free(g);
    *handle = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

/* MPI_Group_union ('how' 0), _intersection (1) and _difference (2), in
   MPI's order: the first group's members in its order, then (union) the
   second's that the first lacks, in the second's order. */
static int combine(const char *call, MPI_Group handle1, MPI_Group handle2, int how, MPI_Group *out)
{
    tdm_virt_rank *self = self_or_die(call);
    group a, b;
    if (group_of(handle1, &a) != 0 || group_of(handle2, &b) != 0)
        return bad_group(call);
    int *world = malloc(sizeof *world * ((size_t)a.size + (size_t)b.size + 1));
    if (!world)
        return fail(self, 0, MPI_ERR_NO_MEM, call);
    int size = 0;
    for (int i = 0; i < a.size; i++) {
        int in_b = rank_in(&b, a.world[i]) != MPI_UNDEFINED;
        if (how == 0 || (how == 1) == in_b)
            world[size++] = a.world[i];
    }
    for (int i = 0; how == 0 && i < b.size; i++)
        if (rank_in(&a, b.world[i]) == MPI_UNDEFINED)
            world[size++] = b.world[i];
    return fail(self, 0, group_new(size, world, out), call);
}

int TMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return combine("MPI_Group_union", group1, group2, 0, newgroup);
}

int TMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return combine("MPI_Group_intersection", group1, group2, 1, newgroup);
}

int TMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return combine("MPI_Group_difference", group1, group2, 2, newgroup);
}

int TMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    group a, b;
    if (group_of(group1, &a) != 0 || group_of(group2, &b) != 0)
        return bad_group("MPI_Group_compare");
    int same_order = a.size == b.size, same_members = a.size == b.size;
    for (int i = 0; same_members && i < a.size; i++) {
        same_order &= a.world[i] == b.world[i];
        same_members &= rank_in(&b, a.world[i]) != MPI_UNDEFINED;
    }
    *result = same_order ? MPI_IDENT : same_members ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}

/* MPI_Group_range_incl ('exclude' 0) and _range_excl: the ranks of the
   triplets (first, last, stride), in their order, through incl_excl. */
static int range_incl_excl(const char *call, MPI_Group handle, int n, int ranges[][3], int exclude,
                           MPI_Group *out)
{
    tdm_virt_rank *self = self_or_die(call);
    group g;
    if (group_of(handle, &g) != 0)
        return bad_group(call);
    if (n < 0)
        return fail(self, 0, MPI_ERR_ARG, call);
    /* Each rank at most once, so no more than the group's size in all. */
    int *ranks = malloc(sizeof *ranks * ((size_t)g.size + 1));
    if (!ranks)
        return fail(self, 0, MPI_ERR_NO_MEM, call);
    int count = 0, err = MPI_SUCCESS;
    for (int i = 0; i < n && err == MPI_SUCCESS; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0 || first < 0 || first >= g.size || last < 0 || last >= g.size) {
            err = stride == 0 ? MPI_ERR_ARG : MPI_ERR_RANK;
            break;
        }
        for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            if (count == g.size) {
                err = MPI_ERR_RANK; /* a rank twice: incl_excl would say so */
                break;
            }
            ranks[count++] = (int)r;
        }
    }
    if (err != MPI_SUCCESS) {
        free(ranks);
        return fail(self, 0, err, call);
    }
    err = incl_excl(call, handle, count, ranks, exclude, out);
    free(ranks);
    return err;
}

int TMPI_Group_range_incl(MPI_Group group_handle, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_incl_excl("MPI_Group_range_incl", group_handle, n, ranges, 0, newgroup);
}

int TMPI_Group_range_excl(MPI_Group group_handle, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_incl_excl("MPI_Group_range_excl", group_handle, n, ranges, 1, newgroup);
}

/* The rank in 'comm' of world rank 'world', or -1. */
static int comm_rank_of(const tdm_virt_comm *comm, int world)
{
    for (int r = 0; r < comm->size; r++)
        if (tdm_virt_comm_world_rank(comm, r) == world)
            return r;
    return -1;
}

/* MPI_Comm_create: MPI_Comm_split with the group's members as one color,
   ordered by their rank in the group, and every other rank undefined. */
int TMPI_Comm_create(MPI_Comm handle, MPI_Group group_handle, MPI_Comm *newcomm)
{
    GET_COMM("MPI_Comm_create", handle);
    group g;
    if (group_of(group_handle, &g) != 0)
        return fail(self, comm->errors_return, MPI_ERR_GROUP, "MPI_Comm_create");
    /* Every member of the group must be one of the communicator. */
    for (int i = 0; i < g.size; i++) {
        int found = 0;
        for (int r = 0; r < comm->size && !found; r++)
            found = tdm_virt_comm_world_rank(comm, r) == g.world[i];
        if (!found)
            return fail(self, comm->errors_return, MPI_ERR_GROUP,
                        "MPI_Comm_create (the group is not part of the communicator)");
    }
    int key = rank_in(&g, self->world);
    return split(self, slot_, key == MPI_UNDEFINED ? MPI_UNDEFINED : 0, key, newcomm,
                 "MPI_Comm_create");
}

/* MPI_Comm_create_group: collective over the group's members only (the
   communicator's other ranks do not call it). The group's rank 0 takes a
   context and sends it to every other member on the communicator's
   collective context with a negative tag made of 'tag' (collectives use
   tags from 0 up, so neither takes the other's messages); the new
   communicator is the group, in its order. A rank outside the group gets
   MPI_COMM_NULL. */
int TMPI_Comm_create_group(MPI_Comm handle, MPI_Group group_handle, int tag, MPI_Comm *newcomm)
{
    const char *call = "MPI_Comm_create_group";
    GET_COMM(call, handle);
    int errors_return = comm->errors_return; /* comm moves when the table grows */
    group g;
    if (group_of(group_handle, &g) != 0)
        return fail(self, comm->errors_return, MPI_ERR_GROUP, call);
    if (tag < 0)
        return fail(self, comm->errors_return, MPI_ERR_TAG, call);
    for (int i = 0; i < g.size; i++)
        if (comm_rank_of(comm, g.world[i]) < 0)
            return fail(self, comm->errors_return, MPI_ERR_GROUP,
                        "MPI_Comm_create_group (the group is not part of the communicator)");
    int me = rank_in(&g, self->world);
    if (me == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    int members_tag = -2 - (tag & 0x3fffffff), context = 0, stride, err = MPI_SUCCESS;
    int root = comm_rank_of(comm, g.world[0]);
    if (me == 0) {
        tdm_virt_comm_new_contexts(1, &context, &stride);
        for (int i = 1; i < g.size && err == MPI_SUCCESS; i++) {
            tdm_virt_request own, *req = &own;
            tdm_virt_request_init(&own, self, -1);
            err = tdm_virt_send(self, &context, 1, MPI_INT, g.world[i], comm->context + 1,
                                comm->rank, members_tag, 0, &req);
            if (err == MPI_SUCCESS)
                tdm_virt_request_wait(self, req, call, comm_rank_of(comm, g.world[i]), tag);
        }
    } else {
        tdm_virt_request own, *req = &own;
        tdm_virt_request_init(&own, self, -1);
        err =
            tdm_virt_irecv(self, &context, 1, MPI_INT, comm->context + 1, root, members_tag, &req);
        if (err == MPI_SUCCESS) {
            tdm_virt_request_wait(self, req, call, root, tag);
            err = req->status_error;
        }
    }
    int *members = err == MPI_SUCCESS ? malloc(sizeof *members * (size_t)g.size) : NULL;
    if (err == MPI_SUCCESS && !members)
        err = MPI_ERR_NO_MEM;
    if (err != MPI_SUCCESS)
        return fail(self, comm->errors_return, err, call);
    memcpy(members, g.world, sizeof *members * (size_t)g.size);
    int slot = tdm_virt_comm_add(self->local, context, g.size, me, members);
    if (slot < 0) {
        free(members);
        return fail(self, errors_return, MPI_ERR_NO_MEM, call);
    }
    tdm_virt_comm_get(self->local, slot)->errors_return = errors_return;
    *newcomm = comm_handle(slot);
    return MPI_SUCCESS;
}

int TMPI_Comm_free(MPI_Comm *handle)
{
    GET_COMM("MPI_Comm_free", *handle);
    if (slot_ <= TDM_VIRT_COMM_SELF)
        return fail(self, comm->errors_return, MPI_ERR_COMM,
                    "MPI_Comm_free (of MPI_COMM_WORLD or MPI_COMM_SELF)");
    int errors_return = comm->errors_return;
    int err = tdm_virt_attr_delete_all(self->local, slot_, *handle);
    if (err != MPI_SUCCESS)
        return fail(self, errors_return, err, "MPI_Comm_free (an attribute's delete callback)");
    tdm_virt_comm_remove(self->local, slot_);
    *handle = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------- attributes */

/* Errors of the keyval calls, which name no communicator, go to the
   world's handler. */
static int world_errors_return(tdm_virt_rank *self)
{
    return comm_of(self, MPI_COMM_WORLD, NULL)->errors_return;
}

int TMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                            int *keyval, void *extra_state)
{
    tdm_virt_rank *self = self_or_die("MPI_Comm_create_keyval");
    return fail(self, world_errors_return(self),
                tdm_virt_keyval_create(copy, del, extra_state, keyval), "MPI_Comm_create_keyval");
}

int TMPI_Comm_free_keyval(int *keyval)
{
    tdm_virt_rank *self = self_or_die("MPI_Comm_free_keyval");
    return fail(self, world_errors_return(self), tdm_virt_keyval_free(keyval),
                "MPI_Comm_free_keyval");
}

int TMPI_Comm_set_attr(MPI_Comm handle, int keyval, void *value)
{
    GET_COMM("MPI_Comm_set_attr", handle);
    int errors_return = comm->errors_return;
    return fail(self, errors_return, tdm_virt_attr_set(self->local, slot_, handle, keyval, value),
                "MPI_Comm_set_attr");
}

int TMPI_Comm_get_attr(MPI_Comm handle, int keyval, void *value, int *flag)
{
    GET_COMM("MPI_Comm_get_attr", handle);
    return fail(self, comm->errors_return,
                tdm_virt_attr_get(self->local, slot_, keyval, value, flag), "MPI_Comm_get_attr");
}

int TMPI_Comm_delete_attr(MPI_Comm handle, int keyval)
{
    GET_COMM("MPI_Comm_delete_attr", handle);
    int errors_return = comm->errors_return;
    return fail(self, errors_return, tdm_virt_attr_delete(self->local, slot_, handle, keyval),
                "MPI_Comm_delete_attr");
}

int TMPI_Keyval_create(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                       int *keyval, void *extra_state)
{
    return TMPI_Comm_create_keyval(copy, del, keyval, extra_state);
}

int TMPI_Keyval_free(int *keyval)
{
    return TMPI_Comm_free_keyval(keyval);
}

int TMPI_Attr_put(MPI_Comm handle, int keyval, void *value)
{
    return TMPI_Comm_set_attr(handle, keyval, value);
}

int TMPI_Attr_get(MPI_Comm handle, int keyval, void *value, int *flag)
{
    return TMPI_Comm_get_attr(handle, keyval, value, flag);
}

int TMPI_Attr_delete(MPI_Comm handle, int keyval)
{
    return TMPI_Comm_delete_attr(handle, keyval);
}

/* ---------------------------------------------------- point to point */

static int start_send(const char *call, const void *buf, int count, MPI_Datatype type, int dest,
                      int tag, MPI_Comm handle, int sync, tdm_virt_request **out)
{
    GET_COMM(call, handle);
    if (dest == MPI_PROC_NULL) {
        *out = null_peer_request(self, TDM_VIRT_SEND);
        return *out ? MPI_SUCCESS : fail(self, comm->errors_return, MPI_ERR_NO_MEM, call);
    }
    if (dest < 0 || dest >= comm->size)
        return fail(self, comm->errors_return, MPI_ERR_RANK, call);
    if (tag < 0)
        return fail(self, comm->errors_return, MPI_ERR_TAG, call);
    int err = tdm_virt_send(self, buf, count, type, tdm_virt_comm_world_rank(comm, dest),
                            comm->context, comm->rank, tag, sync, out);
    if (err == MPI_SUCCESS) {
        (*out)->errors_return = comm->errors_return;
        (*out)->err_comm = states[self->local].err_comm;
        (*out)->source = dest; /* for the deadlock report */
        (*out)->tag = tag;
    }
    return fail(self, comm->errors_return, err, call);
}

static int start_recv(const char *call, void *buf, int count, MPI_Datatype type, int source,
                      int tag, MPI_Comm handle, tdm_virt_request **out)
{
    GET_COMM(call, handle);
    if (source == MPI_PROC_NULL) {
        *out = null_peer_request(self, TDM_VIRT_RECV);
        return *out ? MPI_SUCCESS : fail(self, comm->errors_return, MPI_ERR_NO_MEM, call);
    }
    if (source != MPI_ANY_SOURCE && (source < 0 || source >= comm->size))
        return fail(self, comm->errors_return, MPI_ERR_RANK, call);
    if (tag < 0 && tag != MPI_ANY_TAG)
        return fail(self, comm->errors_return, MPI_ERR_TAG, call);
    int err = tdm_virt_irecv(self, buf, count, type, comm->context, source, tag, out);
    if (err == MPI_SUCCESS) {
        (*out)->errors_return = comm->errors_return;
        (*out)->err_comm = states[self->local].err_comm;
    }
    return fail(self, comm->errors_return, err, call);
}

/* Wait for req, fill the status, release it; the receive's error. */
static int finish_one(tdm_virt_rank *self, tdm_virt_request *req, MPI_Status *status,
                      const char *call, int peer, int tag)
{
    tdm_virt_request_wait(self, req, call, peer, tag);
    int err = req->status_error, errors_return = req->errors_return;
    if (req->kind == TDM_VIRT_RECV)
        fill_status(status, req);
    else
        empty_status(status);
    states[self->local].err_comm = req->err_comm;
    if (req->persistent)
        req->active = 0;
    else
        tdm_virt_request_release(self, req);
    return fail(self, errors_return, err, call);
}

/* Wait for a blocking call's request: its own, on its stack (never
   released), or a pooled one (MPI_PROC_NULL's). */
static int finish_blocking(tdm_virt_rank *self, tdm_virt_request *req, tdm_virt_request *own,
                           MPI_Status *status, const char *call, int peer, int tag)
{
    if (req != own)
        return finish_one(self, req, status, call, peer, tag);
    tdm_virt_request_wait(self, req, call, peer, tag);
    if (req->kind == TDM_VIRT_RECV)
        fill_status(status, req);
    else
        empty_status(status);
    states[self->local].err_comm = req->err_comm;
    return fail(self, req->errors_return, req->status_error, call);
}

int TMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    tdm_virt_rank *self = self_or_die("MPI_Send");
    tdm_virt_request own, *req = &own;
    tdm_virt_request_init(&own, self, -1);
    int err = start_send("MPI_Send", buf, count, datatype, dest, tag, comm, 0, &req);
    if (err != MPI_SUCCESS)
        return err;
    return finish_blocking(self, req, &own, MPI_STATUS_IGNORE, "MPI_Send", dest, tag);
}

int TMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    tdm_virt_rank *self = self_or_die("MPI_Ssend");
    tdm_virt_request own, *req = &own;
    tdm_virt_request_init(&own, self, -1);
    int err = start_send("MPI_Ssend", buf, count, datatype, dest, tag, comm, 1, &req);
    if (err != MPI_SUCCESS)
        return err;
    return finish_blocking(self, req, &own, MPI_STATUS_IGNORE, "MPI_Ssend", dest, tag);
}

int TMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    /* A ready send may be a standard one (MPI allows it). */
    tdm_virt_rank *self = self_or_die("MPI_Rsend");
    tdm_virt_request own, *req = &own;
    tdm_virt_request_init(&own, self, -1);
    int err = start_send("MPI_Rsend", buf, count, datatype, dest, tag, comm, 0, &req);
    if (err != MPI_SUCCESS)
        return err;
    return finish_blocking(self, req, &own, MPI_STATUS_IGNORE, "MPI_Rsend", dest, tag);
}

/* Free the bytes of the buffered sends that completed. */
static void reap_buffered(tdm_virt_rank *self, rank_state *st)
{
    int kept = 0;
    for (int i = 0; i < st->n_pending; i++) {
        if (tdm_virt_request_done(st->pending[i].send))
            tdm_virt_request_release(self, st->pending[i].send);
        else
            st->pending[kept++] = st->pending[i];
    }
    st->n_pending = kept;
}

/* Wait until every buffered send of the rank completed. */
static void deliver_buffered(tdm_virt_rank *self, rank_state *st, const char *call)
{
    for (int i = 0; i < st->n_pending; i++) {
        tdm_virt_request *send = st->pending[i].send;
        tdm_virt_request_wait(self, send, call, send->source, send->tag);
        tdm_virt_request_release(self, send);
    }
    st->n_pending = 0;
}

/* MPI_Bsend (and what MPI_Ibsend and a started MPI_Bsend_init do): the data
   packed into the attached buffer, at the first gap that holds it and
   MPI_BSEND_OVERHEAD more (MPI_ERR_BUFFER where none does, or no buffer is
   attached), then sent from there; the call returns at once, and the bytes
   stay taken until the send completes. */
static int buffer_send(const char *call, const void *buf, int count, MPI_Datatype type, int dest,
                       int tag, MPI_Comm handle)
{
    GET_COMM(call, handle);
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (dest < 0 || dest >= comm->size)
        return fail(self, comm->errors_return, MPI_ERR_RANK, call);
    if (tag < 0)
        return fail(self, comm->errors_return, MPI_ERR_TAG, call);
    size_t bytes;
    int contiguous;
    int err = tdm_virt_type_bytes(type, count, &bytes, &contiguous);
    if (err != MPI_SUCCESS)
        return fail(self, comm->errors_return, err, call);
    rank_state *st = &states[self->local];
    reap_buffered(self, st);
    size_t need = bytes + MPI_BSEND_OVERHEAD, at = 0;
    int before = 0; /* the new one's place in 'pending' */
    for (; before < st->n_pending; before++) {
        if (st->pending[before].offset >= at + need)
            break;
        at = st->pending[before].offset + st->pending[before].bytes;
        at = (at + 15) & ~(size_t)15;
    }
    if (!st->buffer || at + need > st->buffer_size)
        return fail(self, comm->errors_return, MPI_ERR_BUFFER, call);
    if (st->n_pending == st->cap_pending) {
        int cap = st->cap_pending ? 2 * st->cap_pending : 8;
        buffered *more = realloc(st->pending, sizeof *more * (size_t)cap);
        if (!more)
            return fail(self, comm->errors_return, MPI_ERR_NO_MEM, call);
        st->pending = more;
        st->cap_pending = cap;
    }
    char *data = st->buffer + at;
    err = tdm_virt_pack(buf, count, type, data, bytes, contiguous);
    if (err != MPI_SUCCESS)
        return fail(self, comm->errors_return, err, call);
    tdm_virt_request *send = NULL;
    err = tdm_virt_send(self, data, (int)bytes, MPI_BYTE, tdm_virt_comm_world_rank(comm, dest),
                        comm->context, comm->rank, tag, 0, &send);
    if (err != MPI_SUCCESS)
        return fail(self, comm->errors_return, err, call);
    send->errors_return = comm->errors_return;
    send->err_comm = states[self->local].err_comm;
    send->source = dest; /* for the deadlock report */
    send->tag = tag;
    memmove(&st->pending[before + 1], &st->pending[before],
            sizeof *st->pending * (size_t)(st->n_pending - before));
    st->pending[before] = (buffered){at, need, send};
    st->n_pending++;
    return MPI_SUCCESS;
}

int TMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return buffer_send("MPI_Bsend", buf, count, datatype, dest, tag, comm);
}

int TMPI_Buffer_attach(void *buffer, int size)
{
    tdm_virt_rank *self = self_or_die("MPI_Buffer_attach");
    rank_state *st = &states[self->local];
    if (st->buffer)
        return fail(self, 0, MPI_ERR_BUFFER, "MPI_Buffer_attach (a buffer is attached already)");
    if (size < 0 || (!buffer && size > 0))
        return fail(self, 0, MPI_ERR_ARG, "MPI_Buffer_attach");
    st->buffer = buffer;
    st->buffer_size = (size_t)size;
    return MPI_SUCCESS;
}

int TMPI_Buffer_detach(void *buffer_addr, int *size)
{
    tdm_virt_rank *self = self_or_die("MPI_Buffer_detach");
    rank_state *st = &states[self->local];
    deliver_buffered(self, st, "MPI_Buffer_detach");
    void *was = st->buffer;
    memcpy(buffer_addr, &was, sizeof was);
    *size = (int)st->buffer_size;
    st->buffer = NULL;
    st->buffer_size = 0;
    return MPI_SUCCESS;
}

int TMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status *status)
{
    tdm_virt_rank *self = self_or_die("MPI_Recv");
    tdm_virt_request own, *req = &own;
    tdm_virt_request_init(&own, self, -1);
    int err = start_recv("MPI_Recv", buf, count, datatype, source, tag, comm, &req);
    if (err != MPI_SUCCESS)
        return err;
    return finish_blocking(self, req, &own, status, "MPI_Recv", source, tag);
}

int TMPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    tdm_virt_request *req = NULL;
    int err = start_send("MPI_Isend", buf, count, datatype, dest, tag, comm, 0, &req);
    if (err == MPI_SUCCESS)
        *request = request_handle(req);
    return err;
}

int TMPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    tdm_virt_request *req = NULL;
    int err = start_send("MPI_Issend", buf, count, datatype, dest, tag, comm, 1, &req);
    if (err == MPI_SUCCESS)
        *request = request_handle(req);
    return err;
}

int TMPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    tdm_virt_request *req = NULL;
    int err = start_send("MPI_Irsend", buf, count, datatype, dest, tag, comm, 0, &req);
    if (err == MPI_SUCCESS)
        *request = request_handle(req);
    return err;
}

/* MPI_Ibsend: buffered at once, so its request is complete already. */
int TMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    int err = buffer_send("MPI_Ibsend", buf, count, datatype, dest, tag, comm);
    if (err != MPI_SUCCESS)
        return err;
    tdm_virt_rank *self = tdm_virt_self();
    tdm_virt_request *req = tdm_virt_request_new(self);
    if (!req)
        return fail(self, 0, MPI_ERR_NO_MEM, "MPI_Ibsend");
    req->kind = TDM_VIRT_SEND;
    req->done = 1;
    *request = request_handle(req);
    return MPI_SUCCESS;
}

int TMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    tdm_virt_request *req = NULL;
    int err = start_recv("MPI_Irecv", buf, count, datatype, source, tag, comm, &req);
    if (err == MPI_SUCCESS)
        *request = request_handle(req);
    return err;
}

int TMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status *status)
{
    tdm_virt_request *recv = NULL, *send = NULL;
    int err =
        start_recv("MPI_Sendrecv", recvbuf, recvcount, recvtype, source, recvtag, comm, &recv);
    if (err != MPI_SUCCESS)
        return err;
    err = start_send("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, comm, 0, &send);
    tdm_virt_rank *self = tdm_virt_self();
    if (err != MPI_SUCCESS) {
        /* The receive stays posted: MPI leaves this case undefined. */
        return err;
    }
    finish_one(self, send, MPI_STATUS_IGNORE, "MPI_Sendrecv", dest, sendtag);
    return finish_one(self, recv, status, "MPI_Sendrecv", source, recvtag);
}

/* The buffer packed aside, sent from there while the message comes into
   it (a packed message matches any receive of its type signature). */
int TMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    tdm_virt_rank *self = self_or_die("MPI_Sendrecv_replace");
    int size = 0, position = 0, err = PMPI_Pack_size(count, type, MPI_COMM_SELF, &size);
    char *copy = err == MPI_SUCCESS ? malloc(size > 0 ? (size_t)size : 1) : NULL;
    if (err == MPI_SUCCESS && !copy)
        err = MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS)
        err = PMPI_Pack(buf, count, type, copy, size, &position, MPI_COMM_SELF);
    if (err != MPI_SUCCESS) {
        free(copy);
        const tdm_virt_comm *c = comm_of(self, comm, NULL);
        return fail(self, c ? c->errors_return : 0, err, "MPI_Sendrecv_replace");
    }
    err = TMPI_Sendrecv(copy, position, MPI_PACKED, dest, sendtag, buf, count, type, source,
                        recvtag, comm, status);
    free(copy);
    return err;
}

static int bad_request(const char *call)
{
    return fail(self_or_die(call), 0, MPI_ERR_REQUEST, call);
}

int TMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    if (*request == MPI_REQUEST_NULL) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    tdm_virt_request *req = request_of(*request);
    if (!req)
        return bad_request("MPI_Wait");
    if (inactive(req)) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    retire_handle(req, request);
    return finish_one(
        self_or_die("MPI_Wait"), req, status,
        wait_call(req, "MPI_Wait (a receive)", "MPI_Wait (a send)", "MPI_Wait (a collective)"),
        req->source, req->tag);
}

int TMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    tdm_virt_rank *self = self_or_die("MPI_Test");
    if (*request == MPI_REQUEST_NULL) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    tdm_virt_request *req = request_of(*request);
    if (!req)
        return bad_request("MPI_Test");
    if (inactive(req)) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    progress(self);
    if (!tdm_virt_request_done(req)) {
        /* Let the other ranks of this core run: a loop of MPI_Test would
           otherwise hold the core while the message it tests for cannot be
           sent. */
        tdm_virt_yield(self);
        progress(self);
        if (!tdm_virt_request_done(req)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    retire_handle(req, request);
    return finish_one(self, req, status, "MPI_Test", TDM_VIRT_NONE, TDM_VIRT_NONE);
}

int TMPI_Waitall(int count, MPI_Request *requests, MPI_Status *statuses)
{
    tdm_virt_rank *self = self_or_die("MPI_Waitall");
    for (int i = 0; i < count; i++)
        if (requests[i] != MPI_REQUEST_NULL && !request_of(requests[i]))
            return bad_request("MPI_Waitall");
    int any_error = 0, errors_return = 1;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        if (requests[i] == MPI_REQUEST_NULL) {
            empty_status(st);
            continue;
        }
        tdm_virt_request *req = request_of(requests[i]);
        if (inactive(req)) {
            empty_status(st);
            continue;
        }
        retire_handle(req, &requests[i]);
        tdm_virt_request_wait(self, req,
                              wait_call(req, "MPI_Waitall (a receive)", "MPI_Waitall (a send)",
                                        "MPI_Waitall (a collective)"),
                              req->source, req->tag);
        if (req->kind == TDM_VIRT_RECV)
            fill_status(st, req);
        else
            empty_status(st);
        if (req->status_error != MPI_SUCCESS) {
            any_error = 1;
            /* fatal if one is, else the first handler of the program's */
            if (req->errors_return == 0 || errors_return == 1) {
                errors_return = req->errors_return;
                states[self->local].err_comm = req->err_comm;
            }
        }
        if (req->persistent)
            req->active = 0;
        else
            tdm_virt_request_release(self, req);
    }
    return any_error ? fail(self, errors_return, MPI_ERR_IN_STATUS, "MPI_Waitall") : MPI_SUCCESS;
}

int TMPI_Testall(int count, MPI_Request *requests, int *flag, MPI_Status *statuses)
{
    tdm_virt_rank *self = self_or_die("MPI_Testall");
    for (int pass = 0; pass < 2; pass++) {
        progress(self);
        int all = 1;
        for (int i = 0; i < count; i++) {
            if (requests[i] == MPI_REQUEST_NULL)
                continue;
            tdm_virt_request *req = request_of(requests[i]);
            if (!req)
                return bad_request("MPI_Testall");
            all &= tdm_virt_request_done(req);
        }
        if (all) {
            *flag = 1;
            return TMPI_Waitall(count, requests, statuses);
        }
        if (pass == 0)
            tdm_virt_yield(self);
    }
    *flag = 0;
    return MPI_SUCCESS;
}

/* The index of a complete request among requests, -1 if none, or -2 if
   every one is MPI_REQUEST_NULL. */
static int first_done(int count, MPI_Request *requests, int *bad)
{
    int active = 0;
    *bad = 0;
    for (int i = 0; i < count; i++) {
        if (requests[i] == MPI_REQUEST_NULL)
            continue;
        tdm_virt_request *req = request_of(requests[i]);
        if (!req) {
            *bad = 1;
            return -1;
        }
        if (inactive(req))
            continue;
        active = 1;
        if (tdm_virt_request_done(req))
            return i;
    }
    return active ? -1 : -2;
}

static int complete_at(tdm_virt_rank *self, MPI_Request *requests, int i, int *index,
                       MPI_Status *status, const char *call)
{
    if (i == -2) {
        *index = MPI_UNDEFINED;
        empty_status(status);
        return MPI_SUCCESS;
    }
    tdm_virt_request *req = request_of(requests[i]);
    retire_handle(req, &requests[i]);
    *index = i;
    return finish_one(self, req, status, call, TDM_VIRT_NONE, TDM_VIRT_NONE);
}

/* Sleep until a request of the array is done (first_done's answer: its
   index, or -2 where none is active), the rank's nonblocking collectives
   moving meanwhile; -1 and *bad where a handle is not a request. */
static int wait_for_one(tdm_virt_rank *self, int count, MPI_Request *requests, int *bad,
                        const char *call)
{
    int i;
    for (;;) {
        progress(self);
        if ((i = first_done(count, requests, bad)) != -1 || *bad)
            return i;
        tdm_virt_wait_prepare(self, call, TDM_VIRT_NONE, TDM_VIRT_NONE);
        if ((i = first_done(count, requests, bad)) != -1) {
            tdm_virt_wait_cancel(self);
            return i;
        }
        if (self->coll && tdm_virt_coll_progress(self, 0)) {
            tdm_virt_wait_cancel(self);
            continue;
        }
        tdm_virt_wait_commit(self);
    }
}

int TMPI_Waitany(int count, MPI_Request *requests, int *index, MPI_Status *status)
{
    tdm_virt_rank *self = self_or_die("MPI_Waitany");
    int bad, i = wait_for_one(self, count, requests, &bad, "MPI_Waitany");
    if (bad)
        return bad_request("MPI_Waitany");
    return complete_at(self, requests, i, index, status, "MPI_Waitany");
}

int TMPI_Testany(int count, MPI_Request *requests, int *index, int *flag, MPI_Status *status)
{
    tdm_virt_rank *self = self_or_die("MPI_Testany");
    int bad;
    progress(self);
    int i = first_done(count, requests, &bad);
    if (i == -1 && !bad) {
        tdm_virt_yield(self);
        progress(self);
        i = first_done(count, requests, &bad);
    }
    if (bad)
        return bad_request("MPI_Testany");
    if (i == -1) {
        *flag = 0;
        *index = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    *flag = 1;
    return complete_at(self, requests, i, index, status, "MPI_Testany");
}

/* MPI_Waitsome and MPI_Testsome: every request of the array that is done,
   completed in the array's order (for the wait, once one is); *outcount
   MPI_UNDEFINED where none is active. */
static int some(int count, MPI_Request *requests, int *outcount, int *indices, MPI_Status *statuses,
                int wait, const char *call)
{
    tdm_virt_rank *self = self_or_die(call);
    int bad, i;
    if (wait) {
        i = wait_for_one(self, count, requests, &bad, call);
    } else {
        progress(self);
        if ((i = first_done(count, requests, &bad)) == -1 && !bad) {
            tdm_virt_yield(self);
            progress(self);
            i = first_done(count, requests, &bad);
        }
    }
    if (bad)
        return bad_request(call);
    *outcount = i == -2 ? MPI_UNDEFINED : 0;
    int any_error = 0;
    for (int k = i < 0 ? count : i; k < count; k++) {
        tdm_virt_request *req = requests[k] == MPI_REQUEST_NULL ? NULL : request_of(requests[k]);
        if (!req || inactive(req) || !tdm_virt_request_done(req))
            continue;
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[*outcount];
        int index, err = complete_at(self, requests, k, &index, st, call);
        if (err != MPI_SUCCESS) {
            any_error = 1;
            if (st != MPI_STATUS_IGNORE)
                st->MPI_ERROR = err;
        }
        indices[(*outcount)++] = k;
    }
    return any_error ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int TMPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    return some(incount, requests, outcount, indices, statuses, 1, "MPI_Waitsome");
}

int TMPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    return some(incount, requests, outcount, indices, statuses, 0, "MPI_Testsome");
}

int TMPI_Request_free(MPI_Request *request)
{
    tdm_virt_rank *self = self_or_die("MPI_Request_free");
    tdm_virt_request *req = request_of(*request);
    if (!req)
        return bad_request("MPI_Request_free");
    *request = MPI_REQUEST_NULL;
    if (req->persistent == TDM_VIRT_COLL) {
        free(req->p_buf); /* its arguments; a started one's schedule holds its own */
        req->p_buf = NULL;
    }
    tdm_virt_request_release(self, req);
    return MPI_SUCCESS;
}

/* MPI_Send_init and MPI_Recv_init: an inactive request that keeps what
   each MPI_Start starts. */
static int persistent(const char *call, int kind, int mode, void *buf, int count, MPI_Datatype type,
                      int peer, int tag, MPI_Comm handle, MPI_Request *request)
{
    GET_COMM(call, handle);
    if (peer != MPI_PROC_NULL && !(kind == TDM_VIRT_RECV && peer == MPI_ANY_SOURCE) &&
        (peer < 0 || peer >= comm->size))
        return fail(self, comm->errors_return, MPI_ERR_RANK, call);
    if (tag < 0 && !(kind == TDM_VIRT_RECV && tag == MPI_ANY_TAG))
        return fail(self, comm->errors_return, MPI_ERR_TAG, call);
    tdm_virt_request *req = tdm_virt_request_new(self);
    if (!req)
        return fail(self, comm->errors_return, MPI_ERR_NO_MEM, call);
    req->kind = req->persistent = kind;
    req->p_mode = mode;
    req->done = 1; /* inactive */
    req->errors_return = comm->errors_return;
    req->err_comm = states[self->local].err_comm;
    req->p_buf = buf;
    req->p_count = count;
    req->p_type = type;
    req->p_peer = peer;
    req->p_tag = tag;
    req->p_comm = handle;
    *request = request_handle(req);
    return MPI_SUCCESS;
}

int TMPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    return persistent("MPI_Send_init", TDM_VIRT_SEND, TDM_VIRT_STANDARD, (void *)(uintptr_t)buf,
                      count, datatype, dest, tag, comm, request);
}

int TMPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request)
{
    return persistent("MPI_Ssend_init", TDM_VIRT_SEND, TDM_VIRT_SYNCHRONOUS, (void *)(uintptr_t)buf,
                      count, datatype, dest, tag, comm, request);
}

int TMPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request)
{
    return persistent("MPI_Bsend_init", TDM_VIRT_SEND, TDM_VIRT_BUFFERED, (void *)(uintptr_t)buf,
                      count, datatype, dest, tag, comm, request);
}

int TMPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request)
{
    return persistent("MPI_Rsend_init", TDM_VIRT_SEND, TDM_VIRT_STANDARD, (void *)(uintptr_t)buf,
                      count, datatype, dest, tag, comm, request);
}

int TMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    return persistent("MPI_Recv_init", TDM_VIRT_RECV, TDM_VIRT_STANDARD, buf, count, datatype,
                      source, tag, comm, request);
}

static int start_collective(tdm_virt_rank *self, tdm_virt_request *req);

int TMPI_Start(MPI_Request *request)
{
    tdm_virt_rank *self = self_or_die("MPI_Start");
    tdm_virt_request *req = request_of(*request);
    if (!req || !req->persistent || req->active)
        return bad_request("MPI_Start");
    /* The same request starts again: its status as new. */
    req->active = 1;
    req->done = 0;
    req->status_source = req->status_tag = req->status_error = 0;
    req->status_bytes = 0;
    req->status_cancelled = 0;
    req->next = NULL;
    if (req->persistent == TDM_VIRT_COLL)
        return start_collective(self, req);
    if (req->p_peer == MPI_PROC_NULL) {
        req->status_source = MPI_PROC_NULL;
        req->status_tag = MPI_ANY_TAG;
        req->done = 1;
        return MPI_SUCCESS;
    }
    int err;
    if (req->persistent == TDM_VIRT_SEND && req->p_mode == TDM_VIRT_BUFFERED) {
        /* Buffered at once: complete, as MPI_Ibsend's request. */
        err = buffer_send("MPI_Start", req->p_buf, req->p_count, req->p_type, req->p_peer,
                          req->p_tag, req->p_comm);
        if (err == MPI_SUCCESS)
            req->done = 1;
    } else if (req->persistent == TDM_VIRT_SEND)
        err = start_send("MPI_Start", req->p_buf, req->p_count, req->p_type, req->p_peer,
                         req->p_tag, req->p_comm, req->p_mode == TDM_VIRT_SYNCHRONOUS, &req);
    else
        err = start_recv("MPI_Start", req->p_buf, req->p_count, req->p_type, req->p_peer,
                         req->p_tag, req->p_comm, &req);
    if (err != MPI_SUCCESS) {
        req->active = 0;
        req->done = 1;
    }
    return err;
}

int TMPI_Startall(int count, MPI_Request *requests)
{
    for (int i = 0; i < count; i++) {
        int err = TMPI_Start(&requests[i]);
        if (err != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

int TMPI_Cancel(MPI_Request *request)
{
    tdm_virt_rank *self = self_or_die("MPI_Cancel");
    tdm_virt_request *req = request_of(*request);
    if (!req)
        return bad_request("MPI_Cancel");
    /* A receive that no message matched yet is taken back; a send, or a
       receive already matched, completes as it would have. */
    if (req->kind == TDM_VIRT_RECV && !tdm_virt_request_done(req))
        tdm_virt_cancel(self, req);
    return MPI_SUCCESS;
}

int TMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    tdm_virt_rank *self = self_or_die("MPI_Request_get_status");
    if (request == MPI_REQUEST_NULL) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    tdm_virt_request *req = request_of(request);
    if (!req)
        return bad_request("MPI_Request_get_status");
    if (inactive(req)) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    progress(self);
    if (!tdm_virt_request_done(req)) {
        tdm_virt_yield(self);
        progress(self);
    }
    *flag = tdm_virt_request_done(req);
    if (*flag) {
        if (req->kind == TDM_VIRT_RECV)
            fill_status(status, req);
        else
            empty_status(status);
    }
    return MPI_SUCCESS;
}

/* Messages that MPI_Mprobe or MPI_Improbe took, until their MPI_Mrecv or
   MPI_Imrecv: handles MESSAGE_BASE plus a slot of one table of the process
   (MPI_MESSAGE_NULL and MPI_MESSAGE_NO_PROC stay the real MPI's
   constants). */
#define MESSAGE_BASE ((uintptr_t)0x4e000000u)

typedef struct {
    tdm_virt_message *msg;
    int errors_return; /* of the communicator it came on */
} taken_message;

static taken_message *messages;
static int message_slots;
static pthread_mutex_t message_lock = PTHREAD_MUTEX_INITIALIZER;

static int message_new(tdm_virt_message *msg, int errors_return, MPI_Message *handle)
{
    pthread_mutex_lock(&message_lock);
    int slot = 0;
    while (slot < message_slots && messages[slot].msg)
        slot++;
    if (slot == message_slots) {
        int more = message_slots ? 2 * message_slots : 64;
        taken_message *grown = realloc(messages, sizeof *grown * (size_t)more);
        if (!grown) {
            pthread_mutex_unlock(&message_lock);
            return MPI_ERR_NO_MEM;
        }
        for (int i = message_slots; i < more; i++)
            grown[i] = (taken_message){NULL, 0};
        messages = grown;
        message_slots = more;
    }
    messages[slot] = (taken_message){msg, errors_return};
    pthread_mutex_unlock(&message_lock);
    *handle = (MPI_Message)(MESSAGE_BASE + (uintptr_t)slot);
    return MPI_SUCCESS;
}

/* The message of 'handle' (taken out of the table with 'remove'), or NULL. */
static tdm_virt_message *message_of(MPI_Message handle, int remove, int *errors_return)
{
    uintptr_t h = (uintptr_t)handle;
    if (h < MESSAGE_BASE || h >= MESSAGE_BASE + HANDLE_SPAN)
        return NULL;
    int slot = (int)(h - MESSAGE_BASE);
    tdm_virt_message *msg = NULL;
    pthread_mutex_lock(&message_lock);
    if (slot < message_slots && messages[slot].msg) {
        msg = messages[slot].msg;
        *errors_return = messages[slot].errors_return;
        if (remove)
            messages[slot].msg = NULL;
    }
    pthread_mutex_unlock(&message_lock);
    return msg;
}

/* MPI_Probe, MPI_Iprobe ('block' 0) and, with 'message' not NULL, their
   matched forms MPI_Mprobe and MPI_Improbe, which take the message out of
   the queue. */
static int probe(const char *call, int source, int tag, MPI_Comm handle, int block, int *flag,
                 MPI_Message *message, MPI_Status *status)
{
    GET_COMM(call, handle);
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        if (message)
            *message = MPI_MESSAGE_NO_PROC;
        if (status != MPI_STATUS_IGNORE) {
            empty_status(status);
            status->MPI_SOURCE = MPI_PROC_NULL;
        }
        return MPI_SUCCESS;
    }
    if (source != MPI_ANY_SOURCE && (source < 0 || source >= comm->size))
        return fail(self, comm->errors_return, MPI_ERR_RANK, call);
    if (tag < 0 && tag != MPI_ANY_TAG)
        return fail(self, comm->errors_return, MPI_ERR_TAG, call);
    int found, from, with_tag;
    size_t bytes;
    tdm_virt_message *taken = NULL;
    tdm_virt_message **take = message ? &taken : NULL;
    int err = tdm_virt_probe(self, call, comm->context, source, tag, block, &found, &from,
                             &with_tag, &bytes, take);
    if (err != MPI_SUCCESS)
        return fail(self, comm->errors_return, err, call);
    if (!found && !block) {
        tdm_virt_yield(self);
        err = tdm_virt_probe(self, call, comm->context, source, tag, 0, &found, &from, &with_tag,
                             &bytes, take);
    }
    if (found && message) {
        err = message_new(taken, comm->errors_return, message);
        if (err != MPI_SUCCESS) {
            /* Received into nothing, so that the sender is not left waiting. */
            tdm_virt_request own, *req = &own;
            tdm_virt_request_init(&own, self, -1);
            tdm_virt_mrecv(self, taken, NULL, 0, MPI_BYTE, &req);
            return fail(self, comm->errors_return, err, call);
        }
    } else if (message) {
        *message = MPI_MESSAGE_NULL;
    }
    *flag = found;
    if (found && status != MPI_STATUS_IGNORE) {
        status->MPI_SOURCE = from;
        status->MPI_TAG = with_tag;
        status->MPI_ERROR = MPI_SUCCESS;
        PMPI_Status_set_elements_x(status, MPI_BYTE, (MPI_Count)bytes);
        PMPI_Status_set_cancelled(status, 0);
    }
    return fail(self, comm->errors_return, err, call);
}

int TMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int flag;
    return probe("MPI_Probe", source, tag, comm, 1, &flag, NULL, status);
}

int TMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    return probe("MPI_Iprobe", source, tag, comm, 0, flag, NULL, status);
}

int TMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    int flag;
    return probe("MPI_Mprobe", source, tag, comm, 1, &flag, message, status);
}

int TMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status)
{
    return probe("MPI_Improbe", source, tag, comm, 0, flag, message, status);
}

/* MPI_Mrecv (request NULL: its own on the stack, waited for here) and
   MPI_Imrecv: the message is here already, so the receive completes at
   once. */
static int mrecv(const char *call, void *buf, int count, MPI_Datatype type, MPI_Message *message,
                 MPI_Status *status, MPI_Request *request)
{
    tdm_virt_rank *self = self_or_die(call);
    if (*message == MPI_MESSAGE_NO_PROC) {
        *message = MPI_MESSAGE_NULL;
        if (request) {
            tdm_virt_request *req = null_peer_request(self, TDM_VIRT_RECV);
            if (!req)
                return fail(self, 0, MPI_ERR_NO_MEM, call);
            *request = request_handle(req);
        } else if (status != MPI_STATUS_IGNORE) {
            empty_status(status);
            status->MPI_SOURCE = MPI_PROC_NULL;
        }
        return MPI_SUCCESS;
    }
    int errors_return = 0;
    tdm_virt_message *msg = message_of(*message, 0, &errors_return);
    if (!msg)
        return fail(self, 0, MPI_ERR_REQUEST, call);
    tdm_virt_request own, *req = NULL;
    if (!request) {
        tdm_virt_request_init(&own, self, -1);
        req = &own;
    }
    int err = tdm_virt_mrecv(self, msg, buf, count, type, &req);
    if (err != MPI_SUCCESS)
        return fail(self, errors_return, err, call);
    message_of(*message, 1, &errors_return);
    *message = MPI_MESSAGE_NULL;
    req->errors_return = errors_return;
    if (request) {
        *request = request_handle(req);
        return MPI_SUCCESS;
    }
    return finish_blocking(self, req, &own, status, call, req->source, req->tag);
}

int TMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Status *status)
{
    return mrecv("MPI_Mrecv", buf, count, datatype, message, status, NULL);
}

int TMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                MPI_Request *request)
{
    return mrecv("MPI_Imrecv", buf, count, datatype, message, MPI_STATUS_IGNORE, request);
}

/* ------------------------------------------------------- collectives */

/* A blocking collective (request NULL) or a nonblocking one: its error
   through the communicator's handler, its request's handle in *request. */
static int collective(tdm_virt_rank *self, const tdm_virt_comm *comm, int err,
                      tdm_virt_request *req, MPI_Request *request, const char *call)
{
    if (err == MPI_SUCCESS && request) {
        req->errors_return = comm->errors_return;
        req->err_comm = states[self->local].err_comm;
        req->source = req->tag = TDM_VIRT_NONE;
        *request = request_handle(req);
    }
    return fail(self, comm->errors_return, err, call);
}

#define OUT(request) ((request) ? &req : NULL)

static int barrier(const char *call, MPI_Comm handle, MPI_Request *request)
{
    GET_COMM(call, handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_barrier(self, comm, OUT(request));
    return collective(self, comm, err, req, request, call);
}

static int bcast(const char *call, void *buffer, int count, MPI_Datatype datatype, int root,
                 MPI_Comm handle, MPI_Request *request)
{
    GET_COMM(call, handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_bcast(self, comm, buffer, count, datatype, root, OUT(request));
    return collective(self, comm, err, req, request, call);
}

static int reduce(const char *call, const void *sendbuf, void *recvbuf, int count,
                  MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm handle, MPI_Request *request)
{
    GET_COMM(call, handle);
    tdm_virt_request *req = NULL;
    int err =
        tdm_virt_reduce(self, comm, sendbuf, recvbuf, count, datatype, op, root, OUT(request));
    return collective(self, comm, err, req, request, call);
}

static int allreduce(const char *call, const void *sendbuf, void *recvbuf, int count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm handle, MPI_Request *request)
{
    GET_COMM(call, handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_allreduce(self, comm, sendbuf, recvbuf, count, datatype, op, OUT(request));
    return collective(self, comm, err, req, request, call);
}

static int gatherv(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                   void *recvbuf, const int *recvcounts, const int *displs, int recvcount,
                   MPI_Datatype recvtype, int root, MPI_Comm handle, MPI_Request *request)
{
    GET_COMM(call, handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_gatherv(self, comm, call, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                               displs, recvcount, recvtype, root, OUT(request));
    return collective(self, comm, err, req, request, call);
}

static int scatterv(const char *call, const void *sendbuf, const int *sendcounts, const int *displs,
                    int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm handle, MPI_Request *request)
{
    GET_COMM(call, handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_scatterv(self, comm, call, sendbuf, sendcounts, displs, sendcount, sendtype,
                                recvbuf, recvcount, recvtype, root, OUT(request));
    return collective(self, comm, err, req, request, call);
}

static int allgather(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm handle,
                     MPI_Request *request)
{
    GET_COMM(call, handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_allgather(self, comm, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                 recvtype, OUT(request));
    return collective(self, comm, err, req, request, call);
}

static int alltoall(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm handle,
                    MPI_Request *request)
{
    GET_COMM(call, handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_alltoall(self, comm, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                recvtype, OUT(request));
    return collective(self, comm, err, req, request, call);
}

int TMPI_Barrier(MPI_Comm comm)
{
    return barrier("MPI_Barrier", comm, NULL);
}

int TMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    return barrier("MPI_Ibarrier", comm, request);
}

int TMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast("MPI_Bcast", buffer, count, datatype, root, comm, NULL);
}

int TMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    return bcast("MPI_Ibcast", buffer, count, datatype, root, comm, request);
}

int TMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm)
{
    return reduce("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm, NULL);
}

int TMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request *request)
{
    return reduce("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

int TMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm)
{
    return allreduce("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, comm, NULL);
}

int TMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request *request)
{
    return allreduce("MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op, comm, request);
}

int TMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gatherv("MPI_Gather", sendbuf, sendcount, sendtype, recvbuf, NULL, NULL, recvcount,
                   recvtype, root, comm, NULL);
}

int TMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    return gatherv("MPI_Igather", sendbuf, sendcount, sendtype, recvbuf, NULL, NULL, recvcount,
                   recvtype, root, comm, request);
}

int TMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return scatterv("MPI_Scatter", sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, root, comm, NULL);
}

int TMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    return scatterv("MPI_Iscatter", sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, root, comm, request);
}

int TMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgather("MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                     comm, NULL);
}

int TMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return allgather("MPI_Iallgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                     comm, request);
}

int TMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall("MPI_Alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                    comm, NULL);
}

int TMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return alltoall("MPI_Ialltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                    comm, request);
}

/* The v collectives, the scans and reduce-scatter, blocking (request NULL)
   and nonblocking. */

int TMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm handle)
{
    const char *call = "MPI_Gatherv";
    GET_COMM(call, handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_gatherv(self, comm, call, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                               displs, 0, recvtype, root, NULL);
    return collective(self, comm, err, req, NULL, "MPI_Gatherv");
}

int TMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm handle, MPI_Request *request)
{
    const char *call = "MPI_Igatherv";
    GET_COMM(call, handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_gatherv(self, comm, call, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                               displs, 0, recvtype, root, &req);
    return collective(self, comm, err, req, request, "MPI_Igatherv");
}

int TMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm handle)
{
    const char *call = "MPI_Scatterv";
    GET_COMM(call, handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_scatterv(self, comm, call, sendbuf, sendcounts, displs, 0, sendtype, recvbuf,
                                recvcount, recvtype, root, NULL);
    return collective(self, comm, err, req, NULL, "MPI_Scatterv");
}

int TMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm handle, MPI_Request *request)
{
    const char *call = "MPI_Iscatterv";
    GET_COMM(call, handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_scatterv(self, comm, call, sendbuf, sendcounts, displs, 0, sendtype, recvbuf,
                                recvcount, recvtype, root, &req);
    return collective(self, comm, err, req, request, "MPI_Iscatterv");
}

int TMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm handle)
{
    GET_COMM("MPI_Allgatherv", handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_allgatherv(self, comm, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                  displs, recvtype, NULL);
    return collective(self, comm, err, req, NULL, "MPI_Allgatherv");
}

int TMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm handle, MPI_Request *request)
{
    GET_COMM("MPI_Iallgatherv", handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_allgatherv(self, comm, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                  displs, recvtype, &req);
    return collective(self, comm, err, req, request, "MPI_Iallgatherv");
}

int TMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm handle)
{
    GET_COMM("MPI_Alltoallv", handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_alltoallv(self, comm, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                 recvcounts, rdispls, recvtype, NULL);
    return collective(self, comm, err, req, NULL, "MPI_Alltoallv");
}

int TMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm handle,
                    MPI_Request *request)
{
    GET_COMM("MPI_Ialltoallv", handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_alltoallv(self, comm, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                 recvcounts, rdispls, recvtype, &req);
    return collective(self, comm, err, req, request, "MPI_Ialltoallv");
}

int TMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm handle)
{
    GET_COMM("MPI_Alltoallw", handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_alltoallw(self, comm, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                 recvcounts, rdispls, recvtypes, NULL);
    return collective(self, comm, err, req, NULL, "MPI_Alltoallw");
}

int TMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm handle,
                    MPI_Request *request)
{
    GET_COMM("MPI_Ialltoallw", handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_alltoallw(self, comm, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                 recvcounts, rdispls, recvtypes, &req);
    return collective(self, comm, err, req, request, "MPI_Ialltoallw");
}

int TMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm handle)
{
    GET_COMM("MPI_Scan", handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_scan(self, comm, sendbuf, recvbuf, count, datatype, op, 0, NULL);
    return collective(self, comm, err, req, NULL, "MPI_Scan");
}

int TMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm handle, MPI_Request *request)
{
    GET_COMM("MPI_Iscan", handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_scan(self, comm, sendbuf, recvbuf, count, datatype, op, 0, &req);
    return collective(self, comm, err, req, request, "MPI_Iscan");
}

int TMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm handle)
{
    GET_COMM("MPI_Exscan", handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_scan(self, comm, sendbuf, recvbuf, count, datatype, op, 1, NULL);
    return collective(self, comm, err, req, NULL, "MPI_Exscan");
}

int TMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm handle, MPI_Request *request)
{
    GET_COMM("MPI_Iexscan", handle);
    tdm_virt_request *req = NULL;
    int err = tdm_virt_scan(self, comm, sendbuf, recvbuf, count, datatype, op, 1, &req);
    return collective(self, comm, err, req, request, "MPI_Iexscan");
}

int TMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm handle)
{
    GET_COMM("MPI_Reduce_scatter_block", handle);
    tdm_virt_request *req = NULL;
    int err =
        tdm_virt_reduce_scatter(self, comm, sendbuf, recvbuf, NULL, recvcount, datatype, op, NULL);
    return collective(self, comm, err, req, NULL, "MPI_Reduce_scatter_block");
}

int TMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm handle,
                               MPI_Request *request)
{
    GET_COMM("MPI_Ireduce_scatter_block", handle);
    tdm_virt_request *req = NULL;
    int err =
        tdm_virt_reduce_scatter(self, comm, sendbuf, recvbuf, NULL, recvcount, datatype, op, &req);
    return collective(self, comm, err, req, request, "MPI_Ireduce_scatter_block");
}

int TMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm handle)
{
    GET_COMM("MPI_Reduce_scatter", handle);
    tdm_virt_request *req = NULL;
    int err =
        tdm_virt_reduce_scatter(self, comm, sendbuf, recvbuf, recvcounts, 0, datatype, op, NULL);
    return collective(self, comm, err, req, NULL, "MPI_Reduce_scatter");
}

int TMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm handle, MPI_Request *request)
{
    GET_COMM("MPI_Ireduce_scatter", handle);
    tdm_virt_request *req = NULL;
    int err =
        tdm_virt_reduce_scatter(self, comm, sendbuf, recvbuf, recvcounts, 0, datatype, op, &req);
    return collective(self, comm, err, req, request, "MPI_Ireduce_scatter");
}

/*
 * Persistent collectives (MPI-4's MPI_Bcast_init and the rest): the request
 * keeps the arguments; each MPI_Start starts the nonblocking collective with
 * them, its schedule completing this same request (the rank's coll_adopt,
 * virt/coll), which then waits inactive for the next start. The info
 * argument is accepted and ignored.
 */
typedef struct pcoll pcoll;
struct pcoll {
    int (*start)(const pcoll *a, MPI_Request *request); /* the nonblocking call */
    const void *sendbuf;
    void *recvbuf;
    int sendcount, recvcount, root;
    MPI_Datatype sendtype, recvtype;
    MPI_Op op;
    MPI_Comm comm;
    const int *sendcounts, *sdispls, *recvcounts, *rdispls;
    const MPI_Datatype *sendtypes, *recvtypes;
};

static int start_collective(tdm_virt_rank *self, tdm_virt_request *req)
{
    const pcoll *a = req->p_buf;
    MPI_Request started = MPI_REQUEST_NULL;
    self->coll_adopt = req;
    int err = a->start(a, &started);
    self->coll_adopt = NULL; /* an argument refused before the schedule began */
    if (err == MPI_SUCCESS && started != request_handle(req)) {
        fprintf(stderr,
                "tandem virt: error: MPI_Start of a persistent collective in virtual rank "
                "%d made a request of its own\n",
                self->world);
        abort_job(1);
    }
    if (err != MPI_SUCCESS) {
        req->active = 0;
        req->done = 1;
    }
    return err;
}

static int persistent_collective(const char *call, const pcoll *args, MPI_Request *request)
{
    GET_COMM(call, args->comm);
    pcoll *a = malloc(sizeof *a);
    tdm_virt_request *req = a ? tdm_virt_request_new(self) : NULL;
    if (!req) {
        free(a);
        return fail(self, comm->errors_return, MPI_ERR_NO_MEM, call);
    }
    *a = *args;
    req->kind = req->persistent = TDM_VIRT_COLL;
    req->done = 1; /* inactive */
    req->errors_return = comm->errors_return;
    req->err_comm = states[self->local].err_comm;
    req->source = req->tag = TDM_VIRT_NONE;
    req->p_buf = a;
    req->p_comm = args->comm;
    *request = request_handle(req);
    return MPI_SUCCESS;
}

static int start_barrier(const pcoll *a, MPI_Request *r)
{
    return TMPI_Ibarrier(a->comm, r);
}

static int start_bcast(const pcoll *a, MPI_Request *r)
{
    return TMPI_Ibcast(a->recvbuf, a->recvcount, a->recvtype, a->root, a->comm, r);
}

static int start_reduce(const pcoll *a, MPI_Request *r)
{
    return TMPI_Ireduce(a->sendbuf, a->recvbuf, a->recvcount, a->recvtype, a->op, a->root, a->comm,
                        r);
}

static int start_allreduce(const pcoll *a, MPI_Request *r)
{
    return TMPI_Iallreduce(a->sendbuf, a->recvbuf, a->recvcount, a->recvtype, a->op, a->comm, r);
}

static int start_gather(const pcoll *a, MPI_Request *r)
{
    return TMPI_Igather(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                        a->recvtype, a->root, a->comm, r);
}

static int start_gatherv(const pcoll *a, MPI_Request *r)
{
    return TMPI_Igatherv(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcounts,
                         a->rdispls, a->recvtype, a->root, a->comm, r);
}

static int start_scatter(const pcoll *a, MPI_Request *r)
{
    return TMPI_Iscatter(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                         a->recvtype, a->root, a->comm, r);
}

static int start_scatterv(const pcoll *a, MPI_Request *r)
{
    return TMPI_Iscatterv(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype, a->recvbuf,
                          a->recvcount, a->recvtype, a->root, a->comm, r);
}

static int start_allgather(const pcoll *a, MPI_Request *r)
{
    return TMPI_Iallgather(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                           a->recvtype, a->comm, r);
}

static int start_allgatherv(const pcoll *a, MPI_Request *r)
{
    return TMPI_Iallgatherv(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcounts,
                            a->rdispls, a->recvtype, a->comm, r);
}

static int start_alltoall(const pcoll *a, MPI_Request *r)
{
    return TMPI_Ialltoall(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                          a->recvtype, a->comm, r);
}

static int start_alltoallv(const pcoll *a, MPI_Request *r)
{
    return TMPI_Ialltoallv(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype, a->recvbuf,
                           a->recvcounts, a->rdispls, a->recvtype, a->comm, r);
}

static int start_alltoallw(const pcoll *a, MPI_Request *r)
{
    return TMPI_Ialltoallw(a->sendbuf, a->sendcounts, a->sdispls, a->sendtypes, a->recvbuf,
                           a->recvcounts, a->rdispls, a->recvtypes, a->comm, r);
}

static int start_scan(const pcoll *a, MPI_Request *r)
{
    return TMPI_Iscan(a->sendbuf, a->recvbuf, a->recvcount, a->recvtype, a->op, a->comm, r);
}

static int start_exscan(const pcoll *a, MPI_Request *r)
{
    return TMPI_Iexscan(a->sendbuf, a->recvbuf, a->recvcount, a->recvtype, a->op, a->comm, r);
}

static int start_reduce_scatter_block(const pcoll *a, MPI_Request *r)
{
    return TMPI_Ireduce_scatter_block(a->sendbuf, a->recvbuf, a->recvcount, a->recvtype, a->op,
                                      a->comm, r);
}

static int start_reduce_scatter(const pcoll *a, MPI_Request *r)
{
    return TMPI_Ireduce_scatter(a->sendbuf, a->recvbuf, a->recvcounts, a->recvtype, a->op, a->comm,
                                r);
}

int TMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_barrier, .comm = comm};
    return persistent_collective("MPI_Barrier_init", &a, request);
}

int TMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_bcast,
               .recvbuf = buffer,
               .recvcount = count,
               .recvtype = datatype,
               .root = root,
               .comm = comm};
    return persistent_collective("MPI_Bcast_init", &a, request);
}

int TMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_reduce,
               .sendbuf = sendbuf,
               .recvbuf = recvbuf,
               .recvcount = count,
               .recvtype = datatype,
               .op = op,
               .root = root,
               .comm = comm};
    return persistent_collective("MPI_Reduce_init", &a, request);
}

int TMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_allreduce,
               .sendbuf = sendbuf,
               .recvbuf = recvbuf,
               .recvcount = count,
               .recvtype = datatype,
               .op = op,
               .comm = comm};
    return persistent_collective("MPI_Allreduce_init", &a, request);
}

int TMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_gather,
               .sendbuf = sendbuf,
               .sendcount = sendcount,
               .sendtype = sendtype,
               .recvbuf = recvbuf,
               .recvcount = recvcount,
               .recvtype = recvtype,
               .root = root,
               .comm = comm};
    return persistent_collective("MPI_Gather_init", &a, request);
}

int TMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_gatherv,
               .sendbuf = sendbuf,
               .sendcount = sendcount,
               .sendtype = sendtype,
               .recvbuf = recvbuf,
               .recvcounts = recvcounts,
               .rdispls = displs,
               .recvtype = recvtype,
               .root = root,
               .comm = comm};
    return persistent_collective("MPI_Gatherv_init", &a, request);
}

int TMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_scatter,
               .sendbuf = sendbuf,
               .sendcount = sendcount,
               .sendtype = sendtype,
               .recvbuf = recvbuf,
               .recvcount = recvcount,
               .recvtype = recvtype,
               .root = root,
               .comm = comm};
    return persistent_collective("MPI_Scatter_init", &a, request);
}

int TMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_scatterv,
               .sendbuf = sendbuf,
               .sendcounts = sendcounts,
               .sdispls = displs,
               .sendtype = sendtype,
               .recvbuf = recvbuf,
               .recvcount = recvcount,
               .recvtype = recvtype,
               .root = root,
               .comm = comm};
    return persistent_collective("MPI_Scatterv_init", &a, request);
}

int TMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_allgather,
               .sendbuf = sendbuf,
               .sendcount = sendcount,
               .sendtype = sendtype,
               .recvbuf = recvbuf,
               .recvcount = recvcount,
               .recvtype = recvtype,
               .comm = comm};
    return persistent_collective("MPI_Allgather_init", &a, request);
}

int TMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_allgatherv,
               .sendbuf = sendbuf,
               .sendcount = sendcount,
               .sendtype = sendtype,
               .recvbuf = recvbuf,
               .recvcounts = recvcounts,
               .rdispls = displs,
               .recvtype = recvtype,
               .comm = comm};
    return persistent_collective("MPI_Allgatherv_init", &a, request);
}

int TMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_alltoall,
               .sendbuf = sendbuf,
               .sendcount = sendcount,
               .sendtype = sendtype,
               .recvbuf = recvbuf,
               .recvcount = recvcount,
               .recvtype = recvtype,
               .comm = comm};
    return persistent_collective("MPI_Alltoall_init", &a, request);
}

int TMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_alltoallv,
               .sendbuf = sendbuf,
               .sendcounts = sendcounts,
               .sdispls = sdispls,
               .sendtype = sendtype,
               .recvbuf = recvbuf,
               .recvcounts = recvcounts,
               .rdispls = rdispls,
               .recvtype = recvtype,
               .comm = comm};
    return persistent_collective("MPI_Alltoallv_init", &a, request);
}

int TMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_alltoallw,
               .sendbuf = sendbuf,
               .sendcounts = sendcounts,
               .sdispls = sdispls,
               .sendtypes = sendtypes,
               .recvbuf = recvbuf,
               .recvcounts = recvcounts,
               .rdispls = rdispls,
               .recvtypes = recvtypes,
               .comm = comm};
    return persistent_collective("MPI_Alltoallw_init", &a, request);
}

int TMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_scan,
               .sendbuf = sendbuf,
               .recvbuf = recvbuf,
               .recvcount = count,
               .recvtype = datatype,
               .op = op,
               .comm = comm};
    return persistent_collective("MPI_Scan_init", &a, request);
}

int TMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_exscan,
               .sendbuf = sendbuf,
               .recvbuf = recvbuf,
               .recvcount = count,
               .recvtype = datatype,
               .op = op,
               .comm = comm};
    return persistent_collective("MPI_Exscan_init", &a, request);
}

int TMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_reduce_scatter_block,
               .sendbuf = sendbuf,
               .recvbuf = recvbuf,
               .recvcount = recvcount,
               .recvtype = datatype,
               .op = op,
               .comm = comm};
    return persistent_collective("MPI_Reduce_scatter_block_init", &a, request);
}

int TMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request *request)
{
    (void)info;
    pcoll a = {.start = start_reduce_scatter,
               .sendbuf = sendbuf,
               .recvbuf = recvbuf,
               .recvcounts = recvcounts,
               .recvtype = datatype,
               .op = op,
               .comm = comm};
    return persistent_collective("MPI_Reduce_scatter_init", &a, request);
}

/* ------------------------------------------ neighbourhood collectives */

/* The 'kind' of neighbourhood collective: each form's arguments made
   per-neighbour counts, byte displacements and datatypes. */
enum { NB_ALLGATHER, NB_ALLGATHERV, NB_ALLTOALL, NB_ALLTOALLV, NB_ALLTOALLW };

typedef struct {
    const void *sendbuf;
    int sendcount;
    const int *sendcounts, *sdispls;
    const MPI_Aint *sdispls_w;
    MPI_Datatype sendtype;
    const MPI_Datatype *sendtypes;
    void *recvbuf;
    int recvcount;
    const int *recvcounts, *rdispls;
    const MPI_Aint *rdispls_w;
    MPI_Datatype recvtype;
    const MPI_Datatype *recvtypes;
} nb_args;

/* The in- and out-neighbours of a communicator with a topology: a
   Cartesian one's in MPI's order (for each dimension the rank at -1, then
   the one at +1, both lists alike), a distributed graph's as given.
   'lists' gets room for both; returns 0, or -1 without a topology. */
static int neighbors_of(const tdm_virt_comm *comm, int **lists, int *n_in, int *n_out)
{
    if (comm->dist_graph) {
        *n_in = comm->indegree;
        *n_out = comm->outdegree;
        *lists = malloc(sizeof **lists * (size_t)(*n_in + *n_out + 1));
        for (int k = 0; *lists && k < *n_in + *n_out; k++)
            (*lists)[k] = comm->edges[k];
        return 0;
    }
    if (!comm->cart || comm->ndims > 64)
        return -1;
    int n = 2 * comm->ndims, coords[64];
    *n_in = *n_out = n;
    *lists = malloc(sizeof **lists * (size_t)(2 * n + 1));
    for (int d = 0; *lists && d < comm->ndims; d++) {
        int size = comm->topo[d], periodic = comm->topo[comm->ndims + d];
        for (int i = 0; i < 2; i++) {
            cart_coords(comm, comm->rank, coords);
            int c = coords[d] + (i ? 1 : -1);
            if (periodic)
                c = ((c % size) + size) % size;
            int r = MPI_PROC_NULL;
            if (c >= 0 && c < size) {
                coords[d] = c;
                r = 0;
                for (int e = 0; e < comm->ndims; e++)
                    r = r * comm->topo[e] + coords[e];
            }
            (*lists)[2 * d + i] = (*lists)[n + 2 * d + i] = r;
        }
    }
    return 0;
}

static int neighbor(const char *call, int kind, const nb_args *a, MPI_Comm handle,
                    MPI_Request *request)
{
    GET_COMM(call, handle);
    int *nb = NULL, n_in = 0, n_out = 0;
    if (neighbors_of(comm, &nb, &n_in, &n_out) != 0)
        return fail(self, comm->errors_return, MPI_ERR_TOPOLOGY, call);
    int n = n_in > n_out ? n_in : n_out;
    int *counts = malloc(sizeof *counts * (size_t)(2 * n + 1));
    MPI_Aint *disp = malloc(sizeof *disp * (size_t)(2 * n + 1));
    MPI_Datatype *types = malloc(sizeof *types * (size_t)(2 * n + 1));
    if (!nb || !counts || !disp || !types) {
        free(nb);
        free(counts);
        free(disp);
        free(types);
        return fail(self, comm->errors_return, MPI_ERR_NO_MEM, call);
    }
    int *scounts = counts, *rcounts = counts + n;
    MPI_Aint *sdisp = disp, *rdisp = disp + n;
    MPI_Datatype *stypes = types, *rtypes = types + n;
    MPI_Aint sextent = 0, rextent = 0, lb;
    if (kind != NB_ALLTOALLW) {
        PMPI_Type_get_extent(a->sendtype, &lb, &sextent);
        PMPI_Type_get_extent(a->recvtype, &lb, &rextent);
    }
    for (int k = 0; k < n_out; k++) {
        switch (kind) {
        case NB_ALLGATHER:
        case NB_ALLGATHERV:
            scounts[k] = a->sendcount;
            sdisp[k] = 0;
            break;
        case NB_ALLTOALL:
            scounts[k] = a->sendcount;
            sdisp[k] = (MPI_Aint)k * a->sendcount * sextent;
            break;
        case NB_ALLTOALLV:
            scounts[k] = a->sendcounts[k];
            sdisp[k] = (MPI_Aint)a->sdispls[k] * sextent;
            break;
        default: scounts[k] = a->sendcounts[k]; sdisp[k] = a->sdispls_w[k];
        }
        stypes[k] = kind == NB_ALLTOALLW ? a->sendtypes[k] : a->sendtype;
    }
    for (int k = 0; k < n_in; k++) {
        if (kind == NB_ALLGATHER || kind == NB_ALLTOALL) {
            rcounts[k] = a->recvcount;
            rdisp[k] = (MPI_Aint)k * a->recvcount * rextent;
        } else if (kind == NB_ALLTOALLW) {
            rcounts[k] = a->recvcounts[k];
            rdisp[k] = a->rdispls_w[k];
        } else {
            rcounts[k] = a->recvcounts[k];
            rdisp[k] = (MPI_Aint)a->rdispls[k] * rextent;
        }
        rtypes[k] = kind == NB_ALLTOALLW ? a->recvtypes[k] : a->recvtype;
    }
    tdm_virt_request *req = NULL;
    int err =
        tdm_virt_neighbor(self, comm, call, n_in, nb, n_out, nb + n_in, comm->cart, a->sendbuf,
                          scounts, sdisp, stypes, a->recvbuf, rcounts, rdisp, rtypes, OUT(request));
    free(nb);
    free(counts);
    free(disp);
    free(types);
    return collective(self, comm, err, req, request, call);
}

/* ------------------------------------------ distributed graph topologies */

/* Make the distributed graph on 'parent' (this rank's in- and out-neighbours
   given, malloc'ed, taken over): a new communicator of the same ranks. */
static int make_dist_graph(tdm_virt_rank *self, int parent_slot, int rank, int *edges, int indegree,
                           int outdegree, MPI_Comm *newcomm, const char *call)
{
    int err = split(self, parent_slot, 0, rank, newcomm, call);
    if (err != MPI_SUCCESS) {
        free(edges);
        return err;
    }
    tdm_virt_comm *made = comm_of(self, *newcomm, NULL);
    made->dist_graph = 1;
    made->indegree = indegree;
    made->outdegree = outdegree;
    made->edges = edges;
    return MPI_SUCCESS;
}

int TMPI_Dist_graph_create_adjacent(MPI_Comm handle, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    GET_COMM("MPI_Dist_graph_create_adjacent", handle);
    (void)sourceweights; /* weights are hints: accepted, not used */
    (void)destweights;
    (void)info;
    (void)reorder;
    int size = comm->size, errors_return = comm->errors_return;
    if (indegree < 0 || outdegree < 0)
        return fail(self, errors_return, MPI_ERR_ARG,
                    "MPI_Dist_graph_create_adjacent (a negative degree)");
    for (int k = 0; k < indegree + outdegree; k++) {
        int r = k < indegree ? sources[k] : destinations[k - indegree];
        if (r < 0 || r >= size)
            return fail(self, errors_return, MPI_ERR_RANK,
                        "MPI_Dist_graph_create_adjacent (a neighbour outside the communicator)");
    }
    int *edges = malloc(sizeof *edges * (size_t)(indegree + outdegree + 1));
    if (!edges)
        return fail(self, errors_return, MPI_ERR_NO_MEM, "MPI_Dist_graph_create_adjacent");
    for (int k = 0; k < indegree + outdegree; k++)
        edges[k] = k < indegree ? sources[k] : destinations[k - indegree];
    return make_dist_graph(self, slot_, comm->rank, edges, indegree, outdegree, comm_dist_graph,
                           "MPI_Dist_graph_create_adjacent");
}

int TMPI_Dist_graph_neighbors_count(MPI_Comm handle, int *indegree, int *outdegree, int *weighted)
{
    GET_COMM("MPI_Dist_graph_neighbors_count", handle);
    if (!comm->dist_graph || comm->graph)
        return fail(self, comm->errors_return, MPI_ERR_TOPOLOGY, "MPI_Dist_graph_neighbors_count");
    *indegree = comm->indegree;
    *outdegree = comm->outdegree;
    *weighted = 0;
    return MPI_SUCCESS;
}

int TMPI_Dist_graph_neighbors(MPI_Comm handle, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[])
{
    GET_COMM("MPI_Dist_graph_neighbors", handle);
    if (!comm->dist_graph || comm->graph)
        return fail(self, comm->errors_return, MPI_ERR_TOPOLOGY, "MPI_Dist_graph_neighbors");
    (void)sourceweights; /* unweighted: MPI leaves them untouched */
    (void)destweights;
    for (int k = 0; k < comm->indegree && k < maxindegree; k++)
        sources[k] = comm->edges[k];
    for (int k = 0; k < comm->outdegree && k < maxoutdegree; k++)
        destinations[k] = comm->edges[comm->indegree + k];
    return MPI_SUCCESS;
}

/* The general form. Each edge a rank names goes to both of its ends (one
   alltoall of counts, one alltoallv of the edges), so that each rank learns
   its sources and destinations: in the order of the ranks that named them,
   then of their lists. */
int TMPI_Dist_graph_create(MPI_Comm handle, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *comm_dist_graph)
{
    static const char call[] = "MPI_Dist_graph_create";
    GET_COMM(call, handle);
    (void)weights; /* hints: accepted, not used */
    (void)info;
    (void)reorder;
    int size = comm->size, errors_return = comm->errors_return;
    if (n < 0)
        return fail(self, errors_return, MPI_ERR_ARG, "MPI_Dist_graph_create (n below 0)");
    long total = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return fail(self, errors_return, MPI_ERR_ARG,
                        "MPI_Dist_graph_create (a negative degree)");
        if (sources[i] < 0 || sources[i] >= size)
            return fail(self, errors_return, MPI_ERR_RANK,
                        "MPI_Dist_graph_create (a source outside the communicator)");
        for (int j = 0; j < degrees[i]; j++)
            if (destinations[total + j] < 0 || destinations[total + j] >= size)
                return fail(self, errors_return, MPI_ERR_RANK,
                            "MPI_Dist_graph_create (a destination outside the communicator)");
        total += degrees[i];
        if (total > INT_MAX / 4)
            return fail(self, errors_return, MPI_ERR_ARG, "MPI_Dist_graph_create (too many edges)");
    }
    /* To each rank: pairs (1, source) for an edge into it, (0, destination)
       for an edge out of it, in the order given. */
    int *counts = calloc(4 * (size_t)size + 1, sizeof *counts);
    int *pairs = malloc(sizeof *pairs * (size_t)(4 * total + 1));
    if (!counts || !pairs) {
        free(counts);
        free(pairs);
        return fail(self, errors_return, MPI_ERR_NO_MEM, call);
    }
    int *scounts = counts, *sdispls = counts + size, *rcounts = counts + 2 * size,
        *rdispls = counts + 3 * size;
    long e = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            scounts[sources[i]] += 2;
            scounts[destinations[e]] += 2;
        }
    for (int r = 1; r < size; r++)
        sdispls[r] = sdispls[r - 1] + scounts[r - 1];
    int *fill = rcounts; /* the next free place per rank, while filling */
    for (int r = 0; r < size; r++)
        fill[r] = sdispls[r];
    e = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            int s = sources[i], d = destinations[e];
            pairs[fill[s]++] = 0;
            pairs[fill[s]++] = d;
            pairs[fill[d]++] = 1;
            pairs[fill[d]++] = s;
        }
    int err = tdm_virt_alltoall(self, comm, scounts, 1, MPI_INT, rcounts, 1, MPI_INT, NULL);
    long received = 0;
    for (int r = 0; err == MPI_SUCCESS && r < size; r++) {
        rdispls[r] = (int)received;
        received += rcounts[r];
    }
    int *got = err == MPI_SUCCESS ? malloc(sizeof *got * (size_t)(received + 1)) : NULL;
    if (err == MPI_SUCCESS && !got)
        err = MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS)
        err = tdm_virt_alltoallv(self, comm, pairs, scounts, sdispls, MPI_INT, got, rcounts,
                                 rdispls, MPI_INT, NULL);
    free(counts);
    free(pairs);
    int *edges = err == MPI_SUCCESS ? malloc(sizeof *edges * (size_t)(received / 2 + 1)) : NULL;
    if (err == MPI_SUCCESS && !edges)
        err = MPI_ERR_NO_MEM;
    if (err != MPI_SUCCESS) {
        free(got);
        return fail(self, errors_return, err, call);
    }
    int indegree = 0;
    for (long k = 0; k < received; k += 2)
        indegree += got[k];
    int in = 0, out = indegree;
    for (long k = 0; k < received; k += 2)
        edges[got[k] ? in++ : out++] = got[k + 1];
    int outdegree = out - indegree;
    free(got);
    return make_dist_graph(self, slot_, comm->rank, edges, indegree, outdegree, comm_dist_graph,
                           call);
}

/* ------------------------------------------------------ graph topologies */

int TMPI_Graph_create(MPI_Comm handle, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm *comm_graph)
{
    static const char call[] = "MPI_Graph_create";
    GET_COMM(call, handle);
    (void)reorder; /* the ranks keep their order: MPI allows it */
    int errors_return = comm->errors_return;
    if (nnodes < 0 || nnodes > comm->size)
        return fail(self, errors_return, MPI_ERR_ARG,
                    "MPI_Graph_create (nnodes below 0 or above the communicator's size)");
    for (int r = 0; r < nnodes; r++)
        if (index[r] < (r ? index[r - 1] : 0))
            return fail(self, errors_return, MPI_ERR_ARG,
                        "MPI_Graph_create (index must not decrease)");
    int nedges = nnodes ? index[nnodes - 1] : 0;
    for (int k = 0; k < nedges; k++)
        if (edges[k] < 0 || edges[k] >= nnodes)
            return fail(self, errors_return, MPI_ERR_ARG,
                        "MPI_Graph_create (an edge to a node outside 0..nnodes-1)");
    int me = comm->rank, member = me < nnodes;
    int first = member && me ? index[me - 1] : 0, degree = member ? index[me] - first : 0;
    int *graph = malloc(sizeof *graph * (size_t)(nnodes + nedges + 1));
    int *mine = malloc(sizeof *mine * (size_t)(2 * degree + 1));
    if (!graph || !mine) {
        free(graph);
        free(mine);
        return fail(self, errors_return, MPI_ERR_NO_MEM, call);
    }
    for (int k = 0; k < nnodes; k++)
        graph[k] = index[k];
    for (int k = 0; k < nedges; k++)
        graph[nnodes + k] = edges[k];
    for (int k = 0; k < degree; k++)
        mine[k] = mine[degree + k] = edges[first + k];
    int err = split(self, slot_, member ? 0 : MPI_UNDEFINED, me, comm_graph, call);
    if (err != MPI_SUCCESS || *comm_graph == MPI_COMM_NULL) {
        free(graph);
        free(mine);
        return err;
    }
    tdm_virt_comm *made = comm_of(self, *comm_graph, NULL);
    made->dist_graph = made->graph = 1;
    made->indegree = made->outdegree = degree;
    made->edges = mine;
    made->ndims = nnodes;
    made->topo = graph;
    return MPI_SUCCESS;
}

#define GET_GRAPH(call, handle)                                         \
    GET_COMM(call, handle);                                             \
    if (!comm->graph)                                                   \
        return fail(self, comm->errors_return, MPI_ERR_TOPOLOGY, call); \
    int nnodes_ = comm->ndims, *index_ = comm->topo, *edges_ = comm->topo + nnodes_

int TMPI_Graphdims_get(MPI_Comm handle, int *nnodes, int *nedges)
{
    GET_GRAPH("MPI_Graphdims_get", handle);
    (void)edges_;
    *nnodes = nnodes_;
    *nedges = nnodes_ ? index_[nnodes_ - 1] : 0;
    return MPI_SUCCESS;
}

int TMPI_Graph_get(MPI_Comm handle, int maxindex, int maxedges, int index[], int edges[])
{
    GET_GRAPH("MPI_Graph_get", handle);
    int nedges = nnodes_ ? index_[nnodes_ - 1] : 0;
    for (int k = 0; k < nnodes_ && k < maxindex; k++)
        index[k] = index_[k];
    for (int k = 0; k < nedges && k < maxedges; k++)
        edges[k] = edges_[k];
    return MPI_SUCCESS;
}

int TMPI_Graph_neighbors_count(MPI_Comm handle, int rank, int *nneighbors)
{
    GET_GRAPH("MPI_Graph_neighbors_count", handle);
    (void)edges_;
    if (rank < 0 || rank >= nnodes_)
        return fail(self, comm->errors_return, MPI_ERR_RANK, "MPI_Graph_neighbors_count");
    *nneighbors = index_[rank] - (rank ? index_[rank - 1] : 0);
    return MPI_SUCCESS;
}

int TMPI_Graph_neighbors(MPI_Comm handle, int rank, int maxneighbors, int neighbors[])
{
    GET_GRAPH("MPI_Graph_neighbors", handle);
    if (rank < 0 || rank >= nnodes_)
        return fail(self, comm->errors_return, MPI_ERR_RANK, "MPI_Graph_neighbors");
    int first = rank ? index_[rank - 1] : 0;
    for (int k = 0; k < index_[rank] - first && k < maxneighbors; k++)
        neighbors[k] = edges_[first + k];
    return MPI_SUCCESS;
}

int TMPI_Graph_map(MPI_Comm handle, int nnodes, const int index[], const int edges[], int *newrank)
{
    GET_COMM("MPI_Graph_map", handle);
    (void)index;
    (void)edges;
    if (nnodes < 1 || nnodes > comm->size)
        return fail(self, comm->errors_return, MPI_ERR_ARG,
                    "MPI_Graph_map (nnodes below 1 or above the communicator's size)");
    *newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int TMPI_Cart_map(MPI_Comm handle, int ndims, const int dims[], const int periods[], int *newrank)
{
    GET_COMM("MPI_Cart_map", handle);
    (void)periods;
    long cells = 1;
    for (int d = 0; d < ndims && cells <= comm->size; d++) {
        if (dims[d] <= 0)
            return fail(self, comm->errors_return, MPI_ERR_DIMS,
                        "MPI_Cart_map (a dimension of 0 or fewer ranks)");
        cells *= dims[d];
    }
    if (ndims < 0 || cells > comm->size)
        return fail(self, comm->errors_return, MPI_ERR_DIMS,
                    "MPI_Cart_map (more ranks in the grid than in the communicator, or ndims "
                    "below 0)");
    *newrank = comm->rank < cells ? comm->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int TMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    nb_args a = {.sendbuf = sendbuf,
                 .sendcount = sendcount,
                 .sendtype = sendtype,
                 .recvbuf = recvbuf,
                 .recvcount = recvcount,
                 .recvtype = recvtype};
    return neighbor("MPI_Neighbor_allgather", NB_ALLGATHER, &a, comm, NULL);
}

int TMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    nb_args a = {.sendbuf = sendbuf,
                 .sendcount = sendcount,
                 .sendtype = sendtype,
                 .recvbuf = recvbuf,
                 .recvcount = recvcount,
                 .recvtype = recvtype};
    return neighbor("MPI_Ineighbor_allgather", NB_ALLGATHER, &a, comm, request);
}

int TMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    nb_args a = {.sendbuf = sendbuf,
                 .sendcount = sendcount,
                 .sendtype = sendtype,
                 .recvbuf = recvbuf,
                 .recvcounts = recvcounts,
                 .rdispls = displs,
                 .recvtype = recvtype};
    return neighbor("MPI_Neighbor_allgatherv", NB_ALLGATHERV, &a, comm, NULL);
}

int TMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    nb_args a = {.sendbuf = sendbuf,
                 .sendcount = sendcount,
                 .sendtype = sendtype,
                 .recvbuf = recvbuf,
                 .recvcounts = recvcounts,
                 .rdispls = displs,
                 .recvtype = recvtype};
    return neighbor("MPI_Ineighbor_allgatherv", NB_ALLGATHERV, &a, comm, request);
}

int TMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    nb_args a = {.sendbuf = sendbuf,
                 .sendcount = sendcount,
                 .sendtype = sendtype,
                 .recvbuf = recvbuf,
                 .recvcount = recvcount,
                 .recvtype = recvtype};
    return neighbor("MPI_Neighbor_alltoall", NB_ALLTOALL, &a, comm, NULL);
}

int TMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    nb_args a = {.sendbuf = sendbuf,
                 .sendcount = sendcount,
                 .sendtype = sendtype,
                 .recvbuf = recvbuf,
                 .recvcount = recvcount,
                 .recvtype = recvtype};
    return neighbor("MPI_Ineighbor_alltoall", NB_ALLTOALL, &a, comm, request);
}

int TMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    nb_args a = {.sendbuf = sendbuf,
                 .sendcounts = sendcounts,
                 .sdispls = sdispls,
                 .sendtype = sendtype,
                 .recvbuf = recvbuf,
                 .recvcounts = recvcounts,
                 .rdispls = rdispls,
                 .recvtype = recvtype};
    return neighbor("MPI_Neighbor_alltoallv", NB_ALLTOALLV, &a, comm, NULL);
}

int TMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    nb_args a = {.sendbuf = sendbuf,
                 .sendcounts = sendcounts,
                 .sdispls = sdispls,
                 .sendtype = sendtype,
                 .recvbuf = recvbuf,
                 .recvcounts = recvcounts,
                 .rdispls = rdispls,
                 .recvtype = recvtype};
    return neighbor("MPI_Ineighbor_alltoallv", NB_ALLTOALLV, &a, comm, request);
}

int TMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    nb_args a = {.sendbuf = sendbuf,
                 .sendcounts = sendcounts,
                 .sdispls_w = sdispls,
                 .sendtypes = sendtypes,
                 .recvbuf = recvbuf,
                 .recvcounts = recvcounts,
                 .rdispls_w = rdispls,
                 .recvtypes = recvtypes};
    return neighbor("MPI_Neighbor_alltoallw", NB_ALLTOALLW, &a, comm, NULL);
}

int TMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                             MPI_Comm comm, MPI_Request *request)
{
    nb_args a = {.sendbuf = sendbuf,
                 .sendcounts = sendcounts,
                 .sdispls_w = sdispls,
                 .sendtypes = sendtypes,
                 .recvbuf = recvbuf,
                 .recvcounts = recvcounts,
                 .rdispls_w = rdispls,
                 .recvtypes = recvtypes};
    return neighbor("MPI_Ineighbor_alltoallw", NB_ALLTOALLW, &a, comm, request);
}
