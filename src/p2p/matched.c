/*
 * Matched probes and their blocking receive: MPI_Mprobe and MPI_Improbe
 * return a message handle, MPI_Mrecv receives it (MPI_Imrecv is with the
 * other nonblocking starts, in nonblocking.c). They matter to monitoring
 * only: a message does not tell its communicator, which the receive needs
 * to name its source in MPI_COMM_WORLD, so the probe remembers it, keyed by
 * the handle, until the receive takes it back. mpi4py receives every
 * pickled object this way. Application threads.
 */
#include <mpi.h>

#include "monitor/monitor.h"
#include "wrappers/gen_hooks.h"

int tdm_hook_Mprobe(int lang, int source, int tag, MPI_Comm comm, MPI_Message *message,
                    MPI_Status *status)
{
    (void)lang;
    int rc = PMPI_Mprobe(source, tag, comm, message, status);
    if (rc == MPI_SUCCESS && tdm_monitor_on())
        tdm_monitor_matched(*message, comm);
    return rc;
}

int tdm_hook_Improbe(int lang, int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                     MPI_Status *status)
{
    (void)lang;
    int rc = PMPI_Improbe(source, tag, comm, flag, message, status);
    if (rc == MPI_SUCCESS && *flag && tdm_monitor_on())
        tdm_monitor_matched(*message, comm);
    return rc;
}

/* The size and source come from the status, as for MPI_Recv: a status is
   needed even when the application ignores it. */
#define MRECV_HOOK(COUNT, suffix)                                                       \
    int tdm_hook_Mrecv##suffix(int lang, void *buf, COUNT count, MPI_Datatype datatype, \
                               MPI_Message *message, MPI_Status *status)                \
    {                                                                                   \
        (void)lang;                                                                     \
        MPI_Comm comm;                                                                  \
        if (!tdm_monitor_take_message(*message, &comm) || !tdm_monitor_on())            \
            return PMPI_Mrecv##suffix(buf, count, datatype, message, status);           \
        MPI_Status own;                                                                 \
        MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;                   \
        int rc = PMPI_Mrecv##suffix(buf, count, datatype, message, st);                 \
        if (rc == MPI_SUCCESS)                                                          \
            tdm_monitor_received(st, comm);                                             \
        return rc;                                                                      \
    }

MRECV_HOOK(int, )
#if MPI_VERSION >= 4
MRECV_HOOK(MPI_Count, _c)
#endif
