/*
 * tandem_place_comm (tandem.h), linked with Tandem: a phase measured with
 * the program's view of the counters, in which rank r exchanges 1 MiB with
 * rank r ^ 2 and 1 KiB with the others, then a communicator renumbered from
 * it. Its group is the world's, each process has one rank in it, and on one
 * host every rank keeps its number (tests/python/test_hosts.py runs it on
 * two simulated hosts, where the heavy pairs come together).
 */
#include "tandem.h"
#include "testlib.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static char out[1 << 20], in[1 << 20];
    check(tandem_monitor_start() == MPI_SUCCESS);
    for (int peer = 0; peer < size; peer++) {
        if (peer == rank)
            continue;
        int bytes = peer == (rank ^ 2) ? (int)sizeof out : 1024;
        MPI_Sendrecv(out, bytes, MPI_BYTE, peer, 0, in, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    }
    check(tandem_monitor_stop() == MPI_SUCCESS);

    MPI_Comm placed;
    check(tandem_place_comm(MPI_COMM_WORLD, &placed) == MPI_SUCCESS);
    int new_rank, new_size, result;
    MPI_Comm_rank(placed, &new_rank);
    MPI_Comm_size(placed, &new_size);
    MPI_Comm_compare(MPI_COMM_WORLD, placed, &result);
    check(new_size == size && (result == MPI_CONGRUENT || result == MPI_SIMILAR));
    int sum = 0;
    MPI_Allreduce(&new_rank, &sum, 1, MPI_INT, MPI_SUM, placed);
    check(sum == size * (size - 1) / 2);
    char host[MPI_MAX_PROCESSOR_NAME];
    int length;
    MPI_Get_processor_name(host, &length);
    int heavy = new_rank ^ 2, same = -1;
    if (heavy < size) { /* whether the heavy partner of the new rank shares my host */
        char other[MPI_MAX_PROCESSOR_NAME] = "";
        MPI_Sendrecv(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, heavy, 1, other,
                     MPI_MAX_PROCESSOR_NAME, MPI_CHAR, heavy, 1, placed, MPI_STATUS_IGNORE);
        same = strcmp(host, other) == 0;
    }
    tlog("rank %d: heavy partner on my host: %s", new_rank,
         same < 0 ? "none"
         : same   ? "yes"
                  : "no");
    MPI_Comm bad;
    check(tandem_place_comm(MPI_COMM_NULL, &bad) == MPI_ERR_COMM);
    MPI_Comm_free(&placed);
    int failed = tfinish();
    MPI_Finalize();
    return failed;
}
