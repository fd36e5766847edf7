/*
 * The ghost-cell exchange of the seed: a 1-D domain of CELLS doubles split
 * over the ranks (strong scaling), each step exchanging HALO bytes with both
 * neighbours (Irecv, Isend) while the interior is updated with a triad, then
 * MPI_Waitall. The rank that is slowest reports, as medians over the trials:
 *   step_s     time of one step (exchange + compute)
 *   compute_s  the same compute alone
 *   comm_s     the same exchange alone
 *   hidden     1 - (step - compute) / comm: the share of the exchange hidden
 * One JSON object on stdout.
 *
 * With a fifth argument "monitor" (and Tandem loaded), each trial instead
 * times the steps with Tandem's monitoring recording and not recording, in
 * alternating order (tandem_monitor_start/stop), and reports both medians and
 * the median of the per-trial ratios as monitor_overhead: a paired
 * measurement inside one run, which the load of a shared machine disturbs far
 * less than two separate runs.
 *
 *   halo CELLS HALO_BYTES STEPS TRIALS [monitor]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* Tandem's API when Tandem is loaded (preloaded or linked), else NULL. */
extern int tandem_monitor_start(void) __attribute__((weak));
extern int tandem_monitor_stop(void) __attribute__((weak));

static double *a, *b, *c;
static long local;

static void triad(void)
{
    for (long i = 0; i < local; i++)
        a[i] = b[i] + 1.0000001 * c[i] + a[i] * 1e-9;
}

/* 'steps' steps; 'work' and 'talk' select the compute and the exchange. */
static double run(int steps, int work, int talk, int left, int right, char *halo[4], int bytes)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int s = 0; s < steps; s++) {
        MPI_Request r[4];
        int n = 0;
        if (talk) {
            MPI_Irecv(halo[0], bytes, MPI_BYTE, left, 1, MPI_COMM_WORLD, &r[n++]);
            MPI_Irecv(halo[1], bytes, MPI_BYTE, right, 2, MPI_COMM_WORLD, &r[n++]);
            MPI_Isend(halo[2], bytes, MPI_BYTE, right, 1, MPI_COMM_WORLD, &r[n++]);
            MPI_Isend(halo[3], bytes, MPI_BYTE, left, 2, MPI_COMM_WORLD, &r[n++]);
        }
        if (work)
            triad();
        MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
    }
    double mine = (MPI_Wtime() - t0) / steps, slowest;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 5) {
        if (rank == 0)
            fprintf(stderr, "usage: halo CELLS HALO_BYTES STEPS TRIALS\n");
        MPI_Finalize();
        return 1;
    }
    long cells = atol(argv[1]);
    int bytes = atoi(argv[2]), steps = atoi(argv[3]), trials = atoi(argv[4]);
    local = cells / size;
    a = calloc((size_t)local, sizeof(double));
    b = calloc((size_t)local, sizeof(double));
    c = calloc((size_t)local, sizeof(double));
    char *halo[4];
    for (int i = 0; i < 4; i++)
        halo[i] = calloc((size_t)bytes + 1, 1);
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    double *step = malloc(sizeof(double) * (size_t)trials);
    double *compute = malloc(sizeof(double) * (size_t)trials);
    double *comm = malloc(sizeof(double) * (size_t)trials);

    run(1, 1, 1, left, right, halo, bytes); /* warm-up: connections, pages */
    if (argc > 5 && strcmp(argv[5], "monitor") == 0) {
        if (!tandem_monitor_start || !tandem_monitor_stop) {
            if (rank == 0)
                fprintf(stderr, "halo: 'monitor' needs Tandem loaded\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        double *ratio = malloc(sizeof(double) * (size_t)trials);
        for (int t = 0; t < trials; t++) {
            for (int k = 0; k < 2; k++) {
                int on = (k + t) % 2; /* alternate which comes first */
                if (on)
                    tandem_monitor_start();
                double s_ = run(steps, 1, 1, left, right, halo, bytes);
                if (on)
                    tandem_monitor_stop();
                (on ? comm : step)[t] = s_;
            }
            ratio[t] = comm[t] / step[t] - 1;
        }
        if (rank == 0)
            printf("{\"test\": \"halo_monitor\", \"ranks\": %d, \"cells\": %ld, \"bytes\": %d, "
                   "\"steps\": %d, \"trials\": %d, \"step_s\": %.7f, \"step_monitor_s\": %.7f, "
                   "\"monitor_overhead\": %.5f}\n",
                   size, cells, bytes, steps, trials, median(step, trials), median(comm, trials),
                   median(ratio, trials));
        free(ratio);
        MPI_Finalize();
        return 0;
    }
    for (int t = 0; t < trials; t++) {
        comm[t] = run(steps, 0, 1, left, right, halo, bytes);
        compute[t] = run(steps, 1, 0, left, right, halo, bytes);
        step[t] = run(steps, 1, 1, left, right, halo, bytes);
    }
    if (rank == 0) {
        double st = median(step, trials), co = median(compute, trials), cm = median(comm, trials);
        double hidden = size > 1 && cm > 0 ? 1.0 - (st - co) / cm : 0;
        hidden = hidden < 0 ? 0 : hidden > 1 ? 1 : hidden;
        printf("{\"test\": \"halo\", \"ranks\": %d, \"cells\": %ld, \"bytes\": %d, \"steps\": %d, "
               "\"trials\": %d, \"step_s\": %.7f, \"compute_s\": %.7f, \"comm_s\": %.7f, "
               "\"hidden\": %.4f}\n",
               size, cells, bytes, steps, trials, st, co, cm, hidden);
    }
    MPI_Finalize();
    return 0;
}
