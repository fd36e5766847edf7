/*
 * Cartesian topologies for the virtual ranks' transparency test
 * (tests/virt_compare.py): the same output with N processes as with N
 * virtual ranks. A 2D grid from MPI_Dims_create, periodic in its first
 * dimension: coordinates, MPI_Cart_rank, both shifts and a halo exchange
 * along them, MPI_Cart_get and MPI_Cartdim_get, MPI_Topo_test, a row of the
 * grid (MPI_Cart_sub) and its sum, a duplicate that keeps the topology,
 * the neighbourhood collectives (every form, blocking and nonblocking), a
 * distributed graph (its neighbours, two neighbourhood collectives, a
 * duplicate), and a 1D grid of one rank fewer that leaves the last rank
 * out. Rank 0 prints
 * every result.
 */
#include "virt_testlib.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int dims[2] = {0, 0}, periods[2] = {1, 0}, status;
    MPI_Dims_create(size, 2, dims);
    MPI_Comm grid;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    MPI_Topo_test(MPI_COMM_WORLD, &status);
    long world_topo = status == MPI_UNDEFINED ? 0 : status == MPI_CART ? 1 : -1;
    MPI_Topo_test(grid, &status);
    long grid_topo = status == MPI_CART ? 1 : -1;
    if (rank == 0)
        printf("dims %d x %d; topology: world %ld, grid %ld\n", dims[0], dims[1], world_topo,
               grid_topo);

    int me, coords[2], back, got[2], gdims[2], gperiods[2], ndims;
    MPI_Comm_rank(grid, &me);
    MPI_Cart_coords(grid, me, 2, coords);
    MPI_Cart_rank(grid, coords, &back);
    MPI_Cart_get(grid, 2, gdims, gperiods, got);
    MPI_Cartdim_get(grid, &ndims);
    long facts[6] = {coords[0],
                     coords[1],
                     back == me,
                     got[0] == coords[0] && got[1] == coords[1],
                     gperiods[0] * 10 + gperiods[1],
                     ndims};
    print_all(rank, size, "coords, rank back, get, periods, ndims", facts, 6);

    /* Shifts by 1 in each dimension (PROC_NULL at the ends of the second),
       and a periodic shift by -1 wrapping around (MPI_Cart_rank's modulo). */
    long shifts[6];
    for (int d = 0; d < 2; d++) {
        int src, dst;
        MPI_Cart_shift(grid, d, 1, &src, &dst);
        shifts[2 * d] = src == MPI_PROC_NULL ? -1 : src;
        shifts[2 * d + 1] = dst == MPI_PROC_NULL ? -1 : dst;
    }
    int wrapped[2] = {coords[0] - 1, coords[1]}, up;
    MPI_Cart_rank(grid, wrapped, &up);
    shifts[4] = up;
    /* a halo exchange along the first dimension: each rank's number goes
       to the next, with MPI_Sendrecv on the shift's ranks */
    int src, dst;
    MPI_Cart_shift(grid, 0, 1, &src, &dst);
    long out = 1000 + me, in = -1;
    MPI_Sendrecv(&out, 1, MPI_LONG, dst, 5, &in, 1, MPI_LONG, src, 5, grid, MPI_STATUS_IGNORE);
    shifts[5] = in;
    print_all(rank, size, "shift 0 src dst, shift 1 src dst, wrapped, halo", shifts, 6);

    /* The rows: the second dimension kept. */
    MPI_Comm row;
    int keep[2] = {0, 1}, row_rank, row_size, row_dims;
    MPI_Cart_sub(grid, keep, &row);
    MPI_Comm_rank(row, &row_rank);
    MPI_Comm_size(row, &row_size);
    MPI_Cartdim_get(row, &row_dims);
    long sum = 0, mine = me;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, row);
    long rows[4] = {row_rank, row_size, row_dims, sum};
    print_all(rank, size, "row rank, size, ndims, sum of grid ranks", rows, 4);

    /* A duplicate keeps the topology. */
    MPI_Comm copy;
    MPI_Comm_dup(grid, &copy);
    int copy_coords[2];
    MPI_Cart_coords(copy, me, 2, copy_coords);
    MPI_Topo_test(copy, &status);
    long dup[3] = {status == MPI_CART, copy_coords[0], copy_coords[1]};
    print_all(rank, size, "dup: cart, coords", dup, 3);

    /* Neighbourhood collectives on a grid of the same shape without
       wrap-around, whose 4 neighbours are in MPI's order (-1 then +1 in
       each dimension; MPI_PROC_NULL beyond an end leaves a block as it
       was). (Where one rank is both neighbours of a dimension, a periodic
       one of 1 or 2 ranks, MPICH 4.0.2 and Open MPI 4.1 give each form its
       own order of the two blocks: not compared.) */
    int open_periods[2] = {0, 0};
    MPI_Comm flat;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, open_periods, 0, &flat);
    long nb_in[4], nb_out[4], one_of_mine = me;
    int ones[4] = {1, 1, 1, 1}, forward[4] = {0, 1, 2, 3}, backward[4] = {3, 2, 1, 0};
    MPI_Aint bytes_fwd[4], bytes_back[4];
    MPI_Datatype longs[4] = {MPI_LONG, MPI_LONG, MPI_LONG, MPI_LONG};
    for (int k = 0; k < 4; k++) {
        nb_out[k] = 100 * me + k;
        bytes_fwd[k] = (MPI_Aint)(k * sizeof(long));
        bytes_back[k] = (MPI_Aint)((3 - k) * sizeof(long));
    }
    for (int form = 0; form < 7; form++) {
        MPI_Request req;
        for (int k = 0; k < 4; k++)
            nb_in[k] = -1;
        switch (form) {
        case 0: MPI_Neighbor_allgather(&one_of_mine, 1, MPI_LONG, nb_in, 1, MPI_LONG, flat); break;
        case 1: MPI_Neighbor_alltoall(nb_out, 1, MPI_LONG, nb_in, 1, MPI_LONG, flat); break;
        case 2:
            MPI_Neighbor_alltoallv(nb_out, ones, backward, MPI_LONG, nb_in, ones, forward, MPI_LONG,
                                   flat);
            break;
        case 3:
            MPI_Neighbor_alltoallw(nb_out, ones, bytes_back, longs, nb_in, ones, bytes_fwd, longs,
                                   flat);
            break;
        case 4:
            MPI_Ineighbor_alltoall(nb_out, 1, MPI_LONG, nb_in, 1, MPI_LONG, flat, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            break;
        case 5:
            MPI_Ineighbor_allgatherv(&one_of_mine, 1, MPI_LONG, nb_in, ones, backward, MPI_LONG,
                                     flat, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            break;
        default:
            MPI_Neighbor_allgatherv(&one_of_mine, 1, MPI_LONG, nb_in, ones, forward, MPI_LONG,
                                    flat);
        }
        char what[48];
        snprintf(what, sizeof what, "neighbourhood collective %d", form);
        print_all(rank, size, what, nb_in, 4);
    }
    MPI_Comm_free(&flat);

    /* A distributed graph (adjacent form): a directed ring, from r - 1 to
       r + 1, and from 4 ranks on an edge back from r + 2 to r - 2 (no edge
       twice between two ranks). */
    int ins[2] = {(rank + size - 1) % size, (rank + 2) % size};
    int outs[2] = {(rank + 1) % size, (rank + size - 2) % size}, degree = size >= 4 ? 2 : 1;
    MPI_Comm ring, ring_copy;
#pragma GCC diagnostic push /* Open MPI's MPI_UNWEIGHTED: an address GCC sees as empty */
#pragma GCC diagnostic ignored "-Wstringop-overread"
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, degree, ins, MPI_UNWEIGHTED, degree, outs,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &ring);
#pragma GCC diagnostic pop
    int indeg, outdeg, weighted, got_in[2] = {-1, -1}, got_out[2] = {-1, -1};
    MPI_Dist_graph_neighbors_count(ring, &indeg, &outdeg, &weighted);
    /* the degrees as the maxima: MPICH 4.0.2 copies that many, whatever
       the degree (beyond its own array) */
    MPI_Dist_graph_neighbors(ring, indeg, got_in, MPI_UNWEIGHTED, outdeg, got_out, MPI_UNWEIGHTED);
    MPI_Topo_test(ring, &status);
    long second_in = indeg > 1 ? got_in[1] : -1, second_out = outdeg > 1 ? got_out[1] : -1;
    long graph[8] = {indeg,     outdeg,     weighted,   got_in[0],
                     second_in, got_out[0], second_out, status == MPI_DIST_GRAPH};
    print_all(rank, size, "dist graph: degrees, weighted, in, out, topology", graph, 8);
    long ring_in[2] = {-1, -1}, ring_out[2] = {10 * rank, 10 * rank + 1};
    MPI_Neighbor_alltoall(ring_out, 1, MPI_LONG, ring_in, 1, MPI_LONG, ring);
    print_all(rank, size, "dist graph alltoall", ring_in, 2);
    MPI_Comm_dup(ring, &ring_copy);
    MPI_Request ring_req;
    ring_in[0] = ring_in[1] = -1;
    MPI_Ineighbor_allgather(&one_of_mine, 1, MPI_LONG, ring_in, 1, MPI_LONG, ring_copy, &ring_req);
    MPI_Wait(&ring_req, MPI_STATUS_IGNORE);
    print_all(rank, size, "dist graph allgather on a duplicate", ring_in, 2);
    MPI_Comm_free(&ring_copy);
    MPI_Comm_free(&ring);

    /* A line of one rank fewer: the last rank gets MPI_COMM_NULL. */
    int line_dims[1] = {size > 1 ? size - 1 : 1}, line_periods[1] = {0};
    MPI_Comm line;
    MPI_Cart_create(MPI_COMM_WORLD, 1, line_dims, line_periods, 1, &line);
    long in_line = line != MPI_COMM_NULL;
    print_all(rank, size, "in the line", &in_line, 1);
    if (line != MPI_COMM_NULL)
        MPI_Comm_free(&line);

    /* A bad call returns its error class with MPI_ERRORS_RETURN. */
    MPI_Comm_set_errhandler(grid, MPI_ERRORS_RETURN);
    int beyond[2] = {coords[0], dims[1]}, unused, err, class;
    err = MPI_Cart_rank(grid, beyond, &unused);
    MPI_Error_class(err, &class);
    long errors[2] = {class == MPI_ERR_ARG, 0};
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    err = MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst);
    MPI_Error_class(err, &class);
    errors[1] = class == MPI_ERR_TOPOLOGY;
    print_all(rank, size, "errors: out of the grid, no topology", errors, 2);

    MPI_Comm_free(&copy);
    MPI_Comm_free(&row);
    MPI_Comm_free(&grid);
    MPI_Finalize();
    return 0;
}
