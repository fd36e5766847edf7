/*
 * Tandem: background progress for the nonblocking calls of unmodified MPI programs.
 *
 * The library works without any change to the program (it intercepts MPI through
 * the profiling interface). This header is the optional public API for programs
 * that want to ask Tandem about itself.
 */
#ifndef TANDEM_H
#define TANDEM_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TANDEM_VERSION_MAJOR 0
#define TANDEM_VERSION_MINOR 1
#define TANDEM_VERSION_PATCH 0

/* The version of the loaded library, "MAJOR.MINOR.PATCH". Callable at any time. */
const char *tandem_version(void);

/* The MPI implementation this build of Tandem was compiled against,
   "Open MPI" or "MPICH" (or "MPI" for another one). Callable at any time. */
const char *tandem_mpi_family(void);

/* 1 when Tandem is active: MPI is initialised, TANDEM_DISABLE is not set and the
   MPI library granted MPI_THREAD_MULTIPLE. 0 before MPI_Init, after
   MPI_Finalize, and in pass-through mode. */
int tandem_active(void);

/* ------------------------------------------------------------ monitoring
   Who sends how much to whom, by kind of traffic. Counters are kept per peer
   (its rank in MPI_COMM_WORLD, whatever communicator was used): the number of
   messages, the bytes, and a histogram of message sizes with
   TANDEM_MONITOR_BINS bins (bin 0 for empty messages, else 64 - clz(size),
   i.e. bin k holds sizes in [2^(k-1), 2^k)).

   TANDEM_MONITOR=1 records the whole run and writes the files at MPI_Finalize.
   The functions below measure a phase of the program whether or not it is set:
   start, stop and reset act on the program's own view of the counters only
   (they never change the whole-run record or an MPI_T handle). Each returns
   MPI_SUCCESS, or an MPI error class (MPI_ERR_OTHER before MPI_Init or after
   MPI_Finalize, or in pass-through mode; MPI_ERR_ARG for a bad kind). */
enum tandem_monitor_kind {
    TANDEM_MONITOR_P2P_SEND,      /* point-to-point messages sent (peer: destination) */
    TANDEM_MONITOR_P2P_RECV,      /* point-to-point messages received (peer: source) */
    TANDEM_MONITOR_COLL,          /* collectives: the logical volume per call */
    TANDEM_MONITOR_COLL_INTERNAL, /* messages of the collectives Tandem itself runs */
    TANDEM_MONITOR_OSC_PUT,       /* one-sided, origin side: bytes put (and accumulated) */
    TANDEM_MONITOR_OSC_GET,       /* one-sided, origin side: bytes got */
    TANDEM_MONITOR_IO_READ,       /* bytes read per file operation (peer: this rank) */
    TANDEM_MONITOR_IO_WRITE,      /* bytes written per file operation (peer: this rank) */
    TANDEM_MONITOR_ALL,           /* every byte between ranks once: point-to-point sends,
                                     one-sided, and each collective either as the messages
                                     of Tandem's schedule (when Tandem ran it) or as its
                                     logical volume (when the MPI library did) */
    TANDEM_MONITOR_KINDS
};
#define TANDEM_MONITOR_BINS 66

/* Start (or resume) counting for the program's view. */
int tandem_monitor_start(void);

/* Stop counting for the program's view; what was counted is kept. */
int tandem_monitor_stop(void);

/* Forget what the program's view counted (it keeps running if it was). */
int tandem_monitor_reset(void);

/* Copy the program's view of one kind. Each array may be NULL; otherwise
   'messages' and 'bytes' hold one entry per rank of MPI_COMM_WORLD and
   'histogram' TANDEM_MONITOR_BINS entries per rank (peer-major). */
int tandem_monitor_read(int kind, unsigned long long *messages, unsigned long long *bytes,
                        unsigned long long *histogram);

/* ------------------------------------------------------------ placement
   A communicator whose ranks are renumbered so that the pairs that exchanged
   the most bytes in the program's view (all kinds, as TANDEM_MONITOR_ALL:
   measure the phase with tandem_monitor_start and _stop first) sit on one
   host: each host takes the rank with the most traffic still unplaced, then
   those that exchanged the most with the ones it took, until its processes
   are all given one (docs/PLACEMENT.md). The processes stay where they are;
   the program moves its data to the new ranks. Collective over 'comm', an
   intra-communicator; '*newcomm' is a new communicator with comm's group in
   the new order (comm's order where nothing was counted). Returns
   MPI_SUCCESS, or an MPI error class (MPI_ERR_OTHER in pass-through mode,
   MPI_ERR_COMM for a null or inter-communicator). */
int tandem_place_comm(MPI_Comm comm, MPI_Comm *newcomm);

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_H */
