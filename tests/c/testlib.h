/*
 * Helpers of the MPI test programs. Each rank records lines with tlog(); at the
 * end tfinish() gathers them and rank 0 prints them in rank order, so that the
 * output is deterministic and can be compared between a run with and a run
 * without Tandem. check() records a failure and makes the program exit 1.
 */
#ifndef TESTLIB_H
#define TESTLIB_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tlog_buffer[1 << 16];
static size_t tlog_used;
static int tlog_failures;

static void tlog(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static void tlog(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tlog_buffer + tlog_used, sizeof tlog_buffer - tlog_used, fmt, ap);
    va_end(ap);
    if (n > 0 && tlog_used + (size_t)n + 1 < sizeof tlog_buffer) {
        tlog_used += (size_t)n;
        tlog_buffer[tlog_used++] = '\n';
        tlog_buffer[tlog_used] = '\0';
    }
}

#define check(cond)                                              \
    do {                                                         \
        if (!(cond)) {                                           \
            tlog("FAILED %s:%d: %s", __FILE__, __LINE__, #cond); \
            tlog_failures++;                                     \
        }                                                        \
    } while (0)

#define check_mpi(call)                                                                 \
    do {                                                                                \
        int check_rc_ = (call);                                                         \
        if (check_rc_ != MPI_SUCCESS) {                                                 \
            tlog("FAILED %s:%d: %s returned %d", __FILE__, __LINE__, #call, check_rc_); \
            tlog_failures++;                                                            \
        }                                                                               \
    } while (0)

/* MPI_Init, then this rank, the number of ranks and the neighbours on a ring. */
static void tinit(int *argc, char ***argv, int *rank, int *size, int *left, int *right)
    __attribute__((unused));
static void tinit(int *argc, char ***argv, int *rank, int *size, int *left, int *right)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    *right = (*rank + 1) % *size;
    *left = (*rank + *size - 1) % *size;
}

/* A simple checksum of a buffer, to print instead of the data. */
static unsigned long tsum(const void *data, size_t bytes) __attribute__((unused));
static unsigned long tsum(const void *data, size_t bytes)
{
    const unsigned char *p = data;
    unsigned long h = 1469598103UL;
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ p[i]) * 16777619UL;
    return h;
}

/* Gather every rank's lines to rank 0, print them there, and return the exit
   status of the program (1 if any rank failed a check). Collective. */
static int tfinish(void) __attribute__((unused));
static int tfinish(void)
{
    int rank, size, failures = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int len = (int)tlog_used;
    int *lens = malloc(sizeof(int) * (size_t)size);
    int *displs = malloc(sizeof(int) * (size_t)size);
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int total = 0;
    if (rank == 0)
        for (int i = 0; i < size; i++) {
            displs[i] = total;
            total += lens[i];
        }
    char *all = malloc((size_t)total + 1);
    MPI_Gatherv(tlog_buffer, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Reduce(&tlog_failures, &failures, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < size; i++) {
            printf("== rank %d\n", i);
            fwrite(all + displs[i], 1, (size_t)lens[i], stdout);
        }
        printf("== %s\n", failures ? "FAILED" : "ok");
        fflush(stdout);
    }
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(all);
    free(lens);
    free(displs);
    return failures ? 1 : 0;
}

#endif
