/*
 * The overlap benchmark (APSM's simple overlap test, measured as Sandia's
 * SMB does). Two ranks; for each message size and variant:
 *   isend_recv  rank 0: Isend, compute, Wait, receive an empty ack; rank 1: Recv, ack
 *   irecv_send  rank 1: Irecv, compute, Wait;                        rank 0: Send
 *   both        rank 0: Isend, compute, Wait, ack;  rank 1: Irecv, compute, Wait, ack
 * (an Irecv is posted before the barrier that starts the clock).
 * The computing rank reports, as medians over the trials:
 *   transfer  the same pattern with no work (post, wait, ack)
 *   work      a fixed amount of work alone (a triad sweep count, not a time loop),
 *             as long as the trial's own transfer
 *   total     post + work + wait (+ ack)
 *   inflight  the time of the same work while the message is in flight
 * availability = 1 - (total - work) / transfer   (share of the transfer hidden)
 * slowdown     = inflight / work - 1              (what background progress costs)
 * One JSON object per size and variant on stdout, with every trial's
 * transfer alone (sorted; the first 64 trials).
 *
 *   overlap VARIANT SIZE[,SIZE...] [TRIALS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

typedef enum { ISEND_RECV, IRECV_SEND, BOTH } variant;

/* One exchange; returns this rank's time from the barrier and, in *inflight,
   the time of its work. */
static double exchange(variant v, char *sbuf, char *rbuf, int bytes, int rank, long sweeps,
                       double *inflight)
{
    MPI_Request r;
    int computes = v == BOTH || (v == ISEND_RECV && rank == 0) || (v == IRECV_SEND && rank == 1);
    /* A nonblocking receive is posted before the barrier, so the message
       never arrives before it: an unexpected rendezvous message is answered
       inside MPI_Irecv, and then the native MPI moves the rest while the
       receiver computes (Open MPI over the shaped network read 11% or 88%
       by which rank left the barrier first). */
    if (rank == 1 && v != ISEND_RECV)
        MPI_Irecv(rbuf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), w0, w1;
    if (rank == 0 && v != IRECV_SEND)
        MPI_Isend(sbuf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &r);
    else if (rank == 0)
        MPI_Send(sbuf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
    else if (v == ISEND_RECV)
        MPI_Recv(rbuf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    w0 = MPI_Wtime();
    if (computes)
        compute(sweeps);
    w1 = MPI_Wtime();
    if (computes)
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (v != IRECV_SEND) { /* the sender's time must include the delivery */
        if (rank == 0)
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    }
    *inflight = w1 - w0;
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: overlap isend_recv|irecv_send|both SIZE[,SIZE...] [TRIALS] "
                            "(2 ranks)\n");
        MPI_Finalize();
        return 1;
    }
    variant v = strcmp(argv[1], "isend_recv") == 0   ? ISEND_RECV
                : strcmp(argv[1], "irecv_send") == 0 ? IRECV_SEND
                                                     : BOTH;
    int trials = argc > 3 ? atoi(argv[3]) : 5;
    int reporter = v == IRECV_SEND ? 1 : 0;
    if (trials < 1)
        trials = 1;
    double *transfer = malloc(sizeof(double) * (size_t)(trials < 3 ? 3 : trials));
    double *total = malloc(sizeof(double) * (size_t)trials);
    double *inflight = malloc(sizeof(double) * (size_t)trials);
    double *alone = malloc(sizeof(double) * (size_t)trials);

    for (char *item = strtok(argv[2], ","); item; item = strtok(NULL, ",")) {
        int bytes = atoi(item);
        char *sbuf = calloc((size_t)bytes + 1, 1), *rbuf = calloc((size_t)bytes + 1, 1);
        double unused;
        exchange(v, sbuf, rbuf, bytes, rank, 0, &unused); /* warm-up: connections, pages */
        /* The work's pace, on the reporter alone while the other rank waits:
           sweeps per second of a work as long as the transfer (median of 3). */
        for (int i = 0; i < 3; i++)
            transfer[i] = exchange(v, sbuf, rbuf, bytes, rank, 0, &unused);
        double pace = 0;
        if (rank == reporter) {
            double calibration = median(transfer, 3);
            pace = (double)sweeps_lasting(calibration) / calibration;
        }
        for (int i = 0; i < trials; i++) {
            transfer[i] = exchange(v, sbuf, rbuf, bytes, rank, 0, &unused);
            /* Each trial's work lasts as long as its own transfer: a work
               calibrated once, from the first transfers, was half as long as
               the later ones in some runs, and then even a fully hidden
               transfer could read no more than 50% available. */
            long sweeps = (long)(pace * transfer[i] + 0.5);
            sweeps = sweeps < 1 ? 1 : sweeps;
            MPI_Bcast(&sweeps, 1, MPI_LONG, reporter, MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            compute(sweeps);
            alone[i] = MPI_Wtime() - t0;
            total[i] = exchange(v, sbuf, rbuf, bytes, rank, sweeps, &inflight[i]);
        }
        if (rank == reporter) {
            double tr = median(transfer, trials), to = median(total, trials);
            char each[64 * 24] = "", *at = each; /* the transfers, sorted by median() */
            for (int i = 0; i < trials && at < each + sizeof each - 24; i++)
                at += snprintf(at, 24, "%s%.7f", i ? ", " : "", transfer[i]);
            double wa = median(alone, trials), wi = median(inflight, trials);
            double availability = tr > 0 ? 1.0 - (to - wa) / tr : 0;
            availability = availability < 0 ? 0 : availability > 1 ? 1 : availability;
            printf("{\"variant\": \"%s\", \"bytes\": %d, \"trials\": %d, \"transfer_s\": %.7f, "
                   "\"work_s\": %.7f, \"total_s\": %.7f, \"inflight_s\": %.7f, "
                   "\"availability\": %.4f, \"slowdown\": %.4f, \"transfers_s\": [%s]}\n",
                   argv[1], bytes, trials, tr, wa, to, wi, availability, wi / wa - 1.0, each);
            fflush(stdout);
        }
        free(sbuf);
        free(rbuf);
    }
    free(transfer);
    free(total);
    free(inflight);
    free(alone);
    MPI_Finalize();
    return 0;
}
