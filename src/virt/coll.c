/*
 * Linear collectives over the in-process queues. Nonblocking sends and
 * receives are started first and waited for together, so that rendezvous
 * sends (large messages) cannot wait on each other.
 */
#include "virt/coll.h"

#include <stdlib.h>
#include <string.h>

#include "virt/net.h"
#include "virt/queue.h"

#define COLL_TAG 0

static int start_send(tdm_virt_rank *self, const tdm_virt_comm *comm, const void *buf, int count,
                      MPI_Datatype type, int peer, tdm_virt_request **req)
{
    return tdm_virt_send(self, buf, count, type, tdm_virt_comm_world_rank(comm, peer),
                         comm->context + 1, comm->rank, COLL_TAG, 0, req);
}

static int start_recv(tdm_virt_rank *self, const tdm_virt_comm *comm, void *buf, int count,
                      MPI_Datatype type, int peer, tdm_virt_request **req)
{
    return tdm_virt_irecv(self, buf, count, type, comm->context + 1, peer, COLL_TAG, req);
}

/* Wait for and release the first n requests of reqs (NULL entries skipped);
   the first error wins. */
static int finish(tdm_virt_rank *self, tdm_virt_request **reqs, int n, const char *call)
{
    int err = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        if (!reqs[i])
            continue;
        tdm_virt_request_wait(self, reqs[i], call, TDM_VIRT_NONE, TDM_VIRT_NONE);
        if (err == MPI_SUCCESS && reqs[i]->status_error != MPI_SUCCESS)
            err = reqs[i]->status_error;
        tdm_virt_request_release(self, reqs[i]);
        reqs[i] = NULL;
    }
    return err;
}

static int send_as(const char *call, tdm_virt_rank *self, const tdm_virt_comm *comm,
                   const void *buf, int count, MPI_Datatype type, int peer)
{
    tdm_virt_request *req = NULL;
    int err = start_send(self, comm, buf, count, type, peer, &req);
    return err != MPI_SUCCESS ? err : finish(self, &req, 1, call);
}

static int recv_as(const char *call, tdm_virt_rank *self, const tdm_virt_comm *comm, void *buf,
                   int count, MPI_Datatype type, int peer)
{
    tdm_virt_request *req = NULL;
    int err = start_recv(self, comm, buf, count, type, peer, &req);
    return err != MPI_SUCCESS ? err : finish(self, &req, 1, call);
}

int tdm_virt_coll_send(tdm_virt_rank *self, const tdm_virt_comm *comm, const void *buf, int count,
                       MPI_Datatype type, int peer)
{
    return send_as("a collective", self, comm, buf, count, type, peer);
}

int tdm_virt_coll_recv(tdm_virt_rank *self, const tdm_virt_comm *comm, void *buf, int count,
                       MPI_Datatype type, int peer)
{
    return recv_as("a collective", self, comm, buf, count, type, peer);
}

static int gather_as(const char *call, tdm_virt_rank *self, const tdm_virt_comm *comm,
                     const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root);

/* Copy count items of type from src to dst, both in this rank. */
static int local_copy(const void *src, void *dst, int count, MPI_Datatype type)
{
    size_t bytes;
    int contiguous;
    int err = tdm_virt_type_bytes(type, count, &bytes, &contiguous);
    if (err != MPI_SUCCESS || bytes == 0)
        return err;
    if (contiguous) {
        memmove(dst, src, bytes);
        return MPI_SUCCESS;
    }
    void *packed = malloc(bytes);
    if (!packed)
        return MPI_ERR_NO_MEM;
    int position = 0;
    err = PMPI_Pack(src, count, type, packed, (int)bytes, &position, MPI_COMM_SELF);
    position = 0;
    if (err == MPI_SUCCESS)
        err = PMPI_Unpack(packed, (int)bytes, &position, dst, count, type, MPI_COMM_SELF);
    free(packed);
    return err;
}

/* A buffer for count items of type, and the address its items start at. */
static void *scratch(int count, MPI_Datatype type, char **items)
{
    MPI_Aint lb, extent, true_lb, true_extent;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    size_t span = count > 0 ? (size_t)true_extent + (size_t)(count - 1) * (size_t)extent : 1;
    char *mem = malloc(span ? span : 1);
    *items = mem ? mem - true_lb : NULL;
    return mem;
}

static MPI_Aint extent_of(MPI_Datatype type)
{
    MPI_Aint lb, extent;
    PMPI_Type_get_extent(type, &lb, &extent);
    return extent;
}

static int bcast_as(const char *call, tdm_virt_rank *self, const tdm_virt_comm *comm, void *buf,
                    int count, MPI_Datatype type, int root)
{
    if (root < 0 || root >= comm->size)
        return MPI_ERR_ROOT;
    if (comm->rank != root)
        return recv_as(call, self, comm, buf, count, type, root);
    tdm_virt_request **reqs = calloc((size_t)comm->size, sizeof *reqs);
    if (!reqs)
        return MPI_ERR_NO_MEM;
    int err = MPI_SUCCESS;
    for (int r = 0; r < comm->size && err == MPI_SUCCESS; r++)
        if (r != root)
            err = start_send(self, comm, buf, count, type, r, &reqs[r]);
    int done = finish(self, reqs, comm->size, call);
    free(reqs);
    return err != MPI_SUCCESS ? err : done;
}

int tdm_virt_bcast(tdm_virt_rank *self, const tdm_virt_comm *comm, void *buf, int count,
                   MPI_Datatype type, int root)
{
    return bcast_as("MPI_Bcast", self, comm, buf, count, type, root);
}

int tdm_virt_barrier(tdm_virt_rank *self, const tdm_virt_comm *comm)
{
    char token = 0;
    int err = gather_as("MPI_Barrier", self, comm, &token, 0, MPI_BYTE, NULL, 0, MPI_BYTE, 0);
    return err != MPI_SUCCESS ? err : bcast_as("MPI_Barrier", self, comm, &token, 0, MPI_BYTE, 0);
}

static int gather_as(const char *call, tdm_virt_rank *self, const tdm_virt_comm *comm,
                     const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root)
{
    if (root < 0 || root >= comm->size)
        return MPI_ERR_ROOT;
    if (comm->rank != root)
        return send_as(call, self, comm, sendbuf, sendcount, sendtype, root);
    MPI_Aint extent = extent_of(recvtype);
    tdm_virt_request **reqs = calloc((size_t)comm->size, sizeof *reqs);
    if (!reqs)
        return MPI_ERR_NO_MEM;
    int err = MPI_SUCCESS;
    for (int r = 0; r < comm->size && err == MPI_SUCCESS; r++) {
        char *at = (char *)recvbuf + (MPI_Aint)r * recvcount * extent;
        if (r != root)
            err = start_recv(self, comm, at, recvcount, recvtype, r, &reqs[r]);
        else if (sendbuf != MPI_IN_PLACE && recvcount > 0)
            err = local_copy(sendbuf, at, recvcount, recvtype);
    }
    int done = finish(self, reqs, comm->size, call);
    free(reqs);
    return err != MPI_SUCCESS ? err : done;
}

int tdm_virt_gather(tdm_virt_rank *self, const tdm_virt_comm *comm, const void *sendbuf,
                    int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, int root)
{
    return gather_as("MPI_Gather", self, comm, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                     recvtype, root);
}

int tdm_virt_scatter(tdm_virt_rank *self, const tdm_virt_comm *comm, const void *sendbuf,
                     int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root)
{
    if (root < 0 || root >= comm->size)
        return MPI_ERR_ROOT;
    if (comm->rank != root)
        return recv_as("MPI_Scatter", self, comm, recvbuf, recvcount, recvtype, root);
    MPI_Aint extent = extent_of(sendtype);
    tdm_virt_request **reqs = calloc((size_t)comm->size, sizeof *reqs);
    if (!reqs)
        return MPI_ERR_NO_MEM;
    int err = MPI_SUCCESS;
    for (int r = 0; r < comm->size && err == MPI_SUCCESS; r++) {
        const char *at = (const char *)sendbuf + (MPI_Aint)r * sendcount * extent;
        if (r != root)
            err = start_send(self, comm, at, sendcount, sendtype, r, &reqs[r]);
        else if (recvbuf != MPI_IN_PLACE && sendcount > 0)
            err = local_copy(at, recvbuf, sendcount, sendtype);
    }
    int done = finish(self, reqs, comm->size, "MPI_Scatter");
    free(reqs);
    return err != MPI_SUCCESS ? err : done;
}

int tdm_virt_allgather(tdm_virt_rank *self, const tdm_virt_comm *comm, const void *sendbuf,
                       int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype)
{
    if (sendbuf == MPI_IN_PLACE) {
        /* This rank's items are already in its place of recvbuf. */
        sendbuf = (char *)recvbuf + (MPI_Aint)comm->rank * recvcount * extent_of(recvtype);
        sendcount = recvcount;
        sendtype = recvtype;
        if (comm->rank == 0)
            sendbuf = MPI_IN_PLACE;
    }
    int err = gather_as("MPI_Allgather", self, comm, sendbuf, sendcount, sendtype, recvbuf,
                        recvcount, recvtype, 0);
    if (err != MPI_SUCCESS)
        return err;
    return bcast_as("MPI_Allgather", self, comm, recvbuf, recvcount * comm->size, recvtype, 0);
}

int tdm_virt_alltoall(tdm_virt_rank *self, const tdm_virt_comm *comm, const void *sendbuf,
                      int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype)
{
    if (sendbuf == MPI_IN_PLACE)
        return MPI_ERR_ARG; /* not supported yet: said in docs/VIRTUAL.md */
    MPI_Aint sextent = extent_of(sendtype), rextent = extent_of(recvtype);
    int n = comm->size;
    tdm_virt_request **reqs = calloc((size_t)(2 * n), sizeof *reqs);
    if (!reqs)
        return MPI_ERR_NO_MEM;
    int err = MPI_SUCCESS;
    for (int r = 0; r < n && err == MPI_SUCCESS; r++)
        if (r != comm->rank)
            err = start_recv(self, comm, (char *)recvbuf + (MPI_Aint)r * recvcount * rextent,
                             recvcount, recvtype, r, &reqs[r]);
    for (int i = 1; i <= n && err == MPI_SUCCESS; i++) {
        int r = (comm->rank + i) % n; /* each rank starts with its next */
        const char *from = (const char *)sendbuf + (MPI_Aint)r * sendcount * sextent;
        if (r != comm->rank)
            err = start_send(self, comm, from, sendcount, sendtype, r, &reqs[n + r]);
        else
            err = local_copy(from, (char *)recvbuf + (MPI_Aint)r * recvcount * rextent, recvcount,
                             recvtype);
    }
    int done = finish(self, reqs, 2 * n, "MPI_Alltoall");
    free(reqs);
    return err != MPI_SUCCESS ? err : done;
}

static int reduce_as(const char *call, tdm_virt_rank *self, const tdm_virt_comm *comm,
                     const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                     int root)
{
    if (root < 0 || root >= comm->size)
        return MPI_ERR_ROOT;
    if (comm->rank != root)
        return send_as(call, self, comm, sendbuf, count, type, root);
    int n = comm->size;
    /* Every contribution, in rank order, then folded from the last:
       result = r0 op (r1 op (... op r(n-1))), the order MPI asks of an
       operation that does not commute. */
    char **items = calloc((size_t)n, sizeof *items);
    void **mems = calloc((size_t)n, sizeof *mems);
    tdm_virt_request **reqs = calloc((size_t)n, sizeof *reqs);
    int err = items && mems && reqs ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int r = 0; r < n && err == MPI_SUCCESS; r++) {
        if (r == root && sendbuf != MPI_IN_PLACE) {
            items[r] = (char *)sendbuf;
            continue;
        }
        mems[r] = scratch(count, type, &items[r]);
        if (!mems[r]) {
            err = MPI_ERR_NO_MEM;
            break;
        }
        if (r == root)
            err = local_copy(recvbuf, items[r], count, type);
        else
            err = start_recv(self, comm, items[r], count, type, r, &reqs[r]);
    }
    int done = reqs ? finish(self, reqs, n, call) : MPI_SUCCESS;
    if (err == MPI_SUCCESS)
        err = done;
    if (err == MPI_SUCCESS)
        err = local_copy(items[n - 1], recvbuf, count, type);
    for (int r = n - 2; r >= 0 && err == MPI_SUCCESS; r--)
        err = PMPI_Reduce_local(items[r], recvbuf, count, type, op);
    for (int r = 0; mems && r < n; r++)
        free(mems[r]);
    free(items);
    free(mems);
    free(reqs);
    return err;
}

int tdm_virt_reduce(tdm_virt_rank *self, const tdm_virt_comm *comm, const void *sendbuf,
                    void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root)
{
    return reduce_as("MPI_Reduce", self, comm, sendbuf, recvbuf, count, type, op, root);
}

int tdm_virt_allreduce(tdm_virt_rank *self, const tdm_virt_comm *comm, const void *sendbuf,
                       void *recvbuf, int count, MPI_Datatype type, MPI_Op op)
{
    if (sendbuf == MPI_IN_PLACE && comm->rank != 0)
        sendbuf = recvbuf;
    int err = reduce_as("MPI_Allreduce", self, comm, sendbuf, recvbuf, count, type, op, 0);
    return err != MPI_SUCCESS ? err
                              : bcast_as("MPI_Allreduce", self, comm, recvbuf, count, type, 0);
}
