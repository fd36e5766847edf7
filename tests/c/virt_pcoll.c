/*
 * Persistent collectives (MPI-4: MPI_Bcast_init and the rest) for the
 * virtual ranks' transparency test (tests/virt_compare.py). Built with
 * `tandem cc`'s header (TANDEM_VIRT_MPI_H), each request is made once and
 * started three times with new data (MPI_Start, then MPI_Startall),
 * completed by MPI_Wait, MPI_Waitall and MPI_Test loops, and freed. The
 * reference, built against the real MPI, runs the nonblocking collectives
 * with the same arguments at each start: MPICH 4.0.2's own persistent
 * collectives send stale data from their second start on (scatter,
 * allgather) and hang in MPI_Wait on an inactive request. Both print the
 * same. Open MPI 4.1's mpi.h has no persistent collective: there both
 * builds print one line saying so.
 */
#include "virt_testlib.h"

#if MPI_VERSION >= 4

enum { COLLECTIVES = 9 };

/* What every start reads and writes. */
typedef struct {
    long b[2], mine[2], sum[2], chain[2], prefix[2], one, part;
    long *gathered, *scattered, *send, *recv, *all;
    int *counts, *displs;
    MPI_Datatype pair;
    MPI_Op op;
    int root;
} buffers;

#ifdef TANDEM_VIRT_MPI_H
/* The persistent requests, made once. */
static void make(buffers *x, MPI_Request *reqs)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info none = MPI_INFO_NULL;
    MPI_Request never;
    MPI_Barrier_init(w, none, &never);
    MPI_Request_free(&never); /* never started */
    MPI_Bcast_init(x->b, 2, MPI_LONG, x->root, w, none, &reqs[0]);
    MPI_Allreduce_init(x->mine, x->sum, 2, MPI_LONG, MPI_SUM, w, none, &reqs[1]);
    MPI_Reduce_init(x->mine, x->chain, 1, x->pair, x->op, 0, w, none, &reqs[2]);
    MPI_Scatter_init(x->send, 1, MPI_LONG, x->scattered, 1, MPI_LONG, x->root, w, none, &reqs[3]);
    MPI_Gatherv_init(&x->one, 1, MPI_LONG, x->gathered, x->counts, x->displs, MPI_LONG, 0, w, none,
                     &reqs[4]);
    MPI_Alltoall_init(x->send, 1, MPI_LONG, x->recv, 1, MPI_LONG, w, none, &reqs[5]);
    MPI_Exscan_init(x->mine, x->prefix, 2, MPI_LONG, MPI_SUM, w, none, &reqs[6]);
    MPI_Reduce_scatter_block_init(x->send, &x->part, 1, MPI_LONG, MPI_MAX, w, none, &reqs[7]);
    MPI_Allgather_init(&x->one, 1, MPI_LONG, x->all, 1, MPI_LONG, w, none, &reqs[8]);
}

static void begin(buffers *x, MPI_Request *reqs, int i)
{
    (void)x;
    MPI_Start(&reqs[i]);
}

static void begin_all(buffers *x, MPI_Request *reqs)
{
    (void)x;
    MPI_Startall(COLLECTIVES, reqs);
}

static void release(MPI_Request *reqs)
{
    for (int i = 0; i < COLLECTIVES; i++)
        MPI_Request_free(&reqs[i]);
}
#else
/* The reference: the same collectives, nonblocking, started anew. */
static void make(buffers *x, MPI_Request *reqs)
{
    (void)x;
    (void)reqs;
}

static void begin(buffers *x, MPI_Request *reqs, int i)
{
    MPI_Comm w = MPI_COMM_WORLD;
    switch (i) {
    case 0: MPI_Ibcast(x->b, 2, MPI_LONG, x->root, w, &reqs[0]); break;
    case 1: MPI_Iallreduce(x->mine, x->sum, 2, MPI_LONG, MPI_SUM, w, &reqs[1]); break;
    case 2: MPI_Ireduce(x->mine, x->chain, 1, x->pair, x->op, 0, w, &reqs[2]); break;
    case 3:
        MPI_Iscatter(x->send, 1, MPI_LONG, x->scattered, 1, MPI_LONG, x->root, w, &reqs[3]);
        break;
    case 4:
        MPI_Igatherv(&x->one, 1, MPI_LONG, x->gathered, x->counts, x->displs, MPI_LONG, 0, w,
                     &reqs[4]);
        break;
    case 5: MPI_Ialltoall(x->send, 1, MPI_LONG, x->recv, 1, MPI_LONG, w, &reqs[5]); break;
    case 6: MPI_Iexscan(x->mine, x->prefix, 2, MPI_LONG, MPI_SUM, w, &reqs[6]); break;
    case 7: MPI_Ireduce_scatter_block(x->send, &x->part, 1, MPI_LONG, MPI_MAX, w, &reqs[7]); break;
    default: MPI_Iallgather(&x->one, 1, MPI_LONG, x->all, 1, MPI_LONG, w, &reqs[8]); break;
    }
}

static void begin_all(buffers *x, MPI_Request *reqs)
{
    for (int i = 0; i < COLLECTIVES; i++)
        begin(x, reqs, i);
}

static void release(MPI_Request *reqs)
{
    (void)reqs; /* completed nonblocking requests are gone */
}
#endif

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    buffers x = {.root = size - 1};
    MPI_Op_create(affine, 0, &x.op);
    MPI_Type_contiguous(2, MPI_LONG, &x.pair); /* the operation takes pairs of longs */
    MPI_Type_commit(&x.pair);
    size_t n = (size_t)size;
    x.gathered = calloc(n, sizeof(long));
    x.scattered = calloc(n, sizeof(long));
    x.send = calloc(n, sizeof(long));
    x.recv = calloc(n, sizeof(long));
    x.all = calloc(n, sizeof(long));
    x.counts = malloc(sizeof(int) * n);
    x.displs = malloc(sizeof(int) * n);
    for (int i = 0; i < size; i++) {
        x.counts[i] = 1;
        x.displs[i] = size - 1 - i; /* reversed: the displacements count */
    }
    MPI_Request reqs[COLLECTIVES];
    make(&x, reqs);

    for (int round = 0; round < 3; round++) {
        x.b[0] = x.b[1] = 0;
        if (rank == x.root)
            x.b[0] = 10 * round + 1, x.b[1] = 10 * round + 2;
        x.mine[0] = rank + 2 + round;
        x.mine[1] = rank + 1;
        x.one = (long)(rank + round) * (rank + round);
        for (int i = 0; i < size; i++)
            x.send[i] = 100 * round + rank * 10 + i;
        MPI_Status status;
        if (round == 0) {
            /* one by one, each completed by MPI_Wait */
            for (int i = 0; i < COLLECTIVES; i++) {
                begin(&x, reqs, i);
                MPI_Wait(&reqs[i], &status);
            }
        } else if (round == 1) {
            begin_all(&x, reqs);
            MPI_Waitall(COLLECTIVES, reqs, MPI_STATUSES_IGNORE);
        } else {
            begin_all(&x, reqs);
            for (int i = 0; i < COLLECTIVES; i++)
                for (int flag = 0; !flag;)
                    MPI_Test(&reqs[i], &flag, &status);
        }
        long zero[2] = {0, 0};
        char what[64];
        snprintf(what, sizeof what, "round %d bcast", round);
        print_longs(rank, what, x.b, 2);
        snprintf(what, sizeof what, "round %d allreduce", round);
        print_all(rank, size, what, x.sum, 2);
        snprintf(what, sizeof what, "round %d reduce (non-commutative)", round);
        print_longs(rank, what, x.chain, 2);
        snprintf(what, sizeof what, "round %d scatter", round);
        print_all(rank, size, what, x.scattered, 1);
        snprintf(what, sizeof what, "round %d gatherv", round);
        print_longs(rank, what, x.gathered, size);
        snprintf(what, sizeof what, "round %d alltoall", round);
        print_all(rank, size, what, x.recv, size);
        snprintf(what, sizeof what, "round %d exscan", round);
        print_all(rank, size, what, rank == 0 ? zero : x.prefix, 2);
        snprintf(what, sizeof what, "round %d reduce_scatter_block", round);
        print_all(rank, size, what, &x.part, 1);
        snprintf(what, sizeof what, "round %d allgather", round);
        print_all(rank, size, what, x.all, size);
    }
    release(reqs);
    MPI_Type_free(&x.pair);
    MPI_Op_free(&x.op);
    free(x.gathered);
    free(x.scattered);
    free(x.send);
    free(x.recv);
    free(x.all);
    free(x.counts);
    free(x.displs);
    MPI_Finalize();
    return 0;
}

#else

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("persistent collectives: not in this MPI (MPI %d.%d)\n", MPI_VERSION,
               MPI_SUBVERSION);
    MPI_Finalize();
    return 0;
}

#endif
