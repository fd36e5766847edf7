/*
 * A plain MPI program for the virtual ranks' transparency test
 * (tests/virt_compare.py): built once against the real MPI and once with
 * `tandem cc`'s header and library, it must print the same with N processes
 * as with N virtual ranks. Every rank checks what it receives and rank 0
 * prints each rank's results in order, so the output does not depend on
 * timing. No global variable is written: the virtual ranks of a process
 * share them.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG (1 << 20) /* above the eager limit: the one-copy path */

static long check(const void *buf, size_t bytes)
{
    const unsigned char *p = buf;
    long sum = 0;
    for (size_t i = 0; i < bytes; i++)
        sum = (sum * 31 + p[i]) % 1000003;
    return sum;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long results[40];
    int n = 0;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* A ring of small messages (the receive posted first: a blocking send
       to itself may wait for it, as MPICH's does), then of large
       nonblocking ones. */
    int token = rank * 10, got = -1;
    MPI_Status st;
    MPI_Request ring;
    MPI_Irecv(&got, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, &ring);
    MPI_Send(&token, 1, MPI_INT, next, 1, MPI_COMM_WORLD);
    MPI_Wait(&ring, &st);
    int count;
    MPI_Get_count(&st, MPI_INT, &count);
    results[n++] = got * 1000 + st.MPI_SOURCE * 10 + count;

    char *out = malloc(BIG), *in = malloc(BIG);
    for (int i = 0; i < BIG; i++)
        out[i] = (char)(i * 7 + rank);
    MPI_Request reqs[2];
    MPI_Irecv(in, BIG, MPI_CHAR, prev, 2, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(out, BIG, MPI_CHAR, next, 2, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    results[n++] = check(in, BIG);

    /* Non-overtaking: three messages of one tag from each rank to rank 0,
       received with MPI_ANY_SOURCE/MPI_ANY_TAG and a probe first. */
    if (rank != 0) {
        for (int k = 0; k < 3; k++) {
            int v = rank * 100 + k;
            MPI_Send(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
        }
        results[n++] = 0;
    } else {
        int last[64], ok = 1;
        for (int r = 0; r < 64; r++)
            last[r] = -1;
        for (int k = 0; k < 3 * (size - 1); k++) {
            int v, flag = 0;
            MPI_Probe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st);
            MPI_Iprobe(st.MPI_SOURCE, 5, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            ok &= flag;
            MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            ok &= v / 100 == st.MPI_SOURCE && v % 100 == last[st.MPI_SOURCE] + 1;
            last[st.MPI_SOURCE] = v % 100;
        }
        results[n++] = ok;
    }

    /* Waitany and Test over receives from both neighbours. */
    int a = -1, b = -1, idx, flag = 0, seen = 0;
    MPI_Irecv(&a, 1, MPI_INT, prev, 6, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(&b, 1, MPI_INT, next, 7, MPI_COMM_WORLD, &reqs[1]);
    MPI_Send(&rank, 1, MPI_INT, next, 6, MPI_COMM_WORLD);
    MPI_Send(&rank, 1, MPI_INT, prev, 7, MPI_COMM_WORLD);
    MPI_Waitany(2, reqs, &idx, MPI_STATUS_IGNORE);
    seen |= 1 << idx;
    while (!flag)
        MPI_Test(&reqs[1 - idx], &flag, MPI_STATUS_IGNORE);
    results[n++] = a * 100 + b * 10 + (seen != 0);

    /* A truncated receive, returned with MPI_ERRORS_RETURN. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int pair[2] = {rank, rank}, one = -1;
    MPI_Sendrecv(pair, 2, MPI_INT, next, 8, &one, 1, MPI_INT, prev, 8, MPI_COMM_WORLD, &st);
    int err = MPI_Recv(&one, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    results[n++] = err == MPI_SUCCESS && st.MPI_SOURCE == MPI_PROC_NULL;
    MPI_Request r;
    MPI_Isend(pair, 2, MPI_INT, next, 9, MPI_COMM_WORLD, &r);
    err = MPI_Recv(&one, 1, MPI_INT, prev, 9, MPI_COMM_WORLD, &st);
    int cls;
    MPI_Error_class(err, &cls);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    results[n++] = cls == MPI_ERR_TRUNCATE;

    /* Non-overtaking across sizes: a large message (waiting for its
       receive) then a small one (copied at once), one tag, received with
       MPI_ANY_TAG: the large one first. Synchronous sends, Testany,
       Testall and a freed request. */
    MPI_Request two[2];
    MPI_Isend(out, BIG, MPI_CHAR, next, 11, MPI_COMM_WORLD, &two[0]);
    MPI_Issend(&token, 1, MPI_INT, next, 11, MPI_COMM_WORLD, &two[1]);
    MPI_Recv(in, BIG, MPI_CHAR, prev, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    int first_count;
    MPI_Get_count(&st, MPI_CHAR, &first_count);
    int small = -1;
    MPI_Recv(&small, 1, MPI_INT, prev, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    int done_all = 0, which = -1, any = 0;
    while (!done_all)
        MPI_Testall(2, two, &done_all, MPI_STATUSES_IGNORE);
    MPI_Request one_req;
    MPI_Irecv(&got, 1, MPI_INT, prev, 12, MPI_COMM_WORLD, &one_req);
    MPI_Ssend(&token, 1, MPI_INT, next, 12, MPI_COMM_WORLD);
    while (!any)
        MPI_Testany(1, &one_req, &which, &any, MPI_STATUS_IGNORE);
    MPI_Request freed;
    MPI_Isend(&token, 1, MPI_INT, next, 13, MPI_COMM_WORLD, &freed);
    MPI_Request_free(&freed);
    int last = -1;
    MPI_Recv(&last, 1, MPI_INT, prev, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    results[n++] = (first_count == BIG) * 100000 + small * 10 + (which == 0) + (last == got) * 2;

    /* A derived datatype: every other int of a vector. */
    MPI_Datatype every_other;
    MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int vec[8], flat[4] = {0, 0, 0, 0};
    for (int i = 0; i < 8; i++)
        vec[i] = rank * 8 + i;
    MPI_Sendrecv(vec, 1, every_other, next, 10, flat, 4, MPI_INT, prev, 10, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    results[n++] = flat[0] * 1000 + flat[1] * 100 + flat[2] * 10 + flat[3];
    MPI_Type_free(&every_other);

    /* Matched probes: the message MPI_Mprobe takes is no other receive's
       (a receive of any tag posted after it gets the next one), and
       MPI_Mrecv gets it; MPI_Improbe and MPI_Imrecv of a large message;
       MPI_PROC_NULL's MPI_MESSAGE_NO_PROC. */
    int pm[2] = {rank * 10 + 1, rank * 10 + 2}, pm_in[2] = {-1, -1};
    MPI_Request pm_reqs[2];
    MPI_Isend(&pm[0], 1, MPI_INT, next, 20, MPI_COMM_WORLD, &pm_reqs[0]);
    MPI_Isend(&pm[1], 1, MPI_INT, next, 21, MPI_COMM_WORLD, &pm_reqs[1]);
    MPI_Message msg;
    MPI_Status mst, rst;
    MPI_Mprobe(prev, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &mst);
    MPI_Recv(&pm_in[1], 1, MPI_INT, prev, MPI_ANY_TAG, MPI_COMM_WORLD, &rst);
    int pm_count = -1;
    MPI_Get_count(&mst, MPI_INT, &pm_count);
    MPI_Mrecv(&pm_in[0], 1, MPI_INT, &msg, &st);
    MPI_Waitall(2, pm_reqs, MPI_STATUSES_IGNORE);
    results[n++] = (long)pm_in[0] * 100000 + pm_in[1] * 1000 + mst.MPI_TAG * 10 + pm_count;
    results[n++] = rst.MPI_TAG * 1000 + st.MPI_TAG * 10 + (msg == MPI_MESSAGE_NULL) +
                   2 * (st.MPI_SOURCE == prev);
    for (int i = 0; i < BIG; i++)
        out[i] = (char)(i * 3 + rank);
    memset(in, 0, BIG);
    MPI_Isend(out, BIG, MPI_CHAR, next, 22, MPI_COMM_WORLD, &pm_reqs[0]);
    int pflag = 0, big_count = -1;
    while (!pflag)
        MPI_Improbe(prev, 22, MPI_COMM_WORLD, &pflag, &msg, &mst);
    MPI_Get_count(&mst, MPI_CHAR, &big_count);
    MPI_Imrecv(in, BIG, MPI_CHAR, &msg, &pm_reqs[1]);
    MPI_Waitall(2, pm_reqs, MPI_STATUSES_IGNORE);
    results[n++] = check(in, BIG) * 10 + (big_count == BIG) + 2 * (msg == MPI_MESSAGE_NULL);
    MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &mst);
    long no_proc = (msg == MPI_MESSAGE_NO_PROC) + 2 * (mst.MPI_SOURCE == MPI_PROC_NULL);
    MPI_Mrecv(&one, 1, MPI_INT, &msg, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    no_proc +=
        4 * (msg == MPI_MESSAGE_NULL) + 8 * (st.MPI_SOURCE == MPI_PROC_NULL) + 16 * (count == 0);
    pflag = 0;
    MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &pflag, &msg, MPI_STATUS_IGNORE);
    no_proc += 32 * (pflag && msg == MPI_MESSAGE_NO_PROC);
    MPI_Imrecv(&one, 1, MPI_INT, &msg, &r);
    MPI_Wait(&r, &st);
    no_proc += 64 * (st.MPI_SOURCE == MPI_PROC_NULL && msg == MPI_MESSAGE_NULL);
    results[n++] = no_proc;

    /* Buffered sends: MPI_ERR_BUFFER without a buffer and with one too
       small (a message beyond every eager limit: the real MPIs send a
       small one without the buffer), then a large and a small one in a
       buffer that holds both with MPI_BSEND_OVERHEAD each, delivered by
       the time MPI_Buffer_detach returns; MPI_Ibsend and MPI_Bsend_init
       started twice. The failing sends go on a communicator of their own:
       Open MPI's leaves the next message between the same ranks
       unmatched after one. */
    int cls_none, cls_small;
    MPI_Comm failing;
    MPI_Comm_dup(MPI_COMM_WORLD, &failing);
    err = MPI_Bsend(out, BIG, MPI_CHAR, next, 30, failing);
    MPI_Error_class(err, &cls_none);
    char *small_buffer = malloc(1000 + MPI_BSEND_OVERHEAD);
    MPI_Buffer_attach(small_buffer, 1000 + MPI_BSEND_OVERHEAD);
    err = MPI_Bsend(out, BIG, MPI_CHAR, next, 30, failing);
    MPI_Error_class(err, &cls_small);
    MPI_Comm_free(&failing);
    void *detached;
    int detached_size;
    MPI_Buffer_detach(&detached, &detached_size);
    results[n++] = (cls_none == MPI_ERR_BUFFER) + 2 * (cls_small == MPI_ERR_BUFFER) +
                   4 * (detached == small_buffer) +
                   8 * (detached_size == 1000 + MPI_BSEND_OVERHEAD);
    free(small_buffer);
    int big_pack, int_pack;
    MPI_Pack_size(BIG, MPI_CHAR, MPI_COMM_WORLD, &big_pack);
    MPI_Pack_size(3, MPI_INT, MPI_COMM_WORLD, &int_pack);
    int bsize = big_pack + 3 * int_pack + 4 * MPI_BSEND_OVERHEAD + 64;
    char *bbuf = malloc((size_t)bsize);
    MPI_Buffer_attach(bbuf, bsize);
    for (int i = 0; i < BIG; i++)
        out[i] = (char)(i * 5 + rank);
    int bvals[3] = {rank + 100, rank + 200, rank + 300}, bin[3] = {-1, -1, -1};
    err = MPI_Bsend(out, BIG, MPI_CHAR, next, 31, MPI_COMM_WORLD);
    err |= MPI_Bsend(&bvals[0], 1, MPI_INT, next, 32, MPI_COMM_WORLD);
    for (int i = 0; i < BIG; i++)
        out[i] = 0; /* the buffered copies are sent, not these */
    bvals[0] = -7;
    MPI_Request ib;
    err |= MPI_Ibsend(&bvals[1], 1, MPI_INT, next, 33, MPI_COMM_WORLD, &ib);
    MPI_Wait(&ib, MPI_STATUS_IGNORE);
    bvals[1] = -7;
    MPI_Recv(in, BIG, MPI_CHAR, prev, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&bin[0], 1, MPI_INT, prev, 32, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&bin[1], 1, MPI_INT, prev, 33, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    results[n++] = check(in, BIG) * 10 + (err == MPI_SUCCESS);
    MPI_Request pb;
    long started = 0;
    MPI_Bsend_init(&bvals[2], 1, MPI_INT, next, 34, MPI_COMM_WORLD, &pb);
    for (int k = 0; k < 2; k++) {
        bvals[2] = rank + 300 + k;
        MPI_Start(&pb);
        MPI_Wait(&pb, MPI_STATUS_IGNORE);
        MPI_Recv(&bin[2], 1, MPI_INT, prev, 34, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        started = started * 1000 + bin[2];
    }
    MPI_Request_free(&pb);
    MPI_Buffer_detach(&detached, &detached_size);
    results[n++] = (long)bin[0] * 1000 + bin[1];
    results[n++] = started * 10 + (detached == bbuf && detached_size == bsize);
    free(bbuf);

    /* Ready sends, the receive posted before a barrier: MPI_Rsend,
       MPI_Irsend, MPI_Rsend_init. */
    int rv[3] = {-1, -1, -1}, rs[3] = {rank * 3, rank * 3 + 1, rank * 3 + 2};
    MPI_Request rr[3], rsq[2];
    for (int k = 0; k < 3; k++)
        MPI_Irecv(&rv[k], 1, MPI_INT, prev, 40 + k, MPI_COMM_WORLD, &rr[k]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Irsend(&rs[1], 1, MPI_INT, next, 41, MPI_COMM_WORLD, &rsq[0]);
    MPI_Rsend_init(&rs[2], 1, MPI_INT, next, 42, MPI_COMM_WORLD, &rsq[1]);
    MPI_Start(&rsq[1]);
    MPI_Rsend(&rs[0], 1, MPI_INT, next, 40, MPI_COMM_WORLD);
    MPI_Waitall(3, rr, MPI_STATUSES_IGNORE);
    MPI_Waitall(2, rsq, MPI_STATUSES_IGNORE);
    MPI_Request_free(&rsq[1]);
    results[n++] = rv[0] * 10000 + rv[1] * 100 + rv[2];

    /* MPI_Ssend_init is synchronous: to itself (MPI_COMM_SELF, the same
       process in every build), not complete before its receive is posted;
       then to the next rank, started twice. */
    MPI_Request ss, sr;
    int sv = rank + 50, sin = -1, sflag = -1;
    MPI_Ssend_init(&sv, 1, MPI_INT, 0, 43, MPI_COMM_SELF, &ss);
    MPI_Start(&ss);
    MPI_Test(&ss, &sflag, MPI_STATUS_IGNORE);
    MPI_Irecv(&sin, 1, MPI_INT, 0, 43, MPI_COMM_SELF, &sr);
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
    MPI_Wait(&ss, MPI_STATUS_IGNORE);
    MPI_Request_free(&ss);
    long synced = sflag * 100 + (sin == rank + 50);
    MPI_Ssend_init(&sv, 1, MPI_INT, next, 44, MPI_COMM_WORLD, &ss);
    for (int k = 0; k < 2; k++) {
        sv = rank * 10 + k;
        MPI_Irecv(&sin, 1, MPI_INT, prev, 44, MPI_COMM_WORLD, &sr);
        MPI_Start(&ss);
        MPI_Wait(&sr, MPI_STATUS_IGNORE);
        MPI_Wait(&ss, MPI_STATUS_IGNORE);
        synced = synced * 1000 + sin;
    }
    MPI_Request_free(&ss);
    results[n++] = synced;

    /* Messages whose data waits with the sender until a receive matches
       (between processes above 4 KiB): sizes about that limit, sent
       before their receives are posted and received in the other order;
       a freed send; a derived datatype on either side; a large message
       truncated (on a communicator of its own, as above). */
    enum { SIZES = 6 };
    const int sizes[SIZES] = {4096, 4097, 8192, 65536, 65537, 300000};
    MPI_Request sent[SIZES], kept;
    for (int k = 0, at = 0; k < SIZES; at += sizes[k++]) {
        for (int i = 0; i < sizes[k]; i++)
            out[at + i] = (char)(i * 11 + k + rank);
        MPI_Isend(out + at, sizes[k], MPI_CHAR, next, 50 + k, MPI_COMM_WORLD, &sent[k]);
    }
    char *freed_data = malloc(70000);
    for (int i = 0; i < 70000; i++)
        freed_data[i] = (char)(i * 13 + rank);
    MPI_Isend(freed_data, 70000, MPI_CHAR, next, 49, MPI_COMM_WORLD, &kept);
    MPI_Request_free(&kept);
    long apart = 0;
    for (int k = SIZES - 1; k >= 0; k--) {
        memset(in, 0, (size_t)sizes[k]);
        MPI_Recv(in, BIG, MPI_CHAR, prev, 50 + k, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_CHAR, &count);
        apart = (apart * 7 + check(in, (size_t)sizes[k]) + (count == sizes[k])) % 1000003;
    }
    MPI_Waitall(SIZES, sent, MPI_STATUSES_IGNORE);
    MPI_Recv(in, 70000, MPI_CHAR, prev, 49, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int freed_ok = 1;
    for (int i = 0; i < 70000; i++)
        freed_ok &= in[i] == (char)(i * 13 + prev);
    results[n++] = apart * 10 + freed_ok;
    MPI_Datatype pairs; /* the first int of every pair: 40000 of them */
    MPI_Type_vector(40000, 1, 2, MPI_INT, &pairs);
    MPI_Type_commit(&pairs);
    int *spread = malloc(80000 * sizeof *spread), *packed = malloc(40000 * sizeof *packed);
    for (int i = 0; i < 80000; i++)
        spread[i] = i % 2 ? -1 : i / 2 + rank;
    MPI_Sendrecv(spread, 1, pairs, next, 60, packed, 40000, MPI_INT, prev, 60, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    long typed = count == 40000;
    for (int i = 0; i < 40000; i++)
        typed += packed[i] != i + prev ? 10 : 0;
    for (int i = 0; i < 80000; i++)
        spread[i] = -2;
    MPI_Sendrecv(packed, 40000, MPI_INT, next, 61, spread, 1, pairs, prev, 61, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < 80000; i++)
        typed += spread[i] != (i % 2 ? -2 : i / 2 + (prev + size - 1) % size) ? 100 : 0;
    MPI_Type_free(&pairs);
    free(spread);
    free(packed);
    MPI_Comm cut;
    MPI_Comm_dup(MPI_COMM_WORLD, &cut);
    MPI_Comm_set_errhandler(cut, MPI_ERRORS_RETURN);
    MPI_Isend(out, 200000, MPI_CHAR, next, 62, cut, &r);
    err = MPI_Recv(in, 100000, MPI_CHAR, prev, 62, cut, &st);
    MPI_Error_class(err, &cls);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Comm_free(&cut);
    results[n++] = typed * 10 + (cls == MPI_ERR_TRUNCATE);
    MPI_Barrier(MPI_COMM_WORLD); /* the freed send's data read: its buffer may go */
    free(freed_data);

    /* MPI_Sendrecv_replace round the ring, of a strided type; MPI_Waitsome
       and MPI_Testsome over receives from both neighbours and a null
       request, until none is active. */
    int strided[6] = {rank, -1, rank * 2, -1, rank * 3, -1};
    MPI_Datatype alternate;
    MPI_Type_vector(3, 1, 2, MPI_INT, &alternate);
    MPI_Type_commit(&alternate);
    MPI_Sendrecv_replace(strided, 1, alternate, next, 70, prev, 70, MPI_COMM_WORLD, &st);
    MPI_Type_free(&alternate);
    results[n++] = strided[0] * 10000 + strided[2] * 100 + strided[4] + strided[1] + strided[3] +
                   strided[5] + st.MPI_SOURCE * 1000000;
    for (int form = 0; form < 2; form++) {
        int from[2] = {-1, -1}, mine[2] = {rank * 3 + 1, rank * 3 + 2}, indices[3], done = 0;
        long tally = 0;
        MPI_Request some[3];
        MPI_Status sts[3];
        MPI_Irecv(&from[0], 1, MPI_INT, prev, 71, MPI_COMM_WORLD, &some[0]);
        some[1] = MPI_REQUEST_NULL;
        MPI_Irecv(&from[1], 1, MPI_INT, next, 72, MPI_COMM_WORLD, &some[2]);
        MPI_Request sends[2];
        MPI_Isend(&mine[0], 1, MPI_INT, next, 71, MPI_COMM_WORLD, &sends[0]);
        MPI_Isend(&mine[1], 1, MPI_INT, prev, 72, MPI_COMM_WORLD, &sends[1]);
        for (;;) {
            int outcount;
            if (form == 0)
                MPI_Waitsome(3, some, &outcount, indices, sts);
            else
                MPI_Testsome(3, some, &outcount, indices, sts);
            if (outcount == MPI_UNDEFINED)
                break;
            for (int k = 0; k < outcount; k++) {
                tally += indices[k] * 100 + sts[k].MPI_TAG;
                done++;
            }
        }
        MPI_Waitall(2, sends, MPI_STATUSES_IGNORE);
        results[n++] = (from[0] * 100 + from[1]) * 1000 + tally * 10 + done;
    }

    /* Gather every rank's results on rank 0, which prints them. */
    long *all = rank == 0 ? malloc(sizeof(long) * 40 * (size_t)size) : NULL;
    MPI_Gather(results, n, MPI_LONG, all, n, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("ranks %d, thread level %d\n", size, provided);
        for (int p = 0; p < size; p++) {
            printf("rank %d:", p);
            for (int i = 0; i < n; i++)
                printf(" %ld", all[p * n + i]);
            printf("\n");
        }
    }
    free(all);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
