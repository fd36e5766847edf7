/* What the benchmark programs share: the median, a robust summary of repeated
   trials, and the fixed work they overlap communication with. */
#ifndef TDM_BENCH_STATS_H
#define TDM_BENCH_STATS_H

#include <mpi.h>
#include <stdlib.h>

static int by_value(const void *x, const void *y)
{
    double d = *(const double *)x - *(const double *)y;
    return (d > 0) - (d < 0);
}

/* The median of v[0..n-1] (sorts v). */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), by_value);
    return v[n / 2];
}

/* A fixed amount of work: 'sweeps' triad sweeps over arrays that fit in the
   cache, never a time-based loop. Call it once before timing it (first touch).
   Never inlined: a benchmark times the work alone at one call and beside a
   transfer at another, and the two must run the same code (inlined at both,
   GCC made the same sweeps take half the time at one of them, which read as
   a -50% slowdown in every cell of bench/overlap.c). */
enum { BENCH_WORK_N = 1 << 15 };
static double bench_a[BENCH_WORK_N], bench_b[BENCH_WORK_N], bench_c[BENCH_WORK_N];

__attribute__((noinline, unused)) static void compute(long sweeps)
{
    for (long s = 0; s < sweeps; s++)
        for (int i = 0; i < BENCH_WORK_N; i++)
            bench_a[i] = bench_b[i] + 1.0000001 * bench_c[i] + bench_a[i] * 1e-9;
}

/* The number of sweeps that lasts 'seconds' here: estimated from a short run,
   then corrected three times by timing the whole count (a short run alone
   misjudged a 17 ms work by up to 45%, which capped the availability of a
   transfer that was fully hidden). */
__attribute__((unused)) static long sweeps_lasting(double seconds)
{
    long sweeps = 20;
    compute(sweeps); /* first touch of the arrays */
    for (int pass = 0; pass < 4; pass++) {
        double t0 = MPI_Wtime();
        compute(sweeps);
        double took = MPI_Wtime() - t0;
        long next = took > 0 ? (long)((double)sweeps * seconds / took + 0.5) : sweeps * 2;
        sweeps = next < 1 ? 1 : next;
    }
    return sweeps;
}

#endif
