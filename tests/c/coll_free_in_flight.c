/*
 * A communicator freed while nonblocking collectives on it are in flight:
 * MPI_Comm_free only marks it for deallocation, and the operations pending
 * on it complete normally. Each round makes a duplicate of MPI_COMM_WORLD,
 * posts a broadcast, an allreduce, an all-to-all and a barrier on it (small
 * ones, which fit Tandem's shared-memory slots, and large ones, which are
 * point-to-point schedules), frees it, and only then waits for them.
 *
 * Printed: each rank's checksums of the results, checked against what they
 * must be. Open MPI 4.1.4's own nonblocking collectives crash here (a
 * segmentation fault in libnbc's progress), so under Open MPI the test runs
 * with Tandem only (tests/CMakeLists.txt).
 */
#include "testlib.h"

enum { ROUNDS = 6 };

int main(int argc, char **argv)
{
    int rank, size, left, right;
    tinit(&argc, &argv, &rank, &size, &left, &right);
    for (int round = 0; round < ROUNDS; round++) {
        int n = round % 2 ? 1 << 18 : 64; /* ints: past the slots, or within them */
        int *bcast = malloc(sizeof(int) * (size_t)n);
        int *mine = malloc(sizeof(int) * (size_t)n), *sum = malloc(sizeof(int) * (size_t)n);
        int *out = malloc(sizeof(int) * (size_t)size * 4),
            *in = malloc(sizeof(int) * (size_t)size * 4);
        for (int i = 0; i < n; i++) {
            bcast[i] = rank == round % size ? 3 * i + round : -1;
            mine[i] = i + rank;
        }
        for (int i = 0; i < 4 * size; i++)
            out[i] = 100 * rank + i;
        MPI_Comm comm;
        MPI_Request requests[4];
        check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
        check_mpi(MPI_Ibcast(bcast, n, MPI_INT, round % size, comm, &requests[0]));
        check_mpi(MPI_Iallreduce(mine, sum, n, MPI_INT, MPI_SUM, comm, &requests[1]));
        check_mpi(MPI_Ialltoall(out, 4, MPI_INT, in, 4, MPI_INT, comm, &requests[2]));
        check_mpi(MPI_Ibarrier(comm, &requests[3]));
        check_mpi(MPI_Comm_free(&comm));
        check(comm == MPI_COMM_NULL);
        check_mpi(MPI_Waitall(4, requests, MPI_STATUSES_IGNORE));
        for (int i = 0; i < n; i++) {
            check(bcast[i] == 3 * i + round);
            check(sum[i] == size * i + size * (size - 1) / 2);
            if (bcast[i] != 3 * i + round || sum[i] != size * i + size * (size - 1) / 2)
                break;
        }
        for (int peer = 0; peer < size; peer++)
            for (int k = 0; k < 4; k++)
                check(in[4 * peer + k] == 100 * peer + 4 * rank + k);
        tlog("rank %d round %d: %lx %lx %lx", rank, round, tsum(bcast, sizeof(int) * (size_t)n),
             tsum(sum, sizeof(int) * (size_t)n), tsum(in, sizeof(int) * (size_t)size * 4));
        free(bcast);
        free(mine);
        free(sum);
        free(out);
        free(in);
    }
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
