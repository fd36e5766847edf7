/*
 * Collectives among the virtual ranks, as point-to-point messages on the
 * communicator's collective context (context + 1), each collective's with a
 * tag of its own (the communicator's count of collectives so far): binomial
 * trees for the barrier, broadcast, reductions, gather, scatter, allgather
 * and allgatherv, linear algorithms for the others, built as schedules of rounds
 * (virt/coll.c). Each function returns an MPI error code. With 'out' NULL it
 * is the blocking collective; otherwise the nonblocking one, started, its
 * request (kind TDM_VIRT_COLL) in *out, moved on by tdm_virt_coll_progress.
 * On a rank.
 */
#ifndef TDM_VIRT_COLL_H
#define TDM_VIRT_COLL_H

#include <mpi.h>

#include "virt/comm.h"
#include "virt/queue.h"
#include "virt/sched.h"

int tdm_virt_barrier(tdm_virt_rank *self, tdm_virt_comm *comm, tdm_virt_request **out);
int tdm_virt_bcast(tdm_virt_rank *self, tdm_virt_comm *comm, void *buf, int count,
                   MPI_Datatype type, int root, tdm_virt_request **out);
int tdm_virt_reduce(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf, void *recvbuf,
                    int count, MPI_Datatype type, MPI_Op op, int root, tdm_virt_request **out);
int tdm_virt_allreduce(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf, void *recvbuf,
                       int count, MPI_Datatype type, MPI_Op op, tdm_virt_request **out);
/* Gather and scatter ('call': which one, for errors and the deadlock
   report): with recvcounts (sendcounts) NULL, recvcount (sendcount) items
   per rank; otherwise the v forms' counts and displacements. */
int tdm_virt_gatherv(tdm_virt_rank *self, tdm_virt_comm *comm, const char *call,
                     const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int *recvcounts, const int *displs, int recvcount, MPI_Datatype recvtype,
                     int root, tdm_virt_request **out);
int tdm_virt_scatterv(tdm_virt_rank *self, tdm_virt_comm *comm, const char *call,
                      const void *sendbuf, const int *sendcounts, const int *displs, int sendcount,
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, tdm_virt_request **out);
int tdm_virt_allgather(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       tdm_virt_request **out);
int tdm_virt_alltoall(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf, int sendcount,
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      tdm_virt_request **out);

/* The v forms of allgather and alltoall, the scans ('exclusive': MPI_Exscan)
   and reduce-scatter (recvcounts NULL: the block form, recvcount each). */
int tdm_virt_allgatherv(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf,
                        int sendcount, MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                        const int *displs, MPI_Datatype recvtype, tdm_virt_request **out);
int tdm_virt_alltoallv(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf,
                       const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                       void *recvbuf, const int *recvcounts, const int *rdispls,
                       MPI_Datatype recvtype, tdm_virt_request **out);
/* Alltoallw: a count, a displacement in bytes and a datatype per rank,
   each side. */
int tdm_virt_alltoallw(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf,
                       const int *sendcounts, const int *sdispls, const MPI_Datatype *sendtypes,
                       void *recvbuf, const int *recvcounts, const int *rdispls,
                       const MPI_Datatype *recvtypes, tdm_virt_request **out);
int tdm_virt_scan(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf, void *recvbuf,
                  int count, MPI_Datatype type, MPI_Op op, int exclusive, tdm_virt_request **out);
int tdm_virt_reduce_scatter(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf,
                            void *recvbuf, const int *recvcounts, int recvcount, MPI_Datatype type,
                            MPI_Op op, tdm_virt_request **out);

/* Move the rank's nonblocking collectives on as far as they go without
   waiting ('move'; returns nonzero if one completed), or only tell whether
   one can go on now (!'move'). Registered with virt/queue, whose waits call
   it. */
int tdm_virt_coll_progress(tdm_virt_rank *self, int move);

/* A neighbourhood collective from 'n_in' in-neighbours 'sources' and to
   'n_out' out-neighbours 'dests' (MPI_PROC_NULL: none), each with its own
   count, byte displacement and datatype ('paired': a Cartesian topology's,
   virt/coll.c); virt/api.c reduces the MPI_Neighbor_* forms to it; 'call'
   names it. */
int tdm_virt_neighbor(tdm_virt_rank *self, tdm_virt_comm *comm, const char *call, int n_in,
                      const int *sources, int n_out, const int *dests, int paired,
                      const void *sendbuf, const int *sendcounts, const MPI_Aint *sdispls,
                      const MPI_Datatype *sendtypes, void *recvbuf, const int *recvcounts,
                      const MPI_Aint *rdispls, const MPI_Datatype *recvtypes,
                      tdm_virt_request **out);

#endif
