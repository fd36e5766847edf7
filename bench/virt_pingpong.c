/*
 * Virtual ranks, measured from a plain MPI program (built with `tandem cc`,
 * or against the real MPI for comparison): the one-way time of an 8-byte
 * ping-pong between ranks 0 and 1, and the bandwidth of 4 MiB messages (or
 * BYTES) from rank 0 to rank 1 against memcpy's in the same process. Best of several
 * runs; rank 0 prints one JSON object. Run with 2 ranks on one core
 * (tandem run --virtual 2) for the same-core numbers.
 *
 *   tandem-bench-virt-pingpong [ROUNDS [TRANSFERS [BYTES]]]
 *
 * TRANSFERS: the messages of each of the 5 bandwidth runs (default 50;
 * fewer over a slow link, as tandem model calibrate does); BYTES: their
 * size (default 4 MiB).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long rounds = argc > 1 ? atol(argv[1]) : 200000;
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "run with 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    char small[8] = {0};
    double best_latency = 1e9;
    for (int run = 0; run < 5 && rank < 2; run++) {
        int peer = 1 - rank;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long i = 0; i < rounds; i++) {
            if (rank == 0) {
                MPI_Send(small, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
                MPI_Recv(small, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(small, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(small, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
            }
        }
        double us = (MPI_Wtime() - t0) * 1e6 / (2.0 * (double)rounds);
        best_latency = us < best_latency ? us : best_latency;
    }
    if (rank >= 2)
        for (int run = 0; run < 5; run++)
            MPI_Barrier(MPI_COMM_WORLD);

    long big = argc > 3 ? atol(argv[3]) : 4 << 20;
    if (big < 1 || big > 1L << 30) {
        if (rank == 0)
            fprintf(stderr, "BYTES=%s is not valid: expected 1 to 1073741824\n", argv[3]);
        MPI_Finalize();
        return 1;
    }
    const int BIG = (int)big;
    char *out = malloc(BIG), *in = malloc(BIG);
    memset(out, 1, BIG);
    memset(in, 0, BIG);
    int transfers = argc > 2 ? atoi(argv[2]) : 50;
    if (transfers < 1)
        transfers = 1;
    double best_mpi = 1e9, best_memcpy = 1e9;
    for (int run = 0; run < 5; run++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < transfers; i++) {
            if (rank == 0)
                MPI_Send(out, BIG, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            else if (rank == 1)
                MPI_Recv(in, BIG, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        /* The last transfer is over once rank 1 has it. */
        if (rank < 2)
            MPI_Sendrecv(small, 0, MPI_BYTE, 1 - rank, 2, small, 0, MPI_BYTE, 1 - rank, 2,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double t = MPI_Wtime() - t0;
        best_mpi = t < best_mpi ? t : best_mpi;
        if (rank == 0) {
            t0 = MPI_Wtime();
            for (int i = 0; i < transfers; i++) {
                memcpy(in, out, BIG);
                __asm__ volatile("" : : "r"(in) : "memory");
            }
            t = MPI_Wtime() - t0;
            best_memcpy = t < best_memcpy ? t : best_memcpy;
        }
    }
    if (rank == 0) {
        double mpi_gbs = (double)BIG * transfers / best_mpi / 1e9;
        double memcpy_gbs = (double)BIG * transfers / best_memcpy / 1e9;
        printf("{\"benchmark\": \"virt-pingpong\", \"ranks\": %d, \"rounds\": %ld, "
               "\"latency_us\": %.4f, \"bytes\": %d, \"bandwidth_gbs\": %.3f, "
               "\"memcpy_gbs\": %.3f, \"bandwidth_of_memcpy\": %.3f}\n",
               size, rounds, best_latency, BIG, mpi_gbs, memcpy_gbs, mpi_gbs / memcpy_gbs);
    }
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
