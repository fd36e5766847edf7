/*
 * Whether the memory behind a window changes how fast a put crosses hosts
 * (Open MPI on UCX): the same passive put and get, rank 0 to rank 1 (the
 * target waiting in a barrier), into a window made four ways, without
 * Tandem:
 *   allocate  MPI_Win_allocate
 *   create    MPI_Win_create over malloc'd memory
 *   shared    MPI_Win_create over MPI_Win_allocate_shared memory of the
 *             target's host (what a progress process exposes)
 *   mapped    MPI_Win_create over a MAP_SHARED mapping of a /dev/shm file
 * Medians of TRIALS put + flush (and get + flush) of SIZE bytes, in ms.
 * WAIT says how the target waits: "barrier" (MPI_Barrier), or "probe" (a
 * progress process's loop, rma/served.c: three MPI_Iprobe and an MPI_Test
 * of an MPI_Ibarrier, round and round).
 *
 *   window_memory SIZE TRIALS [barrier|probe]      (2 ranks, one per host)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long bytes = argc > 1 ? atol(argv[1]) : 4 << 20;
    int trials = argc > 2 ? atoi(argv[2]) : 11;
    int probe = argc > 3 && strcmp(argv[3], "probe") == 0;
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "window_memory: 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    char *local = malloc((size_t)bytes);
    memset(local, rank + 1, (size_t)bytes);
    double *t = malloc(sizeof(double) * (size_t)trials);
    MPI_Comm host;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host);
    static const char *const kinds[] = {"allocate", "create", "shared", "mapped"};
    for (int k = 0; k < 4; k++) {
        MPI_Win win, shared_win = MPI_WIN_NULL;
        void *base = NULL, *mapped = NULL;
        MPI_Aint mine = rank == 1 ? bytes : 0;
        char path[64];
        snprintf(path, sizeof path, "/dev/shm/window-memory-%d", (int)getpid());
        if (k == 0) {
            MPI_Win_allocate(mine, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        } else {
            if (k == 1 && mine)
                base = calloc(1, (size_t)mine);
            if (k == 2)
                MPI_Win_allocate_shared(mine, 1, MPI_INFO_NULL, host, &base, &shared_win);
            if (k == 3 && mine) {
                int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
                if (fd < 0 || ftruncate(fd, mine) != 0)
                    MPI_Abort(MPI_COMM_WORLD, 2);
                mapped = base = mmap(NULL, (size_t)mine, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                close(fd);
                unlink(path);
            }
            MPI_Win_create(base, mine, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        }
        for (int op = 0; op < 2; op++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 1 && probe) { /* as a progress process waits */
                MPI_Request end;
                int done = 0, flag;
                MPI_Ibarrier(MPI_COMM_WORLD, &end);
                while (!done) {
                    for (int tag = 1; tag <= 3; tag++)
                        MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                    MPI_Test(&end, &done, MPI_STATUS_IGNORE);
                }
                continue;
            }
            if (rank == 0) {
                MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
                for (int i = 0; i < trials + 1; i++) {
                    double t0 = MPI_Wtime();
                    if (op == 0)
                        MPI_Put(local, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
                    else
                        MPI_Get(local, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
                    MPI_Win_flush(1, win);
                    if (i > 0) /* the first warms the connection */
                        t[i - 1] = MPI_Wtime() - t0;
                }
                MPI_Win_unlock(1, win);
                printf("%-8s %s %ld bytes, target in %s: %.3f ms\n", kinds[k], op ? "get" : "put",
                       bytes, probe ? "probes" : "a barrier", 1e3 * median(t, trials));
                fflush(stdout);
                if (probe) { /* the target's MPI_Ibarrier: a nonblocking one */
                    MPI_Request end;
                    MPI_Ibarrier(MPI_COMM_WORLD, &end);
                    MPI_Wait(&end, MPI_STATUS_IGNORE);
                    continue;
                }
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        MPI_Win_free(&win);
        if (shared_win != MPI_WIN_NULL)
            MPI_Win_free(&shared_win);
        if (k == 1)
            free(base);
        if (mapped)
            munmap(mapped, (size_t)mine);
    }
    MPI_Comm_free(&host);
    free(t);
    free(local);
    MPI_Finalize();
    return 0;
}
