/*
 * Collectives moved by any MPI call. Each step posts a nonblocking broadcast,
 * allreduce and barrier, then calls only MPI_Request_get_status (which never
 * completes a request) until all three are done, and frees them with
 * MPI_Waitall only then. With Tandem the schedules' later rounds are started
 * by the progress thread or by those calls; run with a slow progress thread
 * (TANDEM_POLL=event over shared memory: it polls on its timer), the calls
 * must finish some of them, which the run with TANDEM_VERBOSE=2 reports ("N
 * finished in application calls").
 *
 * Printed: per step kind, the checksums of the results, the same with and
 * without Tandem.
 */
#include "testlib.h"

enum { STEPS = 300, COUNT = 3000 };

int main(int argc, char **argv)
{
    int rank, size, left, right;
    tinit(&argc, &argv, &rank, &size, &left, &right);
    int *data = malloc(sizeof(int) * COUNT), *sums = malloc(sizeof(int) * COUNT);
    long polls = 0;
    unsigned long bcast_sum = 0, reduce_sum = 0;
    for (int step = 0; step < STEPS; step++) {
        int root = step % size;
        for (int i = 0; i < COUNT; i++) {
            data[i] = rank == root ? step * 7 + i : -1;
            sums[i] = rank + i + step;
        }
        MPI_Request requests[3];
        check_mpi(MPI_Ibcast(data, COUNT, MPI_INT, root, MPI_COMM_WORLD, &requests[0]));
        check_mpi(MPI_Iallreduce(MPI_IN_PLACE, sums, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                 &requests[1]));
        check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &requests[2]));
        for (int done = 0; done < 3;) {
            done = 0;
            for (int k = 0; k < 3; k++) {
                int flag = 0;
                check_mpi(MPI_Request_get_status(requests[k], &flag, MPI_STATUS_IGNORE));
                done += flag;
            }
            polls++;
        }
        check_mpi(MPI_Waitall(3, requests, MPI_STATUSES_IGNORE));
        for (int i = 0; i < COUNT; i++) {
            check(data[i] == step * 7 + i);
            check(sums[i] == size * (size - 1) / 2 + size * (i + step));
        }
        bcast_sum += tsum(data, sizeof(int) * COUNT);
        reduce_sum += tsum(sums, sizeof(int) * COUNT);
    }
    tlog("rank %d: %d steps, broadcast %lx, allreduce %lx, polled: %s", rank, STEPS, bcast_sum,
         reduce_sum, polls >= STEPS ? "yes" : "no");
    free(data);
    free(sums);
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
