/*
 * Communication kernels whose time depends on where the ranks sit, for
 * tandem bench place (docs/PLACEMENT.md): the same program runs in a bad
 * order and renumbered by each placement (TANDEM_REORDER).
 *
 *   place_kernels KERNEL BYTES ITERATIONS TRIALS
 *
 *   pairs    rank r exchanges BYTES with r ^ 1 (the last rank of an odd
 *            count with itself): clustered pairs.
 *   stencil  a 2D grid of ranks (MPI_Dims_create, row by row), each sending
 *            BYTES to each of its up to 4 neighbours (not periodic).
 *   cg       NAS CG's pattern: a grid of nprows x npcols ranks (npcols =
 *            nprows or 2 x nprows, as NPB CG takes them), in each iteration
 *            a sum across each row by recursive doubling (log2 npcols
 *            exchanges of BYTES), then an exchange of BYTES with the
 *            transpose partner, (row, col) <-> (col / k, k x row + col % k),
 *            k = npcols / nprows. A power-of-two number of ranks.
 *
 * Each trial times ITERATIONS iterations after a barrier; the time of a
 * trial is the slowest rank's. One JSON line from rank 0: the median over
 * TRIALS of the time per iteration, and whether every message carried what
 * its sender wrote (the ranks' roles are the program's, whatever process
 * holds them).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int rank, size;
static size_t bytes;
static unsigned char *out, *in;
static int wrong; /* messages whose contents were not the sender's */

/* Exchange 'bytes' with 'peer': the buffer sent is filled with the sender's
   rank, so the receiver knows it heard from the peer it meant. */
static void exchange(int peer, int tag)
{
    if (peer == rank)
        return;
    memset(out, rank & 0xff, bytes);
    MPI_Sendrecv(out, (int)bytes, MPI_BYTE, peer, tag, in, (int)bytes, MPI_BYTE, peer, tag,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (in[0] != (peer & 0xff) || in[bytes - 1] != (peer & 0xff))
        wrong++;
}

static void pairs(void)
{
    int peer = rank ^ 1;
    exchange(peer < size ? peer : rank, 1);
}

static int dims[2];

static void stencil(void)
{
    int row = rank / dims[1], col = rank % dims[1];
    int peers[4] = {-1, -1, -1, -1};
    if (row > 0)
        peers[0] = rank - dims[1];
    if (row < dims[0] - 1)
        peers[1] = rank + dims[1];
    if (col > 0)
        peers[2] = rank - 1;
    if (col < dims[1] - 1)
        peers[3] = rank + 1;
    MPI_Request requests[8];
    int count = 0;
    unsigned char *inbox = in;
    memset(out, rank & 0xff, bytes);
    for (int i = 0; i < 4; i++)
        if (peers[i] >= 0) {
            MPI_Irecv(inbox + (size_t)i * bytes, (int)bytes, MPI_BYTE, peers[i], 2, MPI_COMM_WORLD,
                      &requests[count++]);
            MPI_Isend(out, (int)bytes, MPI_BYTE, peers[i], 2, MPI_COMM_WORLD, &requests[count++]);
        }
    MPI_Waitall(count, requests, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 4; i++)
        if (peers[i] >= 0 && inbox[(size_t)i * bytes] != (peers[i] & 0xff))
            wrong++;
}

static int nprows, npcols;

static void cg(void)
{
    int row = rank / npcols, col = rank % npcols, k = npcols / nprows;
    for (int step = 1; step < npcols; step <<= 1) /* the row's sum */
        exchange(row * npcols + (col ^ step), 3);
    exchange((col / k) * npcols + k * row + col % k, 4); /* the transpose */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long long given = argc == 5 ? atoll(argv[2]) : 0;
    int iterations = argc == 5 ? atoi(argv[3]) : 0, trials = argc == 5 ? atoi(argv[4]) : 0;
    void (*kernel)(void) = NULL;
    if (argc == 5 && strcmp(argv[1], "pairs") == 0)
        kernel = pairs;
    else if (argc == 5 && strcmp(argv[1], "stencil") == 0)
        kernel = stencil;
    else if (argc == 5 && strcmp(argv[1], "cg") == 0 && (size & (size - 1)) == 0)
        kernel = cg;
    if (!kernel || given < 1 || given > (1 << 30) || iterations < 1 || trials < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: place_kernels pairs|stencil|cg BYTES ITERATIONS TRIALS "
                            "(BYTES 1 to 2^30; cg on a power-of-two number of ranks)\n");
        MPI_Finalize();
        return 2;
    }
    bytes = (size_t)given;
    out = malloc(bytes);
    in = malloc(4 * bytes);
    MPI_Dims_create(size, 2, dims);
    for (nprows = 1; nprows * nprows * 4 <= size; nprows *= 2)
        ;
    npcols = size / nprows; /* nprows x nprows or nprows x 2 nprows */

    kernel(); /* connections and first touch */
    double *per_iteration = malloc(sizeof(double) * (size_t)trials);
    for (int t = 0; t < trials; t++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        for (int i = 0; i < iterations; i++)
            kernel();
        double took = MPI_Wtime() - start, slowest;
        MPI_Allreduce(&took, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        per_iteration[t] = slowest / iterations;
    }
    int all_wrong;
    MPI_Reduce(&wrong, &all_wrong, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("{\"kernel\": \"%s\", \"ranks\": %d, \"bytes\": %zu, \"iterations\": %d, "
               "\"iteration_s\": %.9f, \"correct\": %s}\n",
               argv[1], size, bytes, iterations, median(per_iteration, trials),
               all_wrong ? "false" : "true");
    free(per_iteration);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
