/*
 * Tandem's collective algorithms (algorithms.c): each call fills 's', a new
 * schedule of the collective's communicator (tdm_schedule_new), with the
 * rounds of this rank and returns it, not started, or NULL without memory
 * ('s' NULL included; the schedule is then discarded). The other arguments
 * are those of the MPI call, already checked, and neutral where they are not
 * significant at this rank (hooks.c); 'alg' is the algorithm chosen
 * (select.h).
 */
#ifndef TDM_COLL_ALGORITHMS_H
#define TDM_COLL_ALGORITHMS_H

#include <mpi.h>

#include "coll/schedule.h"
#include "coll/select.h"

/* A block of a buffer: 'count' elements at 'offset' bytes. */
typedef struct {
    MPI_Count count;
    MPI_Aint offset;
} tdm_span;

/* What goes to (comes from) one rank in an all-to-all. */
typedef struct {
    void *buf;
    MPI_Count count;
    MPI_Datatype type;
} tdm_part;

tdm_schedule *tdm_coll_barrier(tdm_schedule *s);
tdm_schedule *tdm_coll_bcast(tdm_schedule *s, void *buffer, MPI_Count count, MPI_Datatype type,
                             int root, tdm_coll_alg alg);
tdm_schedule *tdm_coll_scatter(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                               MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                               MPI_Datatype recvtype, int root, tdm_coll_alg alg);
tdm_schedule *tdm_coll_scatterv(tdm_schedule *s, const void *sendbuf, const int sendcounts[],
                                const int displs[], MPI_Datatype sendtype, void *recvbuf,
                                MPI_Count recvcount, MPI_Datatype recvtype, int root);
tdm_schedule *tdm_coll_gather(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                              MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                              MPI_Datatype recvtype, int root, tdm_coll_alg alg);
tdm_schedule *tdm_coll_gatherv(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int displs[], MPI_Datatype recvtype, int root);
tdm_schedule *tdm_coll_allgather(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                                 MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                 MPI_Datatype recvtype, tdm_coll_alg alg);
tdm_schedule *tdm_coll_allgatherv(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                  const int displs[], MPI_Datatype recvtype, tdm_coll_alg alg);
tdm_schedule *tdm_coll_alltoall(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                                MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                MPI_Datatype recvtype, tdm_coll_alg alg);
/* The v form (one type each side, displacements in elements) and, with
   'w_form', the w form (a type per rank, displacements in bytes). */
tdm_schedule *tdm_coll_alltoallw(tdm_schedule *s, const void *sendbuf, const int sendcounts[],
                                 const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                                 const int recvcounts[], const int rdispls[],
                                 const MPI_Datatype recvtypes[], int w_form, tdm_coll_alg alg);
/* A non-commutative operation ('commutative' 0) is applied in rank order:
   on the shared-memory path, or by a rank-order tree (reduce), recursive
   doubling (allreduce, whatever 'alg' says) or that tree and a scatter
   (reduce_scatter). */
tdm_schedule *tdm_coll_reduce(tdm_schedule *s, const void *sendbuf, void *recvbuf, MPI_Count count,
                              MPI_Datatype type, MPI_Op op, int commutative, int root);
/* 'allgather_alg': the allgather half of reduce_scatter_allgather. */
tdm_schedule *tdm_coll_allreduce(tdm_schedule *s, const void *sendbuf, void *recvbuf,
                                 MPI_Count count, MPI_Datatype type, MPI_Op op, int commutative,
                                 tdm_coll_alg alg, tdm_coll_alg allgather_alg);
/* recvcounts, or (NULL) 'recvcount' for every rank: the _block form. */
tdm_schedule *tdm_coll_reduce_scatter(tdm_schedule *s, const void *sendbuf, void *recvbuf,
                                      const int recvcounts[], MPI_Count recvcount,
                                      MPI_Datatype type, MPI_Op op, int commutative,
                                      tdm_coll_alg alg);
tdm_schedule *tdm_coll_scan(tdm_schedule *s, const void *sendbuf, void *recvbuf, MPI_Count count,
                            MPI_Datatype type, MPI_Op op, int exclusive);

#endif
