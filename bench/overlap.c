/*
 * The overlap benchmark (APSM's simple overlap test, measured as Sandia's
 * SMB does). Ranks in pairs (0 with 1, 2 with 3, ...), every pair running the
 * same pattern at the same time; for each variant and message size:
 *   isend_recv  even rank: Isend, compute, Wait, receive an empty ack; odd rank: Recv, ack
 *   irecv_send  odd rank: Irecv, compute, Wait;                          even rank: Send
 *   both        even rank: Isend, compute, Wait, ack;  odd rank: Irecv, compute, Wait, ack
 * (an Irecv is posted before the barrier, over all ranks, that starts the clock).
 * The computing rank of each pair measures, as medians over the trials:
 *   transfer  the same pattern with no work (post, wait, ack)
 *   work      a fixed amount of work alone (a triad sweep count, not a time loop),
 *             as long as the trial's own transfer
 *   total     post + work + wait (+ ack)
 *   inflight  the time of the same work while the message is in flight
 * availability = 1 - (total - work) / transfer   (share of the transfer hidden)
 * slowdown     = inflight / work - 1              (what background progress costs)
 * One JSON object per variant and size on stdout: each measure as the median
 * over the pairs (with 2 ranks, the one pair's), the worst pair's availability
 * and slowdown, every pair's, and the first pair's transfers alone (sorted;
 * the first 64 trials).
 *
 *   overlap VARIANT[,VARIANT...] SIZE[,SIZE...] [TRIALS]     (an even number of ranks)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

typedef enum { ISEND_RECV, IRECV_SEND, BOTH } variant;

static const char *const variant_names[] = {"isend_recv", "irecv_send", "both"};

/* What the computing rank of a pair measured for one variant and size. */
enum { TRANSFER, WORK, TOTAL, INFLIGHT, AVAILABILITY, SLOWDOWN, MEASURES };

/* One exchange with the other rank of 'pair' ('me' is 0 or 1 there); returns
   this rank's time from the barrier and, in *inflight, the time of its work. */
static double exchange(variant v, char *sbuf, char *rbuf, int bytes, MPI_Comm pair, int me,
                       long sweeps, double *inflight)
{
    MPI_Request r;
    int computes = v == BOTH || (v == ISEND_RECV && me == 0) || (v == IRECV_SEND && me == 1);
    /* A nonblocking receive is posted before the barrier, so the message
       never arrives before it: an unexpected rendezvous message is answered
       inside MPI_Irecv, and then the native MPI moves the rest while the
       receiver computes (Open MPI over the shaped network read 11% or 88%
       by which rank left the barrier first). */
    if (me == 1 && v != ISEND_RECV)
        MPI_Irecv(rbuf, bytes, MPI_BYTE, 0, 1, pair, &r);
    MPI_Barrier(MPI_COMM_WORLD); /* every pair starts together */
    double t0 = MPI_Wtime(), w0, w1;
    if (me == 0 && v != IRECV_SEND)
        MPI_Isend(sbuf, bytes, MPI_BYTE, 1, 1, pair, &r);
    else if (me == 0)
        MPI_Send(sbuf, bytes, MPI_BYTE, 1, 1, pair);
    else if (v == ISEND_RECV)
        MPI_Recv(rbuf, bytes, MPI_BYTE, 0, 1, pair, MPI_STATUS_IGNORE);
    w0 = MPI_Wtime();
    if (computes)
        compute(sweeps);
    w1 = MPI_Wtime();
    if (computes)
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (v != IRECV_SEND) { /* the sender's time must include the delivery */
        if (me == 0)
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, pair, MPI_STATUS_IGNORE);
        else
            MPI_Send(NULL, 0, MPI_BYTE, 0, 2, pair);
    }
    *inflight = w1 - w0;
    return MPI_Wtime() - t0;
}

/* v[0..n-1] as a JSON list of numbers, in a buffer the caller frees. */
static char *json_list(const double *v, int n, const char *format)
{
    size_t room = (size_t)n * 24 + 1, at = 0;
    char *text = malloc(room);
    text[0] = '\0';
    for (int i = 0; i < n; i++) {
        at += (size_t)snprintf(text + at, room - at, "%s", i ? ", " : "");
        at += (size_t)snprintf(text + at, room - at, format, v[i]);
    }
    return text;
}

/* The median of v[0..n-1], leaving v as it was. */
static double median_of(const double *v, int n)
{
    double *copy = malloc(sizeof(double) * (size_t)n);
    memcpy(copy, v, sizeof(double) * (size_t)n);
    double m = median(copy, n);
    free(copy);
    return m;
}

/* Run one variant at one size; the computing rank of each pair returns its
   measures in mine[]. */
static void measure(variant v, int bytes, int trials, MPI_Comm pair, int me, double *transfer,
                    double mine[MEASURES])
{
    int reporter = v == IRECV_SEND ? 1 : 0;
    double *total = malloc(sizeof(double) * (size_t)trials);
    double *inflight = malloc(sizeof(double) * (size_t)trials);
    double *alone = malloc(sizeof(double) * (size_t)trials);
    char *sbuf = calloc((size_t)bytes + 1, 1), *rbuf = calloc((size_t)bytes + 1, 1);
    double unused;
    exchange(v, sbuf, rbuf, bytes, pair, me, 0, &unused); /* warm-up: connections, pages */
    /* The work's pace, on the reporter alone while the other rank waits:
       sweeps per second of a work as long as the transfer (median of 3). */
    for (int i = 0; i < 3; i++)
        transfer[i] = exchange(v, sbuf, rbuf, bytes, pair, me, 0, &unused);
    double pace = 0;
    if (me == reporter) {
        double calibration = median(transfer, 3);
        pace = (double)sweeps_lasting(calibration) / calibration;
    }
    for (int i = 0; i < trials; i++) {
        transfer[i] = exchange(v, sbuf, rbuf, bytes, pair, me, 0, &unused);
        /* Each trial's work lasts as long as its own transfer: a work
           calibrated once, from the first transfers, was half as long as
           the later ones in some runs, and then even a fully hidden
           transfer could read no more than 50% available. */
        long sweeps = (long)(pace * transfer[i] + 0.5);
        sweeps = sweeps < 1 ? 1 : sweeps;
        MPI_Bcast(&sweeps, 1, MPI_LONG, reporter, pair);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        compute(sweeps);
        alone[i] = MPI_Wtime() - t0;
        total[i] = exchange(v, sbuf, rbuf, bytes, pair, me, sweeps, &inflight[i]);
    }
    memset(mine, 0, sizeof(double) * MEASURES);
    if (me == reporter) {
        double tr = median(transfer, trials), to = median(total, trials);
        double wa = median(alone, trials), wi = median(inflight, trials);
        double availability = tr > 0 ? 1.0 - (to - wa) / tr : 0;
        mine[TRANSFER] = tr;
        mine[WORK] = wa;
        mine[TOTAL] = to;
        mine[INFLIGHT] = wi;
        mine[AVAILABILITY] = availability < 0 ? 0 : availability > 1 ? 1 : availability;
        mine[SLOWDOWN] = wi / wa - 1.0;
    }
    free(sbuf);
    free(rbuf);
    free(total);
    free(inflight);
    free(alone);
}

/* On the reporter of the first pair: one JSON line from every rank's
   measures ('all', MEASURES per rank) and its own sorted transfers. */
static void report(variant v, int bytes, int trials, int size, const double *all,
                   const double *transfer)
{
    int reporter = v == IRECV_SEND ? 1 : 0, pairs = size / 2;
    double med[MEASURES], *each = malloc(sizeof(double) * (size_t)pairs * MEASURES);
    for (int m = 0; m < MEASURES; m++) {
        for (int p = 0; p < pairs; p++)
            each[m * pairs + p] = all[(2 * p + reporter) * MEASURES + m];
        med[m] = median_of(each + m * pairs, pairs);
    }
    double worst_availability = 1, worst_slowdown = -1;
    for (int p = 0; p < pairs; p++) {
        double a = each[AVAILABILITY * pairs + p], s = each[SLOWDOWN * pairs + p];
        worst_availability = a < worst_availability ? a : worst_availability;
        worst_slowdown = s > worst_slowdown ? s : worst_slowdown;
    }
    char *availabilities = json_list(each + AVAILABILITY * pairs, pairs, "%.4f");
    char *slowdowns = json_list(each + SLOWDOWN * pairs, pairs, "%.4f");
    char *transfers = json_list(transfer, trials < 64 ? trials : 64, "%.7f");
    printf("{\"variant\": \"%s\", \"bytes\": %d, \"ranks\": %d, \"pairs\": %d, \"trials\": %d, "
           "\"transfer_s\": %.7f, \"work_s\": %.7f, \"total_s\": %.7f, \"inflight_s\": %.7f, "
           "\"availability\": %.4f, \"slowdown\": %.4f, \"availability_min\": %.4f, "
           "\"slowdown_max\": %.4f, \"availability_pairs\": [%s], \"slowdown_pairs\": [%s], "
           "\"transfers_s\": [%s]}\n",
           variant_names[v], bytes, size, pairs, trials, med[TRANSFER], med[WORK], med[TOTAL],
           med[INFLIGHT], med[AVAILABILITY], med[SLOWDOWN], worst_availability, worst_slowdown,
           availabilities, slowdowns, transfers);
    fflush(stdout);
    free(availabilities);
    free(slowdowns);
    free(transfers);
    free(each);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum { MAX_SIZES = 64 };
    variant variants[3];
    int sizes[MAX_SIZES], nvariants = 0, nsizes = 0, usable = argc >= 3 && size % 2 == 0;
    for (char *item = usable ? strtok(argv[1], ",") : NULL; item; item = strtok(NULL, ",")) {
        int found = -1;
        for (int i = 0; i < 3; i++)
            if (strcmp(item, variant_names[i]) == 0)
                found = i;
        usable = usable && found >= 0 && nvariants < 3;
        if (usable)
            variants[nvariants++] = (variant)found;
    }
    for (char *item = usable ? strtok(argv[2], ",") : NULL; item; item = strtok(NULL, ",")) {
        usable = usable && nsizes < MAX_SIZES && atoi(item) >= 0;
        if (usable)
            sizes[nsizes++] = atoi(item);
    }
    if (!usable || nvariants == 0 || nsizes == 0) {
        if (rank == 0)
            fprintf(stderr, "usage: overlap isend_recv|irecv_send|both[,...] SIZE[,SIZE...] "
                            "[TRIALS] (an even number of ranks)\n");
        MPI_Finalize();
        return 1;
    }
    int trials = argc > 3 ? atoi(argv[3]) : 5;
    trials = trials < 1 ? 1 : trials;
    MPI_Comm pair; /* ranks 2p and 2p + 1 */
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair);
    int me;
    MPI_Comm_rank(pair, &me);
    double *transfer = malloc(sizeof(double) * (size_t)(trials < 3 ? 3 : trials));
    double mine[MEASURES], *all = malloc(sizeof(double) * (size_t)size * MEASURES);
    for (int k = 0; k < nvariants; k++) {
        variant v = variants[k];
        int reporter = v == IRECV_SEND ? 1 : 0; /* also the first pair's, in MPI_COMM_WORLD */
        for (int s = 0; s < nsizes; s++) {
            measure(v, sizes[s], trials, pair, me, transfer, mine);
            MPI_Gather(mine, MEASURES, MPI_DOUBLE, all, MEASURES, MPI_DOUBLE, reporter,
                       MPI_COMM_WORLD);
            if (rank == reporter)
                report(v, sizes[s], trials, size, all, transfer);
        }
    }
    free(transfer);
    free(all);
    MPI_Comm_free(&pair);
    MPI_Finalize();
    return 0;
}
