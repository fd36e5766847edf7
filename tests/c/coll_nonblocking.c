/*
 * Nonblocking collectives, many in flight at once and completed in any order:
 * MPI_Ibcast over sizes 0, 1, odd and 1 MiB, every root, predefined and
 * derived datatypes, on MPI_COMM_WORLD and on sub-communicators of odd and
 * even ranks; MPI_Ibarrier; then 1000 small collectives in flight on one
 * communicator completed in reverse order. The output (checksums) must be
 * the MPI library's, with and without TANDEM_COLL=tandem.
 */
#include "testlib.h"

enum { MANY = 1000 };

static void fill(unsigned char *buf, size_t bytes, int seed)
{
    for (size_t i = 0; i < bytes; i++)
        buf[i] = (unsigned char)(seed * 31 + i * 7);
}

/* Ibcast of each size from each root, all posted before any completes. */
static void bcasts(MPI_Comm comm, const char *name)
{
    static const int counts[] = {0, 1, 7, 1000, 1 << 18};
    enum { NCOUNTS = sizeof counts / sizeof counts[0] };
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Datatype vector; /* every other int */
    MPI_Type_vector(16, 1, 2, MPI_INT, &vector);
    MPI_Type_commit(&vector);
    int n = NCOUNTS * size + size;
    MPI_Request *requests = malloc(sizeof(MPI_Request) * (size_t)n);
    int **buffers = malloc(sizeof(int *) * (size_t)n);
    int k = 0;
    for (int root = 0; root < size; root++) {
        for (int c = 0; c < NCOUNTS; c++, k++) {
            buffers[k] = calloc((size_t)counts[c] + 1, sizeof(int));
            if (rank == root)
                fill((unsigned char *)buffers[k], sizeof(int) * (size_t)counts[c], root + c);
            check_mpi(MPI_Ibcast(buffers[k], counts[c], MPI_INT, root, comm, &requests[k]));
        }
        buffers[k] = calloc(64, sizeof(int));
        if (rank == root)
            fill((unsigned char *)buffers[k], 64 * sizeof(int), 100 + root);
        check_mpi(MPI_Ibcast(buffers[k], 2, vector, root, comm, &requests[k]));
        k++;
    }
    /* Complete in reverse order, one at a time. */
    for (int i = n - 1; i >= 0; i--)
        check_mpi(MPI_Wait(&requests[i], MPI_STATUS_IGNORE));
    k = 0;
    for (int root = 0; root < size; root++) {
        for (int c = 0; c < NCOUNTS; c++, k++) {
            tlog("%s ibcast root %d count %d: %lu", name, root, counts[c],
                 tsum(buffers[k], sizeof(int) * (size_t)counts[c]));
            free(buffers[k]);
        }
        tlog("%s ibcast root %d vector: %lu", name, root, tsum(buffers[k], 64 * sizeof(int)));
        free(buffers[k++]);
    }
    MPI_Type_free(&vector);
    free(requests);
    free(buffers);
}

int main(int argc, char **argv)
{
    int rank, size, left, right;
    tinit(&argc, &argv, &rank, &size, &left, &right);

    bcasts(MPI_COMM_WORLD, "world");
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    bcasts(half, rank % 2 ? "odd" : "even");

    /* A barrier orders: what a rank sent before it is there after it. */
    int token = rank, got = -1;
    MPI_Request r[3];
    MPI_Irecv(&got, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(&token, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &r[2]));
    check_mpi(MPI_Wait(&r[2], MPI_STATUS_IGNORE));
    tlog("ibarrier after a ring: got %d", got);

    /* Many in flight on one communicator, completed in reverse order. */
    MPI_Request *many = malloc(sizeof(MPI_Request) * MANY);
    int *values = malloc(sizeof(int) * MANY);
    for (int i = 0; i < MANY; i++) {
        values[i] = rank == i % size ? i : -1;
        if (i % 3 == 0)
            check_mpi(MPI_Ibarrier(half, &many[i]));
        else
            check_mpi(MPI_Ibcast(&values[i], 1, MPI_INT, i % size, MPI_COMM_WORLD, &many[i]));
    }
    int flag = 0, correct = 0;
    while (!flag)
        check_mpi(MPI_Testall(MANY, many, &flag, MPI_STATUSES_IGNORE));
    for (int i = 0; i < MANY; i++)
        correct += i % 3 == 0 || values[i] == i;
    tlog("%d collectives in flight: %d right", MANY, correct);
    check(correct == MANY);
    free(many);
    free(values);
    MPI_Comm_free(&half);

    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
