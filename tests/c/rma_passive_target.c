/* A passive target served while it computes: ranks in pairs, the even one
   the origin, the odd one the target. The target makes no MPI call until the
   origin's last put lands in its window (it reads its own window memory,
   which the unified memory model lets it); meanwhile the origin gets the
   window, adds to it with an accumulate and a fetch-and-op, all under
   exclusive locks, then puts the flag. An MPI library that serves one-sided
   operations only inside the target's calls (MPICH on one host) never lets
   the put land: the target gives up after TIMEOUT seconds and the test
   fails. Tandem's progress thread serves the window (TANDEM_PROGRESS=drive
   or proxy), or the progress processes serve it (TANDEM_GHOSTS, the
   MPI_Win_allocate window only). For each window flavour that exposes
   memory at creation (MPI_Win_allocate, MPI_Win_create), or the one named
   on the command line:

     rma_passive_target [allocate|create [SECONDS]]

   SECONDS: how long the target waits for the flag (default TIMEOUT), less
   where a run without Tandem is expected to fail. */
#define _POSIX_C_SOURCE 200809L
#include "testlib.h"

#include <time.h>

/* A check that says what was checked, failed or not. */
#define expect(cond, ...)                             \
    do {                                              \
        if (!(cond)) {                                \
            tlog("FAILED %s:%d", __FILE__, __LINE__); \
            tlog_failures++;                          \
        }                                             \
        tlog(__VA_ARGS__);                            \
    } while (0)

#define N 4096 /* longs: 32 KiB, above every eager limit */
/* The flag after the data, in a window of N + 8 longs: MPICH 4.0.2 alone, on
   4 ranks whose Win_allocate sizes are 0 and N + 1 longs (not a multiple of
   64 bytes), gave rank 2 a get from rank 3 that read zeros. */
enum { FLAG = N, WINDOW = N + 8, TIMEOUT = 60 };
static double timeout_s = TIMEOUT;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void pair(const char *flavour, int rank, int size)
{
    int partner = rank ^ 1;
    int active = partner < size;
    MPI_Aint bytes = active && rank % 2 ? (MPI_Aint)WINDOW * (MPI_Aint)sizeof(long) : 0;
    long *mem = NULL;
    MPI_Win win;
    if (flavour[0] == 'a') {
        check_mpi(MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    } else {
        mem = bytes ? malloc((size_t)bytes) : NULL;
        check_mpi(MPI_Win_create(mem, bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    }
    if (bytes) {
        check_mpi(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
        for (long i = 0; i < N; i++)
            mem[i] = rank * 100000L + i;
        mem[FLAG] = 0;
        check_mpi(MPI_Win_unlock(rank, win));
    }
    check_mpi(MPI_Barrier(MPI_COMM_WORLD));

    if (active && rank % 2) { /* the target: no MPI call until the flag lands */
        double deadline = now() + timeout_s;
        long seen = 0;
        while (!(seen = __atomic_load_n(&mem[FLAG], __ATOMIC_ACQUIRE)) && now() < deadline)
            ;
        expect(seen == 1, "%s: the origin's put landed while the target computed", flavour);
        check_mpi(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
        long expect = rank * 100000L + 7 + 5 + 2;
        expect(mem[7] == expect, "%s: accumulate and fetch-and-op applied once (%ld, expected %ld)",
               flavour, mem[7], expect);
        check_mpi(MPI_Win_unlock(rank, win));
    } else if (active) { /* the origin */
        long *got = malloc(N * sizeof(long));
        long five = 5, two = 2, old = -1, one = 1;
        check_mpi(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, partner, 0, win));
        check_mpi(MPI_Get(got, N, MPI_LONG, partner, 0, N, MPI_LONG, win));
        check_mpi(MPI_Accumulate(&five, 1, MPI_LONG, partner, 7, 1, MPI_LONG, MPI_SUM, win));
        check_mpi(MPI_Win_unlock(partner, win));
        long wrong = 0;
        for (long i = 0; i < N; i++)
            wrong += got[i] != partner * 100000L + i;
        expect(wrong == 0, "%s: the get read the target's window (%ld wrong)", flavour, wrong);
        check_mpi(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, partner, 0, win));
        check_mpi(MPI_Fetch_and_op(&two, &old, MPI_LONG, partner, 7, MPI_SUM, win));
        check_mpi(MPI_Win_unlock(partner, win));
        expect(old == partner * 100000L + 7 + 5, "%s: fetch-and-op fetched %ld", flavour, old);
        check_mpi(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, partner, 0, win));
        check_mpi(MPI_Put(&one, 1, MPI_LONG, partner, FLAG, 1, MPI_LONG, win));
        check_mpi(MPI_Win_unlock(partner, win));
        free(got);
    }
    check_mpi(MPI_Barrier(MPI_COMM_WORLD));
    check_mpi(MPI_Win_free(&win));
    if (flavour[0] == 'c')
        free(mem);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 2)
        timeout_s = atof(argv[2]);
    if (size < 2) {
        tlog("skipped: needs an origin and a target");
    } else {
        if (argc < 2 || strcmp(argv[1], "create") != 0)
            pair("allocate", rank, size);
        if (argc < 2 || strcmp(argv[1], "allocate") != 0)
            pair("create", rank, size);
    }
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
