/*
 * Monitoring read online, by a program linked with Tandem: the C API of
 * tandem.h for a phase of the program, and Tandem's MPI_T performance
 * variables beside the MPI library's own, bound to a communicator whose ranks
 * run backwards (values come in its rank order). Two handles on one variable
 * are started together and stopped apart: each keeps its own count. Every
 * value is checked against the traffic the program made. Then two threads
 * receive through matched probes at once: each receive is recorded, with its
 * source.
 */
#include <pthread.h>

#include "tandem.h"
#include "testlib.h"

/* One round of known traffic to the right neighbour: 40 + 1000 + 0 bytes. */
enum { ROUND_MESSAGES = 3, ROUND_BYTES = 1040 };

static void round_of_traffic(int left, int right)
{
    double d[5] = {0};
    char c[1000] = {0}, in[1000];
    MPI_Request r[2];
    MPI_Irecv(in, 1000, MPI_CHAR, left, 2, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(c, 1000, MPI_CHAR, right, 2, MPI_COMM_WORLD, &r[1]);
    MPI_Sendrecv(d, 5, MPI_DOUBLE, right, 1, in, 5, MPI_DOUBLE, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    int flag = 0;
    MPI_Irecv(in, 0, MPI_CHAR, left, 3, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(c, 0, MPI_CHAR, right, 3, MPI_COMM_WORLD, &r[1]);
    while (!flag)
        MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
}

typedef struct {
    unsigned long long *msgs, *bytes, *hist;
} kind_view;

static kind_view read_kind(int kind, int size)
{
    kind_view k = {calloc((size_t)size, sizeof *k.msgs), calloc((size_t)size, sizeof *k.bytes),
                   calloc((size_t)size * TANDEM_MONITOR_BINS, sizeof *k.hist)};
    check_mpi(tandem_monitor_read(kind, k.msgs, k.bytes, k.hist));
    return k;
}

static void free_kind(kind_view k)
{
    free(k.msgs);
    free(k.bytes);
    free(k.hist);
}

/* The all kind counts each byte once: the point-to-point sends, and each
   collective as its logical volume where the MPI library ran it, as the
   messages of Tandem's schedule where Tandem did (TANDEM_COLL_BLOCKING=tandem
   gives it the blocking bcast and allreduce). */
static void check_all_kind(int size)
{
    const char *blocking = getenv("TANDEM_COLL_BLOCKING");
    int by_tandem = blocking && strcmp(blocking, "tandem") == 0;
    kind_view all = read_kind(TANDEM_MONITOR_ALL, size);
    kind_view sent = read_kind(TANDEM_MONITOR_P2P_SEND, size);
    kind_view coll =
        read_kind(by_tandem ? TANDEM_MONITOR_COLL_INTERNAL : TANDEM_MONITOR_COLL, size);
    unsigned long long coll_total = 0;
    for (int peer = 0; peer < size; peer++) {
        check(all.msgs[peer] == sent.msgs[peer] + coll.msgs[peer]);
        check(all.bytes[peer] == sent.bytes[peer] + coll.bytes[peer]);
        for (int bin = 0; bin < TANDEM_MONITOR_BINS; bin++) {
            size_t at = (size_t)peer * TANDEM_MONITOR_BINS + (size_t)bin;
            check(all.hist[at] == sent.hist[at] + coll.hist[at]);
        }
        coll_total += coll.msgs[peer];
    }
    check(size == 1 || coll_total > 0);
    tlog("C API, all: the point-to-point sends and each collective once");
    free_kind(all);
    free_kind(sent);
    free_kind(coll);
}

static void check_c_api(int rank, int size, int left, int right)
{
    unsigned long long *msgs = calloc((size_t)size, sizeof *msgs);
    unsigned long long *bytes = calloc((size_t)size, sizeof *bytes);
    unsigned long long *hist = calloc((size_t)size * TANDEM_MONITOR_BINS, sizeof *hist);
    check(tandem_monitor_read(TANDEM_MONITOR_KINDS, msgs, bytes, hist) != 0); /* bad kind */

    check_mpi(tandem_monitor_start());
    round_of_traffic(left, right);
    double x = rank, sum = 0;
    MPI_Bcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    check_mpi(tandem_monitor_stop());
    round_of_traffic(left, right); /* not counted: the view is stopped */

    check_mpi(tandem_monitor_read(TANDEM_MONITOR_P2P_SEND, msgs, bytes, hist));
    tlog("C API, sent to %d: %llu messages, %llu bytes", right, msgs[right], bytes[right]);
    check(msgs[right] == ROUND_MESSAGES && bytes[right] == ROUND_BYTES);
    check(hist[right * TANDEM_MONITOR_BINS + 0] == 1);  /* 0 bytes */
    check(hist[right * TANDEM_MONITOR_BINS + 6] == 1);  /* 40 bytes: [32, 64) */
    check(hist[right * TANDEM_MONITOR_BINS + 10] == 1); /* 1000 bytes: [512, 1024) */
    check_mpi(tandem_monitor_read(TANDEM_MONITOR_P2P_RECV, msgs, bytes, NULL));
    tlog("C API, received from %d: %llu messages, %llu bytes", left, msgs[left], bytes[left]);
    check(msgs[left] == ROUND_MESSAGES && bytes[left] == ROUND_BYTES);

    /* Collectives: rank 0 records the bcast (8 bytes to each other rank);
       every rank records the allreduce (8 bytes to each other rank). */
    check_mpi(tandem_monitor_read(TANDEM_MONITOR_COLL, msgs, bytes, NULL));
    for (int peer = 0; peer < size; peer++) {
        unsigned long long want = peer == rank ? 0 : rank == 0 ? 2 : 1;
        check(msgs[peer] == want && bytes[peer] == want * 8);
    }

    check_all_kind(size);

    check_mpi(tandem_monitor_reset());
    check_mpi(tandem_monitor_read(TANDEM_MONITOR_P2P_SEND, msgs, bytes, NULL));
    check(msgs[right] == 0 && bytes[right] == 0);
    tlog("C API after reset: %llu messages", msgs[right]);
    free(msgs);
    free(bytes);
    free(hist);
}

/* The index of a variable by name, found both ways: get_index and a scan of
   get_info over every variable (which also counts Tandem's). */
static int find_variable(const char *wanted, int *ours, int *total)
{
    int index = -1, num = 0;
    check_mpi(MPI_T_pvar_get_index(wanted, MPI_T_PVAR_CLASS_COUNTER, &index));
    check_mpi(MPI_T_pvar_get_num(&num));
    *total = num;
    *ours = 0;
    int scanned = -1;
    for (int i = 0; i < num; i++) {
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, var_class, bind, readonly,
            continuous, atomic;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        if (MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &type, &enumtype, desc,
                                &desc_len, &bind, &readonly, &continuous, &atomic) != MPI_SUCCESS)
            continue;
        if (strncmp(name, "tandem_monitor_", 15) == 0) {
            (*ours)++;
            check(var_class == MPI_T_PVAR_CLASS_COUNTER && bind == MPI_T_BIND_MPI_COMM);
            check(type == MPI_UNSIGNED_LONG_LONG && readonly && !continuous);
        }
        if (strcmp(name, wanted) == 0)
            scanned = i;
    }
    check(scanned == index);
    return index;
}

static void check_mpi_t(int rank, int size, int left, int right)
{
    int provided, ours, total;
    check_mpi(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    int index = find_variable("tandem_monitor_p2p_send_bytes", &ours, &total);
    tlog("MPI_T: %d of Tandem's variables beside %d of the MPI's own", ours, total - ours);
    check(ours == 3 * TANDEM_MONITOR_KINDS && total >= ours);

    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
    int right_there = size - 1 - right; /* right's rank in 'reversed' */

    MPI_T_pvar_session session;
    MPI_T_pvar_handle first, second;
    int count = 0;
    check_mpi(MPI_T_pvar_session_create(&session));
    check_mpi(MPI_T_pvar_handle_alloc(session, index, &reversed, &first, &count));
    check(count == size);
    check_mpi(MPI_T_pvar_handle_alloc(session, index, &reversed, &second, &count));
    check_mpi(MPI_T_pvar_start(session, first));
    check_mpi(MPI_T_pvar_start(session, second));
    round_of_traffic(left, right);
    check_mpi(MPI_T_pvar_stop(session, first)); /* second keeps counting */
    round_of_traffic(left, right);

    unsigned long long *values = calloc((size_t)size, sizeof *values);
    check_mpi(MPI_T_pvar_read(session, first, values));
    tlog("MPI_T first handle (stopped after one round): %llu bytes", values[right_there]);
    check(values[right_there] == ROUND_BYTES);
    check_mpi(MPI_T_pvar_read(session, second, values));
    tlog("MPI_T second handle (two rounds): %llu bytes", values[right_there]);
    check(values[right_there] == 2 * ROUND_BYTES);
    check_mpi(MPI_T_pvar_reset(session, second));
    round_of_traffic(left, right);
    check_mpi(MPI_T_pvar_readreset(session, second, values));
    check(values[right_there] == ROUND_BYTES);
    check_mpi(MPI_T_pvar_read(session, second, values));
    check(values[right_there] == 0);
    check(MPI_T_pvar_write(session, first, values) == MPI_T_ERR_PVAR_NO_WRITE);

    /* The all kind through MPI_T: a round of point-to-point traffic only. */
    int all_index = -1;
    MPI_T_pvar_handle all;
    check_mpi(
        MPI_T_pvar_get_index("tandem_monitor_all_bytes", MPI_T_PVAR_CLASS_COUNTER, &all_index));
    check_mpi(MPI_T_pvar_handle_alloc(session, all_index, &reversed, &all, &count));
    check_mpi(MPI_T_pvar_start(session, all));
    round_of_traffic(left, right);
    check_mpi(MPI_T_pvar_read(session, all, values));
    tlog("MPI_T all: %llu bytes", values[right_there]);
    check(values[right_there] == ROUND_BYTES);

    /* The histogram variable: TANDEM_MONITOR_BINS values per rank. */
    int hist_index = -1;
    check_mpi(MPI_T_pvar_get_index("tandem_monitor_p2p_send_histogram", MPI_T_PVAR_CLASS_COUNTER,
                                   &hist_index));
    MPI_T_pvar_handle hist;
    check_mpi(MPI_T_pvar_handle_alloc(session, hist_index, &reversed, &hist, &count));
    check(count == size * TANDEM_MONITOR_BINS);
    check_mpi(MPI_T_pvar_start(session, hist));
    round_of_traffic(left, right);
    unsigned long long *bins = calloc((size_t)count, sizeof *bins);
    check_mpi(MPI_T_pvar_read(session, hist, bins));
    check(bins[right_there * TANDEM_MONITOR_BINS + 10] == 1);
    free(bins);

    check_mpi(MPI_T_pvar_handle_free(session, &first));
    check_mpi(MPI_T_pvar_handle_free(session, &second));
    check(first == MPI_T_PVAR_HANDLE_NULL);
    check_mpi(MPI_T_pvar_session_free(&session)); /* frees 'hist' and 'all' with it */
    check_mpi(MPI_T_finalize());
    MPI_Comm_free(&reversed);
    free(values);
}

/* Matched probes from THREADS threads at once: each sends ROUNDS messages to
   the right and receives those from the left under tags of its own, found
   with MPI_Improbe, half received with MPI_Mrecv, half with MPI_Imrecv. (Not
   MPI_Mprobe: while a thread blocks in the MPI library, Tandem's progress
   thread leaves the proxied requests alone, and the other thread's wait for
   one would never end.) */
enum { THREADS = 2, ROUNDS = 50 };

typedef struct {
    int thread, left, right;
    int failures; /* MPI calls that failed (tlog is for the main thread) */
} matcher;

static int matched_bytes(int thread, int round)
{
    return 100 * (thread + 1) + round;
}

static void *match(void *arg)
{
    matcher *m = arg;
    char out[1000] = {0}, in[1000];
    for (int round = 0; round < ROUNDS; round++) {
        int tag = 100 + m->thread, found = 0, bytes = matched_bytes(m->thread, round);
        MPI_Message message;
        MPI_Request sent, received;
        m->failures += MPI_Isend(out, bytes, MPI_CHAR, m->right, tag, MPI_COMM_WORLD, &sent) != 0;
        while (!found && m->failures == 0)
            m->failures +=
                MPI_Improbe(m->left, tag, MPI_COMM_WORLD, &found, &message, MPI_STATUS_IGNORE) != 0;
        if (round % 2 == 0) {
            m->failures += MPI_Mrecv(in, bytes, MPI_CHAR, &message, MPI_STATUS_IGNORE) != 0;
        } else {
            m->failures += MPI_Imrecv(in, bytes, MPI_CHAR, &message, &received) != 0;
            m->failures += MPI_Wait(&received, MPI_STATUS_IGNORE) != 0;
        }
        m->failures += MPI_Wait(&sent, MPI_STATUS_IGNORE) != 0;
    }
    return NULL;
}

static void check_matched_threads(int size, int left, int right)
{
    matcher m[THREADS];
    pthread_t threads[THREADS];
    unsigned long long want = 0;
    check_mpi(tandem_monitor_reset());
    check_mpi(tandem_monitor_start());
    for (int t = 0; t < THREADS; t++) {
        m[t] = (matcher){t, left, right, 0};
        check(pthread_create(&threads[t], NULL, match, &m[t]) == 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        check(m[t].failures == 0);
        for (int round = 0; round < ROUNDS; round++)
            want += (unsigned long long)matched_bytes(t, round);
    }
    check_mpi(tandem_monitor_stop());
    unsigned long long *msgs = calloc((size_t)size, sizeof *msgs);
    unsigned long long *bytes = calloc((size_t)size, sizeof *bytes);
    check_mpi(tandem_monitor_read(TANDEM_MONITOR_P2P_RECV, msgs, bytes, NULL));
    tlog("matched probes, %d threads: received from %d: %llu messages, %llu bytes", THREADS, left,
         msgs[left], bytes[left]);
    check(msgs[left] == THREADS * ROUNDS && bytes[left] == want);
    free(msgs);
    free(bytes);
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    check_c_api(rank, size, left, right);
    check_mpi_t(rank, size, left, right);
    if (provided == MPI_THREAD_MULTIPLE)
        check_matched_threads(size, left, right);
    else
        tlog("matched probes: no MPI_THREAD_MULTIPLE");
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
