/*
 * The MPI-IO offload. MPI_File_iread, MPI_File_iwrite, MPI_File_iread_at and
 * MPI_File_iwrite_at become tasks for one worker thread, which executes them
 * in posting order with the blocking explicit-offset calls (MPI_File_read_at,
 * MPI_File_write_at) and completes the application's generalized request
 * with the operation's status. The MPI libraries here do the I/O of these
 * calls inside the call itself or inside MPI_Wait, so without the worker a
 * nonblocking write hides nothing.
 *
 * The individual file pointer is read and advanced at posting time by the
 * requested amount, as ROMIO does for its own nonblocking calls, so later
 * calls see the position MPI defines. The collective (_all) and shared
 * file pointer variants stay with the MPI library: offloading them would let
 * their order relative to the application's other collective or shared-pointer
 * calls on the file change.
 *
 * A task that cannot be prepared (for instance a file opened with
 * MPI_MODE_SEQUENTIAL has no individual pointer) is passed to the MPI library
 * unchanged, which then reports the error as it would without Tandem.
 */
#include "io/offload.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/affinity.h"
#include "core/config.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/proxy.h"
#include "core/runtime.h"
#include "impl/impl.h"
#include "wrappers/gen_hooks.h"

/* The blocking calls that execute a task; MPI 4 has them with an MPI_Count. */
#if MPI_VERSION >= 4
#define FILE_WRITE_AT PMPI_File_write_at_c
#define FILE_READ_AT PMPI_File_read_at_c
#else
#define FILE_WRITE_AT(f, o, b, n, t, s) PMPI_File_write_at(f, o, b, (int)(n), t, s)
#define FILE_READ_AT(f, o, b, n, t, s) PMPI_File_read_at(f, o, b, (int)(n), t, s)
#endif

typedef struct io_task {
    tdm_proxy base; /* first: the task is its proxy */
    MPI_File file;
    MPI_Offset offset;
    void *buf;
    MPI_Count count;
    MPI_Datatype datatype;
    int owns_datatype; /* a duplicate of a derived datatype, freed with the task */
    int write;
    struct io_task *next;
} io_task;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    io_task *head, *tail;
    pthread_t thread;
    int started;
    int stop;
} worker = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static atomic_long offloaded; /* operations handed to the worker so far */

long tdm_io_offloaded(void)
{
    return atomic_load(&offloaded);
}

static int offloading(void)
{
    return tdm_progress_strategy != TDM_PROGRESS_OFF && TDM_CONFIG_NUMBER(IO_OFFLOAD);
}

static int is_derived(MPI_Datatype datatype)
{
    int integers, addresses, datatypes, combiner = MPI_COMBINER_NAMED;
    PMPI_Type_get_envelope(datatype, &integers, &addresses, &datatypes, &combiner);
    return combiner != MPI_COMBINER_NAMED;
}

static void release_task(tdm_proxy *proxy)
{
    io_task *task = (io_task *)proxy;
    if (task->owns_datatype)
        PMPI_Type_free(&task->datatype);
}

static void run(io_task *task)
{
    MPI_Status status;
    tdm_status_empty(&status); /* what a failed operation reports */
    int rc = task->write ? FILE_WRITE_AT(task->file, task->offset, task->buf, task->count,
                                         task->datatype, &status)
                         : FILE_READ_AT(task->file, task->offset, task->buf, task->count,
                                        task->datatype, &status);
    tdm_proxy_finish(&task->base, &status, rc);
}

static void *worker_main(void *unused)
{
    (void)unused;
    /* Beside the progress thread: on its spare CPU when it has one, else
       where the application's thread may run. */
    if (tdm_progress_cpu() >= 0)
        tdm_affinity_pin(pthread_self(), tdm_progress_cpu());
    pthread_mutex_lock(&worker.lock);
    for (;;) {
        while (!worker.head && !worker.stop)
            pthread_cond_wait(&worker.wake, &worker.lock);
        io_task *task = worker.head;
        if (!task) /* stopping, and nothing left */
            break;
        worker.head = task->next;
        if (!worker.head)
            worker.tail = NULL;
        pthread_mutex_unlock(&worker.lock);
        run(task);
        pthread_mutex_lock(&worker.lock);
    }
    pthread_mutex_unlock(&worker.lock);
    return NULL;
}

/* Queue a task, starting the worker on first use. Returns 0, or -1 when the
   worker cannot start. */
static int enqueue(io_task *task)
{
    int rc = 0;
    pthread_mutex_lock(&worker.lock);
    if (!worker.started) {
        worker.stop = 0;
        if (pthread_create(&worker.thread, NULL, worker_main, NULL) == 0)
            worker.started = 1;
        else
            rc = -1;
    }
    if (rc == 0) {
        task->next = NULL;
        if (worker.tail)
            worker.tail->next = task;
        else
            worker.head = task;
        worker.tail = task;
        pthread_cond_signal(&worker.wake);
    }
    pthread_mutex_unlock(&worker.lock);
    return rc;
}

void tdm_io_stop(void)
{
    pthread_mutex_lock(&worker.lock);
    int started = worker.started;
    worker.stop = 1;
    pthread_cond_signal(&worker.wake);
    pthread_mutex_unlock(&worker.lock);
    if (started)
        pthread_join(worker.thread, NULL);
    worker.started = 0;
}

/* The offset of an individual-pointer operation of 'count' x 'datatype': the
   current position, which then advances past the data. */
static int take_position(MPI_File file, MPI_Count count, MPI_Datatype datatype, MPI_Offset *offset)
{
    MPI_Offset displacement;
    MPI_Datatype etype, filetype;
    char datarep[MPI_MAX_DATAREP_STRING];
    int rc, type_size, etype_size = 1;
    TDM_CALL_MPI(rc, PMPI_File_get_position(file, offset));
    TDM_CALL_MPI(rc, tdm_impl_type_size(datatype, &type_size));
    TDM_CALL_MPI(rc, PMPI_File_get_view(file, &displacement, &etype, &filetype, datarep));
    rc = tdm_impl_type_size(etype, &etype_size);
    if (is_derived(etype))
        PMPI_Type_free(&etype);
    if (is_derived(filetype))
        PMPI_Type_free(&filetype);
    if (rc != MPI_SUCCESS || etype_size <= 0)
        goto fn_exit;
    TDM_CALL_MPI(rc,
                 PMPI_File_seek(file, (MPI_Offset)count * type_size / etype_size, MPI_SEEK_CUR));
fn_exit:
    return rc;
}

/* Offload one operation; 'individual' takes the offset from the individual
   file pointer. Returns MPI_SUCCESS with *request set, or -1 when the
   operation must go to the MPI library instead. */
static int offload(MPI_File file, int individual, MPI_Offset offset, void *buf, MPI_Count count,
                   MPI_Datatype datatype, int write, MPI_Request *request)
{
    if (!offloading() || count < 0)
        return -1;
    if (individual && take_position(file, count, datatype, &offset) != MPI_SUCCESS)
        return -1;
    io_task *task = (io_task *)tdm_proxy_new(sizeof *task);
    if (!task)
        return -1;
    task->file = file;
    task->offset = offset;
    task->buf = buf;
    task->count = count;
    task->datatype = datatype;
    task->write = write;
    task->base.release = release_task;
    /* The application may free its datatype as soon as the call returns. */
    if (is_derived(datatype) && PMPI_Type_dup(datatype, &task->datatype) == MPI_SUCCESS)
        task->owns_datatype = 1;
    MPI_Request greq;
    if (tdm_proxy_start(&task->base, &greq) != MPI_SUCCESS)
        return -1;
    if (enqueue(task) != 0) { /* done here, then: correct, only not overlapped */
        tdm_log_warn("cannot start the MPI-IO worker thread; MPI_File_i* calls complete "
                     "before they return");
        run(task);
    }
    atomic_fetch_add_explicit(&offloaded, 1, memory_order_relaxed);
    *request = greq;
    return MPI_SUCCESS;
}

/* The four offloaded calls, in their int and (MPI 4) MPI_Count forms. */
#define TDM_IO_HOOKS(COUNT, suffix)                                                                \
    int tdm_hook_File_iread##suffix(int lang, MPI_File fh, void *buf, COUNT count,                 \
                                    MPI_Datatype datatype, MPI_Request *request)                   \
    {                                                                                              \
        (void)lang;                                                                                \
        if (offload(fh, 1, 0, buf, count, datatype, 0, request) == MPI_SUCCESS)                    \
            return MPI_SUCCESS;                                                                    \
        return PMPI_File_iread##suffix(fh, buf, count, datatype, request);                         \
    }                                                                                              \
    int tdm_hook_File_iwrite##suffix(int lang, MPI_File fh, const void *buf, COUNT count,          \
                                     MPI_Datatype datatype, MPI_Request *request)                  \
    {                                                                                              \
        (void)lang;                                                                                \
        if (offload(fh, 1, 0, (void *)buf, count, datatype, 1, request) == MPI_SUCCESS)            \
            return MPI_SUCCESS;                                                                    \
        return PMPI_File_iwrite##suffix(fh, buf, count, datatype, request);                        \
    }                                                                                              \
    int tdm_hook_File_iread_at##suffix(int lang, MPI_File fh, MPI_Offset offset, void *buf,        \
                                       COUNT count, MPI_Datatype datatype, MPI_Request *request)   \
    {                                                                                              \
        (void)lang;                                                                                \
        if (offload(fh, 0, offset, buf, count, datatype, 0, request) == MPI_SUCCESS)               \
            return MPI_SUCCESS;                                                                    \
        return PMPI_File_iread_at##suffix(fh, offset, buf, count, datatype, request);              \
    }                                                                                              \
    int tdm_hook_File_iwrite_at##suffix(int lang, MPI_File fh, MPI_Offset offset, const void *buf, \
                                        COUNT count, MPI_Datatype datatype, MPI_Request *request)  \
    {                                                                                              \
        (void)lang;                                                                                \
        if (offload(fh, 0, offset, (void *)buf, count, datatype, 1, request) == MPI_SUCCESS)       \
            return MPI_SUCCESS;                                                                    \
        return PMPI_File_iwrite_at##suffix(fh, offset, buf, count, datatype, request);             \
    }

TDM_IO_HOOKS(int, )
#if MPI_VERSION >= 4
TDM_IO_HOOKS(MPI_Count, _c)
#endif
