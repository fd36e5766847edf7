/*
 * Datatypes and operations freed while nonblocking collectives that use them
 * are in flight: MPI_Type_free and MPI_Op_free only mark an object for
 * deallocation, and the pending operations complete normally. Each round
 * posts a gather, an allgather and an all-to-all of a derived datatype, an
 * allreduce with a user-defined commutative operation and a reduce with a
 * user-defined non-commutative one on that datatype, frees the datatype and
 * both operations, computes, and only then waits. Small rounds fit Tandem's
 * shared-memory slots, large ones are point-to-point schedules of several
 * rounds.
 *
 * Printed: each rank's checksums of the results, checked against what they
 * must be.
 */
#include "testlib.h"

enum { ROUNDS = 6 };

static int elements; /* ints in a block of this round */

/* inout = in + inout, element-wise, on blocks of 'elements' ints. */
static void add_ints(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int per = *type == MPI_INT ? 1 : elements;
    for (int i = 0; i < *len * per; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* a op b = a: the reduction in rank order keeps rank 0's block. */
static void keep_first(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int per = *type == MPI_INT ? 1 : elements;
    memcpy(inout, in, sizeof(int) * (size_t)(*len * per));
}

static int value(int r, int i)
{
    return 7 * r + i;
}

int main(int argc, char **argv)
{
    int rank, size, left, right;
    tinit(&argc, &argv, &rank, &size, &left, &right);
    for (int round = 0; round < ROUNDS; round++) {
        int n = elements = round % 2 ? 1 << 15 : 16; /* past the slots, or within them */
        int root = round % size;
        size_t block = sizeof(int) * (size_t)n;
        int *mine = malloc(block), *sum = malloc(block), *first = malloc(block);
        int *all = malloc(block * (size_t)size), *every = malloc(block * (size_t)size);
        int *out = malloc(block * (size_t)size), *in = malloc(block * (size_t)size);
        for (int i = 0; i < n; i++) {
            mine[i] = value(rank, i);
            for (int r = 0; r < size; r++)
                out[r * n + i] = value(rank, i) + 1000 * r;
        }
        MPI_Datatype type;
        MPI_Op add, keep;
        MPI_Request requests[5];
        check_mpi(MPI_Type_contiguous(n, MPI_INT, &type));
        check_mpi(MPI_Type_commit(&type));
        check_mpi(MPI_Op_create(add_ints, 1, &add));
        check_mpi(MPI_Op_create(keep_first, 0, &keep));
        check_mpi(MPI_Igather(mine, 1, type, all, 1, type, root, MPI_COMM_WORLD, &requests[0]));
        check_mpi(MPI_Iallgather(mine, 1, type, every, 1, type, MPI_COMM_WORLD, &requests[1]));
        check_mpi(MPI_Ialltoall(out, 1, type, in, 1, type, MPI_COMM_WORLD, &requests[2]));
        check_mpi(MPI_Iallreduce(mine, sum, n, MPI_INT, add, MPI_COMM_WORLD, &requests[3]));
        check_mpi(MPI_Ireduce(mine, first, 1, type, keep, root, MPI_COMM_WORLD, &requests[4]));
        check_mpi(MPI_Type_free(&type));
        check_mpi(MPI_Op_free(&add));
        check_mpi(MPI_Op_free(&keep));
        check(type == MPI_DATATYPE_NULL && add == MPI_OP_NULL && keep == MPI_OP_NULL);
        volatile double work = 0; /* the collectives move meanwhile, or not */
        for (int i = 0; i < 200000; i++)
            work += i * 0.5;
        check_mpi(MPI_Waitall(5, requests, MPI_STATUSES_IGNORE));
        int bad = 0;
        for (int i = 0; i < n && !bad; i++) {
            int total = 0;
            for (int r = 0; r < size; r++) {
                total += value(r, i);
                bad |= every[r * n + i] != value(r, i);
                bad |= in[r * n + i] != value(r, i) + 1000 * rank;
                bad |= rank == root && all[r * n + i] != value(r, i);
            }
            bad |= sum[i] != total;
            bad |= rank == root && first[i] != value(0, i);
        }
        check(!bad);
        tlog("rank %d round %d: %lx %lx %lx %lx", rank, round,
             rank == root ? tsum(all, block * (size_t)size) : 0UL,
             tsum(every, block * (size_t)size), tsum(in, block * (size_t)size), tsum(sum, block));
        free(mine);
        free(sum);
        free(first);
        free(all);
        free(every);
        free(out);
        free(in);
    }
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
