/*
 * An MPI hello world that checks the job it runs in: every rank passes 1 MiB
 * to the next one around a ring and checks what it got, an MPI_Allreduce
 * sums the ranks, and rank 0 prints one JSON object with the library's
 * version, the thread level granted, whether Tandem is loaded and active,
 * and where each rank runs (its host, its CPU, and how many CPUs it may run
 * on: 1 when the launcher bound it to a core).
 *
 *   tandem-hello
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Tandem's API when Tandem is loaded (preloaded or linked), else NULL. */
extern const char *tandem_version(void) __attribute__((weak));
extern int tandem_active(void) __attribute__((weak));

enum { RING_BYTES = 1 << 20, NAME_BYTES = 64 };

int main(int argc, char **argv)
{
    int provided, rank, size, len;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    unsigned char *out = malloc(RING_BYTES), *in = malloc(RING_BYTES);
    for (int i = 0; i < RING_BYTES; i++)
        out[i] = (unsigned char)(rank + i);
    int next = (rank + 1) % size, previous = (rank + size - 1) % size, wrong = 0;
    MPI_Sendrecv(out, RING_BYTES, MPI_BYTE, next, 1, in, RING_BYTES, MPI_BYTE, previous, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < RING_BYTES; i++)
        wrong += in[i] != (unsigned char)(previous + i);
    int sum = 0, wrong_ring = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce(&wrong, &wrong_ring, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);

    cpu_set_t allowed;
    int place[2] = {sched_getcpu(), 0}; /* CPU now, CPUs allowed */
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        place[1] = CPU_COUNT(&allowed);
    int *places = rank == 0 ? malloc(sizeof place * (size_t)size) : NULL;
    MPI_Gather(place, 2, MPI_INT, places, 2, MPI_INT, 0, MPI_COMM_WORLD);
    char name[NAME_BYTES] = "", *names = rank == 0 ? malloc(NAME_BYTES * (size_t)size) : NULL;
    gethostname(name, sizeof name - 1);
    name[strcspn(name, "\"\\")] = '\0';
    MPI_Gather(name, NAME_BYTES, MPI_CHAR, names, NAME_BYTES, MPI_CHAR, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING], host[256] = "";
        MPI_Get_library_version(version, &len);
        version[strcspn(version, "\n,\"\\")] = '\0';
        for (char *c = version; *c; c++)
            *c = *c == '\t' ? ' ' : *c; /* JSON strings hold no tabs */
        gethostname(host, sizeof host - 1);
        host[strcspn(host, "\"\\")] = '\0';
        printf("{\"ranks\": %d, \"host\": \"%s\", \"library\": \"%s\", \"thread_level\": %d, "
               "\"tandem\": \"%s\", \"tandem_active\": %d, \"ring\": \"%s\", "
               "\"allreduce\": \"%s\", \"cpu\": [",
               size, host, version, provided, tandem_version ? tandem_version() : "",
               tandem_active ? tandem_active() : 0, wrong_ring ? "wrong bytes" : "ok",
               sum == size * (size - 1) / 2 ? "ok" : "wrong sum");
        for (int r = 0; r < size; r++)
            printf("%s%d", r ? ", " : "", places[2 * r]);
        printf("], \"cpus_allowed\": [");
        for (int r = 0; r < size; r++)
            printf("%s%d", r ? ", " : "", places[2 * r + 1]);
        printf("], \"hosts\": [");
        for (int r = 0; r < size; r++)
            printf("%s\"%s\"", r ? ", " : "", names + NAME_BYTES * r);
        printf("]}\n");
        fflush(stdout);
    }
    free(places);
    free(names);
    free(out);
    free(in);
    MPI_Finalize();
    return wrong || sum != size * (size - 1) / 2 ? 1 : 0;
}
