/*
 * Stress: 10^4 requests outstanding on every rank at once. Every rank sends
 * MSGS messages of random sizes (zero-size included) and tags to every rank,
 * from THREADS threads at once (MPI_THREAD_MULTIPLE), and receives them with a
 * mix of exact and MPI_ANY_SOURCE / MPI_ANY_TAG receives, completed with
 * Waitany, Waitsome, Testsome and Waitall. Some sends are freed right after
 * posting, unmatched receives are cancelled, and a persistent ring runs
 * beside. What each rank prints does not depend on the matching order.
 */
#include <pthread.h>

#include "testlib.h"

enum { THREADS = 2, MAXSIZE = 20000, CANCELS = 50 };
static int rank, size, msgs; /* messages per (sender thread, receiver) */

static unsigned next_random(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return (*state >> 8) & 0xffffff;
}

/* The size and tag of message i from 'src' to 'dst' on thread 't'. */
static void message(int src, int dst, int t, int i, int *bytes, int *tag)
{
    unsigned s = ((unsigned)src * 7919u + (unsigned)dst * 104729u + (unsigned)t * 1299709u +
                  (unsigned)i * 15485863u) |
                 1u;
    unsigned r = next_random(&s);
    static const int sizes[] = {0, 1, 8, 100, 1000, 4096, 5000, MAXSIZE};
    *bytes = sizes[r % 8];
    *tag = t * 100000 + i; /* thread t's receives only match thread t's sends */
}

typedef struct {
    int thread;
    MPI_Comm comm;          /* this thread's duplicate of MPI_COMM_WORLD */
    char *sendbuf;          /* kept until every rank passed the final barrier: the
                               freed sends may read it until they are delivered */
    unsigned long checksum; /* order-independent: a sum over messages */
    long received, cancelled, freed;
} result;

static void *exchange(void *arg)
{
    result *res = arg;
    int t = res->thread, total = msgs * size;
    char *sendbuf = res->sendbuf;
    char *recvbuf = malloc((size_t)total * MAXSIZE);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)(2 * total + CANCELS));
    MPI_Status *stats = malloc(sizeof(MPI_Status) * (size_t)(2 * total + CANCELS));
    int *indices = malloc(sizeof(int) * (size_t)(2 * total + CANCELS));
    for (int i = 0; i < MAXSIZE; i++)
        sendbuf[i] = (char)(i * 31 + rank);

    /* Receives first; every third message is received with MPI_ANY_SOURCE and
       MPI_ANY_TAG instead of its exact receive. The exact receives are posted
       before the wildcards so that a wildcard can only take a message that no
       exact receive waits for. Each thread has a communicator of its own. */
    MPI_Comm comm = res->comm;
    for (int pass = 0; pass < 2; pass++) {
        int n = 0;
        for (int src = 0; src < size; src++)
            for (int i = 0; i < msgs; i++, n++) {
                int bytes, tag, any = n % 3 == 0;
                if (any != pass)
                    continue;
                message(src, rank, t, i, &bytes, &tag);
                check_mpi(MPI_Irecv(recvbuf + (size_t)n * MAXSIZE, MAXSIZE, MPI_CHAR,
                                    any ? MPI_ANY_SOURCE : src, any ? MPI_ANY_TAG : tag, comm,
                                    &reqs[n]));
            }
    }
    /* Receives that nothing will match: cancelled below. */
    for (int c = 0; c < CANCELS; c++)
        check_mpi(
            MPI_Irecv(recvbuf, 1, MPI_CHAR, MPI_ANY_SOURCE, 999999, comm, &reqs[2 * total + c]));
    /* Sends; every seventh one is freed at once (its delivery shows at the receiver). */
    for (int dst = 0, k = 0; dst < size; dst++)
        for (int i = 0; i < msgs; i++, k++) {
            int bytes, tag;
            message(rank, dst, t, i, &bytes, &tag);
            MPI_Request *r = &reqs[total + k];
            check_mpi(MPI_Isend(sendbuf, bytes, MPI_CHAR, dst, tag, comm, r));
            if (k % 7 == 3) {
                check_mpi(MPI_Request_free(r));
                res->freed++;
            }
        }
    for (int c = 0; c < CANCELS; c++)
        check_mpi(MPI_Cancel(&reqs[2 * total + c]));

    /* Completion: Waitany, then Waitsome, then Testsome, then Waitall. A freed
       send's slot is already MPI_REQUEST_NULL. */
    int all = 2 * total + CANCELS, done = 0;
    for (int r = 0; r < all; r++)
        if (reqs[r] == MPI_REQUEST_NULL)
            done++;
#define ACCOUNT(index, st)                                                                       \
    do {                                                                                         \
        if ((index) < total) {                                                                   \
            int count_;                                                                          \
            MPI_Get_count(&(st), MPI_CHAR, &count_);                                             \
            res->checksum += (unsigned long)(st).MPI_SOURCE * 1000003UL +                        \
                             (unsigned long)(st).MPI_TAG * 101UL + (unsigned long)count_ * 7UL + \
                             tsum(recvbuf + (size_t)(index)*MAXSIZE, (size_t)count_) % 100003UL; \
            res->received++;                                                                     \
        } else if ((index) >= 2 * total) {                                                       \
            int cancelled_ = 0;                                                                  \
            MPI_Test_cancelled(&(st), &cancelled_);                                              \
            res->cancelled += cancelled_;                                                        \
        }                                                                                        \
    } while (0)
    while (done < all / 3) {
        int index;
        MPI_Status st;
        check_mpi(MPI_Waitany(all, reqs, &index, &st));
        if (index == MPI_UNDEFINED)
            break;
        ACCOUNT(index, st);
        done++;
    }
    while (done < 2 * all / 3) {
        int outcount;
        check_mpi(MPI_Waitsome(all, reqs, &outcount, indices, stats));
        if (outcount == MPI_UNDEFINED)
            break;
        for (int i = 0; i < outcount; i++)
            ACCOUNT(indices[i], stats[i]);
        done += outcount;
    }
    for (int rounds = 0; done < all && rounds < 1000; rounds++) {
        int outcount;
        check_mpi(MPI_Testsome(all, reqs, &outcount, indices, stats));
        if (outcount == MPI_UNDEFINED)
            break;
        for (int i = 0; i < outcount; i++)
            ACCOUNT(indices[i], stats[i]);
        done += outcount;
    }
    char *pending = malloc((size_t)all);
    for (int r = 0; r < all; r++)
        pending[r] = reqs[r] != MPI_REQUEST_NULL;
    check_mpi(MPI_Waitall(all, reqs, stats));
    for (int r = 0; r < all; r++)
        if (pending[r])
            ACCOUNT(r, stats[r]);
    free(pending);
    free(recvbuf);
    free(reqs);
    free(stats);
    free(indices);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* 10^4 requests outstanding per rank: THREADS x 2 x msgs x size. */
    msgs = 10000 / (THREADS * 2 * size);

    /* A persistent ring beside the storm. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double ring_out[512], ring_in[512];
    MPI_Request ring[2];
    MPI_Recv_init(ring_in, 512, MPI_DOUBLE, left, 777777, MPI_COMM_WORLD, &ring[0]);
    MPI_Send_init(ring_out, 512, MPI_DOUBLE, right, 777777, MPI_COMM_WORLD, &ring[1]);
    for (int i = 0; i < 512; i++)
        ring_out[i] = rank + i * 0.25;
    MPI_Startall(2, ring);

    pthread_t threads[THREADS];
    result results[THREADS];
    for (int t = 0; t < THREADS; t++) {
        results[t] = (result){t, MPI_COMM_NULL, malloc(MAXSIZE), 0, 0, 0, 0};
        MPI_Comm_dup(MPI_COMM_WORLD, &results[t].comm);
        if (provided == MPI_THREAD_MULTIPLE)
            pthread_create(&threads[t], NULL, exchange, &results[t]);
        else
            exchange(&results[t]);
    }
    for (int t = 0; provided == MPI_THREAD_MULTIPLE && t < THREADS; t++)
        pthread_join(threads[t], NULL);
    for (int t = 0; t < THREADS; t++)
        MPI_Comm_free(&results[t].comm);
    MPI_Waitall(2, ring, MPI_STATUSES_IGNORE);
    MPI_Request_free(&ring[0]);
    MPI_Request_free(&ring[1]);
    MPI_Barrier(MPI_COMM_WORLD); /* freed sends are delivered: all receives completed */
    for (int t = 0; t < THREADS; t++)
        free(results[t].sendbuf);

    for (int t = 0; t < THREADS; t++)
        tlog("thread %d: received %ld checksum %lu cancelled %ld freed sends %ld", t,
             results[t].received, results[t].checksum, results[t].cancelled, results[t].freed);
    tlog("ring: %lu", tsum(ring_in, sizeof ring_in));
    check(provided == MPI_THREAD_MULTIPLE);
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
