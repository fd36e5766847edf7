/* The median of the benchmark programs: a robust summary of repeated trials. */
#ifndef TDM_BENCH_STATS_H
#define TDM_BENCH_STATS_H

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

#endif
