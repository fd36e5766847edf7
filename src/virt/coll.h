/*
 * Collectives among the virtual ranks of one process, as point-to-point
 * messages on the communicator's collective context (context + 1): linear
 * algorithms, every receive posted before the sends so that no order of
 * arrival can block. Each returns an MPI error code. On a rank.
 */
#ifndef TDM_VIRT_COLL_H
#define TDM_VIRT_COLL_H

#include <mpi.h>

#include "virt/comm.h"
#include "virt/sched.h"

int tdm_virt_barrier(tdm_virt_rank *self, const tdm_virt_comm *comm);
int tdm_virt_bcast(tdm_virt_rank *self, const tdm_virt_comm *comm, void *buf, int count,
                   MPI_Datatype type, int root);
int tdm_virt_reduce(tdm_virt_rank *self, const tdm_virt_comm *comm, const void *sendbuf,
                    void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root);
int tdm_virt_allreduce(tdm_virt_rank *self, const tdm_virt_comm *comm, const void *sendbuf,
                       void *recvbuf, int count, MPI_Datatype type, MPI_Op op);
int tdm_virt_gather(tdm_virt_rank *self, const tdm_virt_comm *comm, const void *sendbuf,
                    int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, int root);
int tdm_virt_scatter(tdm_virt_rank *self, const tdm_virt_comm *comm, const void *sendbuf,
                     int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root);
int tdm_virt_allgather(tdm_virt_rank *self, const tdm_virt_comm *comm, const void *sendbuf,
                       int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype);
int tdm_virt_alltoall(tdm_virt_rank *self, const tdm_virt_comm *comm, const void *sendbuf,
                      int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype);

/* Send to / receive from rank 'peer' of 'comm' on its collective context,
   blocking (for communicator construction). */
int tdm_virt_coll_send(tdm_virt_rank *self, const tdm_virt_comm *comm, const void *buf, int count,
                       MPI_Datatype type, int peer);
int tdm_virt_coll_recv(tdm_virt_rank *self, const tdm_virt_comm *comm, void *buf, int count,
                       MPI_Datatype type, int peer);

#endif
