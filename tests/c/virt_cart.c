/*
 * Cartesian topologies for the virtual ranks' transparency test
 * (tests/virt_compare.py): the same output with N processes as with N
 * virtual ranks. A 2D grid from MPI_Dims_create, periodic in its first
 * dimension: coordinates, MPI_Cart_rank, both shifts and a halo exchange
 * along them, MPI_Cart_get and MPI_Cartdim_get, MPI_Topo_test, a row of the
 * grid (MPI_Cart_sub) and its sum, a duplicate that keeps the topology,
 * the neighbourhood collectives (every form, blocking and nonblocking), a
 * distributed graph (its neighbours, two neighbourhood collectives, a
 * duplicate), a graph topology (MPI_Graph_create and its queries), a
 * distributed graph of the general form, and a 1D grid of one rank fewer
 * that leaves the last rank out. Rank 0 prints every result.
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

    /* A graph topology (MPI-1): a ring of nodes, each linked to the next
       and the previous, over all ranks but the last from 3 ranks on (the
       last gets MPI_COMM_NULL); its dimensions, the neighbours of this rank
       and of node 0, the whole index, two neighbourhood collectives (one on
       a duplicate) and where MPI_Graph_map and MPI_Cart_map place this rank. */
    int nodes = size > 2 ? size - 1 : size, links = nodes > 2 ? 2 : 1, index[16], edges[32];
    for (int r = 0; r < nodes && r < 16; r++) {
        /* one link each below 3 nodes: MPI leaves the order of the messages
           of two edges between the same ranks open (MPICH and Open MPI
           differ) */
        index[r] = links * (r + 1);
        edges[links * r] = (r + 1) % nodes;
        if (links == 2)
            edges[2 * r + 1] = (r + nodes - 1) % nodes;
    }
    MPI_Comm ring2, ring2_copy;
    MPI_Graph_create(MPI_COMM_WORLD, nodes, index, edges, 0, &ring2);
    int mapped[2];
    MPI_Graph_map(MPI_COMM_WORLD, nodes, index, edges, &mapped[0]);
    MPI_Cart_map(MPI_COMM_WORLD, 1, &nodes, periods, &mapped[1]);
    /* the maps of members only: Open MPI 4.1.4 maps the others to their
       own rank, not MPI_UNDEFINED */
    long graph_facts[10] = {ring2 != MPI_COMM_NULL, rank < nodes ? mapped[0] : -1,
                            rank < nodes ? mapped[1] : -1};
    long graph_got[2] = {-1, -1};
    if (ring2 != MPI_COMM_NULL) {
        int nn, ne, count, zero_count, own[2] = {-1, -1}, zero[2] = {-1, -1}, got_index[16];
        MPI_Topo_test(ring2, &status);
        MPI_Graphdims_get(ring2, &nn, &ne);
        MPI_Graph_neighbors_count(ring2, rank, &count);
        MPI_Graph_neighbors(ring2, rank, links, own);
        MPI_Graph_neighbors_count(ring2, 0, &zero_count);
        MPI_Graph_neighbors(ring2, 0, links, zero);
        MPI_Graph_get(ring2, 16, 32, got_index, edges);
        long got_facts[7] = {status == MPI_GRAPH,
                             nn,
                             ne,
                             count,
                             own[0],
                             own[1],
                             got_index[nn - 1] + zero_count + zero[0] + zero[1]};
        for (int k = 0; k < 7; k++)
            graph_facts[3 + k] = got_facts[k];
        long ten = 10L * rank + 1;
        MPI_Neighbor_allgather(&ten, 1, MPI_LONG, graph_got, 1, MPI_LONG, ring2);
        MPI_Comm_dup(ring2, &ring2_copy);
        MPI_Topo_test(ring2_copy, &status);
        graph_facts[3] += status == MPI_GRAPH;
        long sent[2] = {100L * rank, 100L * rank + 1}, answer[2] = {-1, -1};
        MPI_Request req;
        MPI_Ineighbor_alltoall(sent, 1, MPI_LONG, answer, 1, MPI_LONG, ring2_copy, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        graph_got[0] += answer[0];
        graph_got[1] += answer[1];
        MPI_Comm_free(&ring2_copy);
        MPI_Comm_free(&ring2);
    }
    print_all(rank, size, "graph: member, maps, topology, dims, neighbours, index sum", graph_facts,
              10);
    print_all(rank, size, "graph allgather + alltoall", graph_got, 2);

    /* A distributed graph of the general form: each rank names the edges of
       the next rank, to this rank and to the one after the next. The order
       of a rank's neighbours is the library's: printed sorted, and a
       neighbourhood allgather checked against it. */
    int named = (rank + 1) % size, degrees[1] = {2}, targets[2] = {rank, (rank + 2) % size};
    MPI_Comm general;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &named, degrees, targets, MPI_UNWEIGHTED,
                          MPI_INFO_NULL, 0, &general);
#pragma GCC diagnostic pop
    int gin, gout, gweighted, from[4] = {-1, -1, -1, -1}, to[4] = {-1, -1, -1, -1};
    MPI_Dist_graph_neighbors_count(general, &gin, &gout, &gweighted);
    MPI_Dist_graph_neighbors(general, gin, from, MPI_UNWEIGHTED, gout, to, MPI_UNWEIGHTED);
    long heard[4] = {-1, -1, -1, -1}, said = 7L * rank + 3;
    MPI_Neighbor_allgather(&said, 1, MPI_LONG, heard, 1, MPI_LONG, general);
    long consistent = gin <= 4 && gout <= 4;
    for (int k = 0; k < gin && k < 4; k++)
        consistent &= heard[k] == 7L * from[k] + 3;
    long sorted[9] = {gin, gout, consistent, from[0], from[1], to[0], to[1]};
    for (int k = 3; k < 7; k += 2) /* two of each: sort each pair */
        if (sorted[k] > sorted[k + 1]) {
            long t = sorted[k];
            sorted[k] = sorted[k + 1];
            sorted[k + 1] = t;
        }
    MPI_Topo_test(general, &status);
    sorted[7] = status == MPI_DIST_GRAPH;
    sorted[8] = gweighted;
    print_all(rank, size, "general dist graph: degrees, consistent, in, out, topology, weighted",
              sorted, 9);
    MPI_Comm_free(&general);

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
