/*
 * Helpers of the virtual ranks' transparency tests (tests/virt_compare.py):
 * programs built both as MPI processes and as virtual ranks, whose rank 0
 * prints every result. Functions only: the virtual ranks of a process share
 * its globals.
 */
#ifndef VIRT_TESTLIB_H
#define VIRT_TESTLIB_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* A non-commutative operation: the order of the reduction shows.
   (a0, a1) o (b0, b1) = (a0 * b0, a0 * b1 + a1), modulo a prime. */
static __attribute__((unused)) void affine(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    long *a = in, *b = inout;
    for (int i = 0; i < *len; i += 2) {
        long m = a[i] * b[i], c = a[i] * b[i + 1] + a[i + 1];
        b[i] = m % 1000003;
        b[i + 1] = c % 1000003;
    }
}

/* Rank 0 prints 'what' and the n values. */
static __attribute__((unused)) void print_longs(int rank, const char *what, const long *v, int n)
{
    if (rank != 0)
        return;
    printf("%s:", what);
    for (int i = 0; i < n; i++)
        printf(" %ld", v[i]);
    printf("\n");
}

/* n values of every rank, gathered and printed by rank 0. */
static __attribute__((unused)) void print_all(int rank, int size, const char *what, const long *v,
                                              int n)
{
    long *all = malloc(sizeof(long) * (size_t)(n * size + 1));
    MPI_Gather(v, n, MPI_LONG, all, n, MPI_LONG, 0, MPI_COMM_WORLD);
    print_longs(rank, what, all, n * size);
    free(all);
}

#endif
