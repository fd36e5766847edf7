/* Ranks on several hosts (tandem run --hosts; tests/python/test_hosts.py).

     test_hosts HOSTS [p2p|world|node]

   Every rank checks that the MPI library sees HOSTS nodes: as many distinct
   processor names, and as many shared-memory domains
   (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)), each of the same ranks as a
   processor name. Then, by the second argument (default p2p):

   p2p    each rank exchanges messages of every size class, 0 B to 4 MiB
          (each MPI's short, eager and rendezvous protocols), blocking and
          nonblocking, with its partner half a world away (on the other
          host when the ranks are placed block-wise on 2 hosts) and with its
          neighbour (rank ^ 1), checked byte by byte;
   world  collectives on MPI_COMM_WORLD, across the hosts;
   node   the same collectives on the node's communicator, within each host.

   The output is the same on any number of hosts (rank 0 prints the number
   of nodes it found only when it differs from HOSTS), so that a run on
   several hosts compares with one on a single host (with HOSTS 1). */
#include "testlib.h"

#define NSIZES 13
static const int sizes[NSIZES] = {0,     1,     8,      64,     1024,    4096,   12288,
                                  65535, 65536, 262144, 262145, 1 << 20, 4 << 20};

static unsigned char pattern(int sender, int k, int i)
{
    return (unsigned char)(i * 31 + sender * 7 + k);
}

static void fill_from(unsigned char *buf, int sender, int k, int n)
{
    for (int i = 0; i < n; i++)
        buf[i] = pattern(sender, k, i);
}

static int wrong_bytes(const unsigned char *buf, int sender, int k, int n)
{
    int wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += buf[i] != pattern(sender, k, i);
    return wrong;
}

/* The number of nodes by processor name and by shared-memory domain, which
   must group the same ranks. No collective runs on the node's communicator
   here: in the modes p2p and world, none of Tandem's collectives may take
   the shared-memory slots (tests/python/test_hosts.py counts them). */
static void check_nodes(int hosts)
{
    int rank, size, length;
    char name[MPI_MAX_PROCESSOR_NAME] = "";
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_mpi(MPI_Get_processor_name(name, &length));
    char *names = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
    check_mpi(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME,
                            MPI_CHAR, MPI_COMM_WORLD));
    int distinct = 0, first_of_mine = -1;
    for (int r = 0; r < size; r++) {
        int seen = 0;
        for (int q = 0; q < r; q++)
            seen |= strcmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME,
                           names + (size_t)q * MPI_MAX_PROCESSOR_NAME) == 0;
        distinct += !seen;
        if (first_of_mine < 0 && strcmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME, name) == 0)
            first_of_mine = r;
    }
    MPI_Comm node;
    int node_rank, leaders = 0, node_first = -1;
    check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, &node_rank);
    int leader = node_rank == 0;
    check_mpi(MPI_Allreduce(&leader, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MPI_Group world_group, node_group;
    int zero = 0;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_group(node, &node_group); /* in world order (key 0): its rank 0 is its first */
    check_mpi(MPI_Group_translate_ranks(node_group, 1, &zero, world_group, &node_first));
    MPI_Group_free(&node_group);
    MPI_Group_free(&world_group);
    if (distinct != hosts || leaders != hosts)
        tlog("%d processor names and %d shared-memory nodes, expected %d", distinct, leaders,
             hosts);
    check(distinct == hosts && leaders == hosts);
    check(node_first == first_of_mine); /* a node is the ranks of one processor name */
    MPI_Comm_free(&node);
    free(names);
}

/* Messages of every size to 'peer' and back from it, blocking and then
   nonblocking (all sizes in flight at once), checked byte by byte. */
static void exchange(int peer, int rank, const char *what)
{
    if (peer < 0 || peer == rank)
        return;
    size_t at[NSIZES + 1] = {0}; /* size k's place in the buffers */
    for (int k = 0; k < NSIZES; k++)
        at[k + 1] = at[k] + (size_t)sizes[k];
    unsigned char *out = malloc(at[NSIZES]), *in = malloc(at[NSIZES]);
    MPI_Request requests[2 * NSIZES];
    MPI_Status status;
    int wrong = 0, count;
    for (int k = 0; k < NSIZES; k++) { /* the lower rank sends first */
        fill_from(out, rank, k, sizes[k]);
        memset(in, 0, (size_t)sizes[k]);
        for (int turn = 0; turn < 2; turn++) {
            if ((turn == 0) == (rank < peer))
                check_mpi(MPI_Send(out, sizes[k], MPI_BYTE, peer, k, MPI_COMM_WORLD));
            else
                check_mpi(MPI_Recv(in, sizes[k], MPI_BYTE, peer, k, MPI_COMM_WORLD, &status));
        }
        MPI_Get_count(&status, MPI_BYTE, &count);
        check(count == sizes[k]);
        wrong += wrong_bytes(in, peer, k, sizes[k]);
    }
    for (int k = 0; k < NSIZES; k++) {
        fill_from(out + at[k], rank, NSIZES + k, sizes[k]);
        check_mpi(MPI_Irecv(in + at[k], sizes[k], MPI_BYTE, peer, k, MPI_COMM_WORLD, &requests[k]));
        check_mpi(MPI_Isend(out + at[k], sizes[k], MPI_BYTE, peer, k, MPI_COMM_WORLD,
                            &requests[NSIZES + k]));
    }
    check_mpi(MPI_Waitall(2 * NSIZES, requests, MPI_STATUSES_IGNORE));
    for (int k = 0; k < NSIZES; k++)
        wrong += wrong_bytes(in + at[k], peer, NSIZES + k, sizes[k]);
    tlog("%s: %d sizes of 0 B to %d B both ways, %d bytes wrong", what, NSIZES, sizes[NSIZES - 1],
         wrong);
    check(wrong == 0);
    free(out);
    free(in);
}

/* Collectives whose results each rank checks; 'name' labels them. */
static void collectives(MPI_Comm comm, const char *name)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    enum { N = 1 << 18 }; /* ints: 1 MiB */
    int *a = malloc(sizeof(int) * N), *all = malloc(sizeof(int) * (size_t)size * 1024);
    int wrong = 0;
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < N; i++)
            a[i] = rank == root ? i * 3 + root : -1;
        check_mpi(MPI_Bcast(a, N, MPI_INT, root, comm));
        for (int i = 0; i < N; i++)
            wrong += a[i] != i * 3 + root;
    }
    for (int i = 0; i < N; i++)
        a[i] = rank + i;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, a, N, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < N; i++)
        wrong += a[i] != size * (size - 1) / 2 + size * i;
    int mine[1024];
    for (int i = 0; i < 1024; i++)
        mine[i] = rank * 1024 + i;
    check_mpi(MPI_Allgather(mine, 1024, MPI_INT, all, 1024, MPI_INT, comm));
    for (int i = 0; i < size * 1024; i++)
        wrong += all[i] != i;
    MPI_Request request;
    check_mpi(MPI_Igather(mine, 1024, MPI_INT, all, 1024, MPI_INT, 0, comm, &request));
    check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE));
    for (int i = 0; rank == 0 && i < size * 1024; i++)
        wrong += all[i] != i;
    check_mpi(MPI_Barrier(comm));
    tlog("collectives on %s: %d values wrong", name, wrong);
    check(wrong == 0);
    free(a);
    free(all);
}

int main(int argc, char **argv)
{
    int rank, size, left, right;
    tinit(&argc, &argv, &rank, &size, &left, &right);
    int hosts = argc > 1 ? atoi(argv[1]) : 1;
    const char *what = argc > 2 ? argv[2] : "p2p";
    check_nodes(hosts);
    if (strcmp(what, "p2p") == 0) {
        /* pairs: rank and rank + half (the last rank of an odd world waits),
           then rank and its even or odd neighbour */
        int half = size / 2, partner = rank < half ? rank + half : rank - half;
        exchange(rank < 2 * half ? partner : -1, rank, "half a world away");
        exchange((rank ^ 1) < size ? rank ^ 1 : -1, rank, "neighbour");
    } else if (strcmp(what, "world") == 0) {
        collectives(MPI_COMM_WORLD, "the world");
    } else {
        MPI_Comm node;
        check_mpi(
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
        collectives(node, "the node");
        MPI_Comm_free(&node);
    }
    int status = tfinish();
    MPI_Finalize();
    return status;
}
