/*
 * MPI-IO overlap: every rank writes BYTES with MPI_File_iwrite_at (its own
 * region of one file), computes, and waits; measured as bench/overlap.c
 * measures messages. Rank 0 reports, as medians over the trials:
 *   transfer  iwrite_at + wait with no work
 *   work      a fixed amount of work alone, calibrated to the transfer
 *   total     iwrite_at + work + wait
 *   inflight  the time of the work while the write is in flight
 * availability = 1 - (total - work) / transfer; slowdown = inflight / work - 1.
 * One JSON object on stdout.
 *
 *   io_overlap PATH BYTES TRIALS
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static double write_once(MPI_File fh, MPI_Offset offset, const char *buf, int bytes, long sweeps,
                         double *inflight)
{
    MPI_Request r;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_File_iwrite_at(fh, offset, buf, bytes, MPI_BYTE, &r);
    double w0 = MPI_Wtime();
    compute(sweeps);
    *inflight = MPI_Wtime() - w0;
    MPI_Status st;
    MPI_Wait(&r, &st);
    double t = MPI_Wtime() - t0;
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    if (count != bytes) {
        fprintf(stderr, "io_overlap: wrote %d bytes of %d\n", count, bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: io_overlap PATH BYTES TRIALS\n");
        MPI_Finalize();
        return 1;
    }
    int bytes = atoi(argv[2]), trials = atoi(argv[3]);
    char *buf = malloc((size_t)bytes);
    memset(buf, 'a' + rank, (size_t)bytes);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    MPI_Offset offset = (MPI_Offset)rank * bytes;
    double *transfer = malloc(sizeof(double) * (size_t)trials);
    double *total = malloc(sizeof(double) * (size_t)trials);
    double *inflight = malloc(sizeof(double) * (size_t)trials);
    double *alone = malloc(sizeof(double) * (size_t)trials);
    double unused;
    write_once(fh, offset, buf, bytes, 0, &unused); /* warm-up: the file's pages */
    long sweeps = sweeps_lasting(write_once(fh, offset, buf, bytes, 0, &unused));
    MPI_Bcast(&sweeps, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    for (int i = 0; i < trials; i++) {
        transfer[i] = write_once(fh, offset, buf, bytes, 0, &unused);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        compute(sweeps);
        alone[i] = MPI_Wtime() - t0;
        total[i] = write_once(fh, offset, buf, bytes, sweeps, &inflight[i]);
    }
    MPI_File_close(&fh);
    if (rank == 0) {
        MPI_File_delete(argv[1], MPI_INFO_NULL);
        double tr = median(transfer, trials), to = median(total, trials);
        double wa = median(alone, trials), wi = median(inflight, trials);
        double availability = tr > 0 ? 1.0 - (to - wa) / tr : 0;
        availability = availability < 0 ? 0 : availability > 1 ? 1 : availability;
        printf("{\"test\": \"iwrite_at\", \"ranks\": %d, \"bytes\": %d, \"trials\": %d, "
               "\"transfer_s\": %.7f, \"work_s\": %.7f, \"total_s\": %.7f, \"inflight_s\": %.7f, "
               "\"availability\": %.4f, \"slowdown\": %.4f}\n",
               size, bytes, trials, tr, wa, to, wi, availability, wi / wa - 1.0);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
