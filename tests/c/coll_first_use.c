/*
 * A nonblocking collective is local: it returns without waiting for the other
 * ranks, also the first one on a communicator. Here rank 0 posts a broadcast
 * and only then sends the token that lets the next rank post its own, along a
 * chain; a call that waited for the others (as setting up Tandem's private
 * copy of the communicator inside the first MPI_Ibcast did) deadlocks.
 *
 * The chain runs on MPI_COMM_WORLD and on communicators made by each
 * constructor Tandem knows (dup, dup_with_info, split, split_type, create,
 * create_group, the topology constructors, intercomm_merge, idup: completed
 * at once, and completed after a second idup was posted; where mpi.h is MPI 4,
 * idup_with_info and create_from_group).
 *
 * Printed: the broadcast data per communicator, the same with and without
 * Tandem.
 */
#include "testlib.h"

enum { COUNT = 1000 };

static const char *const kinds[] = {
    "world",
    "dup",
    "dup_with_info",
    "split",
    "split_type",
    "create",
    "create_group",
    "cart_create",
    "cart_sub",
    "graph_create",
    "dist_graph_adjacent",
    "dist_graph",
    "intercomm_merge",
    "idup",
    "idup_overtaken",
#if MPI_VERSION >= 4 /* MPICH here, not Open MPI 4.1 */
    "idup_with_info",
    "create_from_group",
#endif
};
enum { KINDS = sizeof kinds / sizeof kinds[0] };

/* The topology constructors and MPI_Intercomm_merge (from Fortran:
   tests/fortran/f_first_use.f90). */
static MPI_Comm made_topology_or_merged(int kind)
{
    MPI_Comm world = MPI_COMM_WORLD, out = MPI_COMM_NULL, cart;
    int rank, size;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int dims[1] = {size}, periods[1] = {1}, remain[1] = {1}, weight[1] = {1};
    int *index = malloc(sizeof(int) * (size_t)size), *edges = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++) {
        index[i] = i + 1; /* a ring: node i's one neighbour is i + 1 */
        edges[i] = (i + 1) % size;
    }
    switch (kind) {
    case 7: check_mpi(MPI_Cart_create(world, 1, dims, periods, 0, &out)); break;
    case 8:
        check_mpi(MPI_Cart_create(world, 1, dims, periods, 0, &cart));
        check_mpi(MPI_Cart_sub(cart, remain, &out));
        MPI_Comm_free(&cart);
        break;
    case 9: check_mpi(MPI_Graph_create(world, size, index, edges, 0, &out)); break;
    case 10:
        check_mpi(MPI_Dist_graph_create_adjacent(world, 1, &left, weight, 1, &right, weight,
                                                 MPI_INFO_NULL, 0, &out));
        break;
    case 11: {
        int one = 1;
        check_mpi(
            MPI_Dist_graph_create(world, 1, &rank, &one, &right, weight, MPI_INFO_NULL, 0, &out));
        break;
    }
    default: { /* two halves joined by an inter-communicator, merged back */
        if (size < 2) {
            check_mpi(MPI_Comm_dup(world, &out));
            break;
        }
        int high = rank >= size / 2;
        MPI_Comm half, inter;
        check_mpi(MPI_Comm_split(world, high, rank, &half));
        check_mpi(MPI_Intercomm_create(half, 0, world, high ? 0 : size / 2, 9, &inter));
        check_mpi(MPI_Intercomm_merge(inter, high, &out));
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
        break;
    }
    }
    free(index);
    free(edges);
    return out;
}

static MPI_Comm made(int kind)
{
    MPI_Comm comm = MPI_COMM_WORLD, out = MPI_COMM_NULL;
    MPI_Group group;
    switch (kind) {
    case 0: return MPI_COMM_WORLD;
    case 1: check_mpi(MPI_Comm_dup(comm, &out)); break;
    case 2: check_mpi(MPI_Comm_dup_with_info(comm, MPI_INFO_NULL, &out)); break;
    case 3: check_mpi(MPI_Comm_split(comm, 0, -1, &out)); break; /* reversed ranks */
    case 4:
        check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &out));
        break;
    case 5:
        MPI_Comm_group(comm, &group);
        check_mpi(MPI_Comm_create(comm, group, &out));
        MPI_Group_free(&group);
        break;
    case 6:
        MPI_Comm_group(comm, &group);
        check_mpi(MPI_Comm_create_group(comm, group, 7, &out));
        MPI_Group_free(&group);
        break;
    case 13: {
        MPI_Request request;
        check_mpi(MPI_Comm_idup(comm, &out, &request));
        check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE));
        break;
    }
    case 14: { /* the first one completes last, and is freed before any use */
        MPI_Request requests[2];
        MPI_Comm first;
        check_mpi(MPI_Comm_idup(comm, &first, &requests[0]));
        check_mpi(MPI_Comm_idup(comm, &out, &requests[1]));
        check_mpi(MPI_Wait(&requests[1], MPI_STATUS_IGNORE));
        check_mpi(MPI_Wait(&requests[0], MPI_STATUS_IGNORE));
        check_mpi(MPI_Comm_free(&first));
        break;
    }
#if MPI_VERSION >= 4
    case 15: {
        MPI_Request request;
        check_mpi(MPI_Comm_idup_with_info(comm, MPI_INFO_NULL, &out, &request));
        check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE));
        break;
    }
    case 16:
        MPI_Comm_group(comm, &group);
        check_mpi(MPI_Comm_create_from_group(group, "tandem.coll_first_use", MPI_INFO_NULL,
                                             MPI_ERRORS_RETURN, &out));
        MPI_Group_free(&group);
        break;
#endif
    default: return made_topology_or_merged(kind);
    }
    return out;
}

/* Rank r posts its broadcast from the last rank, then passes the token to
   r + 1, which waits for it before posting its own. */
static unsigned long chain(MPI_Comm comm, int *data)
{
    int rank, size, token = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int i = 0; i < COUNT; i++)
        data[i] = rank == size - 1 ? 3 * i + 1 : -1;
    MPI_Request request;
    if (rank > 0)
        check_mpi(MPI_Recv(&token, 1, MPI_INT, rank - 1, 5, comm, MPI_STATUS_IGNORE));
    check_mpi(MPI_Ibcast(data, COUNT, MPI_INT, size - 1, comm, &request));
    if (rank < size - 1)
        check_mpi(MPI_Send(&token, 1, MPI_INT, rank + 1, 5, comm));
    check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE));
    for (int i = 0; i < COUNT; i++)
        check(data[i] == 3 * i + 1);
    return tsum(data, sizeof(int) * COUNT);
}

int main(int argc, char **argv)
{
    int rank, size, left, right;
    tinit(&argc, &argv, &rank, &size, &left, &right);
    int *data = malloc(sizeof(int) * COUNT);
    for (int kind = 0; kind < KINDS; kind++) {
        MPI_Comm comm = made(kind);
        unsigned long sum = chain(comm, data);
        tlog("rank %d: %s %lx", rank, kinds[kind], sum);
        if (comm != MPI_COMM_WORLD)
            MPI_Comm_free(&comm);
    }

    free(data);
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
