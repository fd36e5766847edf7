/*
 * Nonblocking collectives, many in flight at once and completed in any order:
 * MPI_Ibcast over sizes 0, 1, odd and 1 MiB, every root, predefined and
 * derived datatypes; MPI_Iallreduce and MPI_Ireduce with predefined
 * operations on int, double (exact values) and MPI_2INT, a user-defined
 * commutative and a non-commutative operation, MPI_IN_PLACE; a non-commutative
 * matrix product through every reduction, checked against the rank-order
 * product; MPI_Igather,
 * MPI_Iscatter, MPI_Iallgather, MPI_Ialltoall (MPI_IN_PLACE where allowed, in
 * MPI_Iscan, MPI_Iexscan, MPI_Ialltoallv and MPI_Ialltoallw too);
 * MPI_Iallgatherv, MPI_Ialltoallv, MPI_Ialltoallw, MPI_Ireduce_scatter(_block);
 * the blocking forms with a nonblocking one in flight;
 * on MPI_COMM_WORLD and on sub-communicators of odd and even ranks;
 * MPI_Ibarrier; then 1000 small collectives in flight on one communicator
 * completed in reverse order. The output (checksums) must be the MPI
 * library's, with and without TANDEM_COLL=tandem.
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

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void user_first(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type; /* non-commutative: keeps the lower rank's value */
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] = ((int *)in)[i];
}

/* A 2x2 matrix of unsigned ints, row-major, multiplied modulo 2^32: an
   associative operation that does not commute, so every rank-order mistake
   shows. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const unsigned *a = in;
    unsigned *b = inout; /* b = a x b */
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        unsigned r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                         a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, r, sizeof r);
    }
}

/* Rank r's matrix number i. */
static void matrix_of(int r, int i, unsigned m[4])
{
    m[0] = (unsigned)(r + 2);
    m[1] = (unsigned)(i % 7 + 1);
    m[2] = (unsigned)(3 * r + 1);
    m[3] = (unsigned)(i % 5);
}

/* x0 x1 ... x(last) of matrix i over the ranks [0, last]. */
static void product_of(int last, int i, unsigned out[4])
{
    unsigned m[4];
    int one = 1;
    matrix_of(last, i, out);
    for (int r = last - 1; r >= 0; r--) {
        matrix_of(r, i, m);
        matmul(m, out, &one, NULL);
    }
}

/* Non-commutative reductions off the scan chain: iallreduce, ireduce at each
   root (in place at the root too), ireduce_scatter with uneven counts,
   ireduce_scatter_block, iscan; each result checked against the product in
   rank order computed here, and printed as a checksum. */
static void ordered_reductions(MPI_Comm comm, const char *name)
{
    enum { N = 5, MAXC = 300 };
    static const int counts[] = {0, 1, 3, 100, MAXC};
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_UNSIGNED, &mat);
    MPI_Type_commit(&mat);
    MPI_Op op;
    MPI_Op_create(matmul, 0, &op);
    int total = MAXC * size; /* reduce_scatter input: every rank's blocks */
    unsigned *in = malloc(sizeof(unsigned) * 4 * (size_t)total);
    for (int i = 0; i < total; i++)
        matrix_of(rank, i, &in[4 * i]);
    enum { PER = 5 };
    MPI_Request r[N * PER];
    unsigned *out[N * PER];
    int rs_counts[64], rs_start = 0;
    for (int q = 0; q < size; q++) /* uneven, rank 1 gets none */
        rs_counts[q] = q == 1 ? 0 : 2 * q + 1;
    for (int q = 0; q < rank; q++)
        rs_start += rs_counts[q];
    for (int c = 0; c < N; c++) {
        int n = counts[c], root = c % size;
        unsigned **o = &out[c * PER];
        for (int k = 0; k < PER; k++)
            o[k] = calloc(4 * (size_t)(total + 1), sizeof(unsigned));
        check_mpi(MPI_Iallreduce(in, o[0], n, mat, op, comm, &r[c * PER]));
        if (rank == root)
            memcpy(o[1], in, sizeof(unsigned) * 4 * (size_t)n);
        check_mpi(MPI_Ireduce(rank == root ? MPI_IN_PLACE : in, o[1], n, mat, op, root, comm,
                              &r[c * PER + 1]));
        check_mpi(MPI_Iscan(in, o[2], n, mat, op, comm, &r[c * PER + 2]));
        check_mpi(MPI_Ireduce_scatter_block(in, o[3], n, mat, op, comm, &r[c * PER + 3]));
        if (c == 0)
            check_mpi(MPI_Ireduce_scatter(in, o[4], rs_counts, mat, op, comm, &r[c * PER + 4]));
        else
            r[c * PER + 4] = MPI_REQUEST_NULL;
    }
    check_mpi(MPI_Waitall(N * PER, r, MPI_STATUSES_IGNORE));
    unsigned long sums[PER] = {0};
    int wrong = 0;
    for (int c = 0; c < N; c++) {
        int n = counts[c], root = c % size;
        unsigned **o = &out[c * PER], want[4];
        for (int i = 0; i < n; i++) {
            product_of(size - 1, i, want);
            wrong += memcmp(&o[0][4 * i], want, sizeof want) != 0;
            wrong += rank == root && memcmp(&o[1][4 * i], want, sizeof want) != 0;
            product_of(rank, i, want);
            wrong += memcmp(&o[2][4 * i], want, sizeof want) != 0;
            product_of(size - 1, rank * n + i, want);
            wrong += memcmp(&o[3][4 * i], want, sizeof want) != 0;
        }
        for (int i = 0; c == 0 && i < rs_counts[rank]; i++) {
            product_of(size - 1, rs_start + i, want);
            wrong += memcmp(&o[4][4 * i], want, sizeof want) != 0;
        }
        for (int k = 0; k < PER; k++) {
            if (k != 1 || rank == root)
                sums[k] += tsum(o[k], sizeof(unsigned) * 4 * (size_t)n);
            free(o[k]);
        }
    }
    tlog("%s ordered reductions: allreduce %lx reduce %lx scan %lx reduce_scatter_block %lx, "
         "%d wrong",
         name, sums[0], sums[1], sums[2], sums[3], wrong);
    check(wrong == 0);
    free(in);
    MPI_Op_free(&op);
    MPI_Type_free(&mat);
}

/* Reductions of each count and operation, all in flight, then completed with
   MPI_Waitall. */
static void reductions(MPI_Comm comm, const char *name)
{
    static const int counts[] = {0, 1, 7, 1000, 70000};
    enum { NCOUNTS = sizeof counts / sizeof counts[0], NOPS = 9, MAXC = 70000 };
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Op sum, first;
    MPI_Op_create(user_sum, 1, &sum);
    MPI_Op_create(user_first, 0, &first);
    MPI_Op ops[NOPS] = {MPI_SUM,  MPI_MAX, MPI_MIN, MPI_PROD, MPI_BAND,
                        MPI_BXOR, sum,     first,   MPI_SUM};
    int n = NCOUNTS * NOPS * 3 + 2;
    MPI_Request *requests = malloc(sizeof(MPI_Request) * (size_t)n);
    int **out = malloc(sizeof(int *) * (size_t)n), k = 0;
    int *in = malloc(sizeof(int) * MAXC);
    for (int i = 0; i < MAXC; i++)
        in[i] = (rank + 1) * (i % 5 + 1) + (i % 3); /* small: products stay exact */
    for (int c = 0; c < NCOUNTS; c++) {
        for (int o = 0; o < NOPS; o++) {
            int in_place = o == NOPS - 1, root = (c + o) % size;
            out[k] = malloc(sizeof(int) * (size_t)(counts[c] + 1));
            if (in_place)
                memcpy(out[k], in, sizeof(int) * (size_t)counts[c]);
            check_mpi(MPI_Iallreduce(in_place ? MPI_IN_PLACE : in, out[k], counts[c], MPI_INT,
                                     ops[o], comm, &requests[k]));
            k++;
            out[k] = malloc(sizeof(int) * (size_t)(counts[c] + 1));
            if (in_place && rank == root)
                memcpy(out[k], in, sizeof(int) * (size_t)counts[c]);
            check_mpi(MPI_Ireduce(in_place && rank == root ? MPI_IN_PLACE : in, out[k], counts[c],
                                  MPI_INT, ops[o], root, comm, &requests[k]));
            k++;
            /* doubles holding small integers: every order of summing is exact */
            out[k] = malloc(sizeof(double) * (size_t)(counts[c] + 1));
            double *d = malloc(sizeof(double) * (size_t)(counts[c] + 1));
            for (int i = 0; i < counts[c]; i++)
                d[i] = in[i];
            check_mpi(MPI_Iallreduce(d, out[k], counts[c], MPI_DOUBLE, o < 4 ? ops[o] : MPI_SUM,
                                     comm, &requests[k]));
            check_mpi(MPI_Wait(&requests[k], MPI_STATUS_IGNORE)); /* d is freed next */
            free(d);
            k++;
        }
    }
    int pairs[2] = {rank % 3, rank}, minloc[2];
    out[k] = NULL;
    check_mpi(MPI_Iallreduce(pairs, minloc, 1, MPI_2INT, MPI_MINLOC, comm, &requests[k++]));
    int maxloc[2];
    out[k] = NULL;
    check_mpi(MPI_Iallreduce(pairs, maxloc, 1, MPI_2INT, MPI_MAXLOC, comm, &requests[k++]));
    check_mpi(MPI_Waitall(n, requests, MPI_STATUSES_IGNORE));
    k = 0;
    for (int c = 0; c < NCOUNTS; c++)
        for (int o = 0; o < NOPS; o++) {
            int root = (c + o) % size;
            tlog("%s iallreduce count %d op %d: %lu", name, counts[c], o,
                 tsum(out[k], sizeof(int) * (size_t)counts[c]));
            free(out[k++]);
            if (rank == root)
                tlog("%s ireduce count %d op %d root %d: %lu", name, counts[c], o, root,
                     tsum(out[k], sizeof(int) * (size_t)counts[c]));
            free(out[k++]);
            tlog("%s iallreduce double count %d op %d: %lu", name, counts[c], o,
                 tsum(out[k], sizeof(double) * (size_t)counts[c]));
            free(out[k++]);
        }
    tlog("%s minloc %d@%d maxloc %d@%d", name, minloc[0], minloc[1], maxloc[0], maxloc[1]);
    MPI_Op_free(&sum);
    MPI_Op_free(&first);
    free(in);
    free(out);
    free(requests);
}

/* Gather, scatter, allgather and alltoall of each count, all in flight. */
static void movements(MPI_Comm comm, const char *name)
{
    static const int counts[] = {0, 1, 7, 5000};
    enum { NCOUNTS = sizeof counts / sizeof counts[0], KINDS = 6 };
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Request requests[NCOUNTS * KINDS];
    int *bufs[NCOUNTS * KINDS][2];
    int k = 0;
    for (int c = 0; c < NCOUNTS; c++) {
        size_t one = (size_t)counts[c] + 1, all = one * (size_t)size;
        int m = counts[c], root = c % size;
        for (int kind = 0; kind < KINDS; kind++, k++) {
            bufs[k][0] = malloc(sizeof(int) * all);
            bufs[k][1] = calloc(all, sizeof(int));
            fill((unsigned char *)bufs[k][0], sizeof(int) * all, rank * 10 + kind + c);
            int *in = bufs[k][0], *out = bufs[k][1];
            switch (kind) {
            case 0:
                check_mpi(MPI_Igather(in, m, MPI_INT, out, m, MPI_INT, root, comm, &requests[k]));
                break;
            case 1: /* the root's block already in place */
                if (rank == root)
                    memcpy(out + (size_t)root * (size_t)m, in, sizeof(int) * (size_t)m);
                check_mpi(MPI_Igather(rank == root ? MPI_IN_PLACE : in, m, MPI_INT, out, m, MPI_INT,
                                      root, comm, &requests[k]));
                break;
            case 2:
                check_mpi(MPI_Iscatter(in, m, MPI_INT, out, m, MPI_INT, root, comm, &requests[k]));
                break;
            case 3:
                check_mpi(MPI_Iallgather(in, m, MPI_INT, out, m, MPI_INT, comm, &requests[k]));
                break;
            case 4:
                memcpy(out + (size_t)rank * (size_t)m, in, sizeof(int) * (size_t)m);
                check_mpi(
                    MPI_Iallgather(MPI_IN_PLACE, m, MPI_INT, out, m, MPI_INT, comm, &requests[k]));
                break;
            case 5:
                check_mpi(MPI_Ialltoall(in, m, MPI_INT, out, m, MPI_INT, comm, &requests[k]));
                break;
            }
        }
    }
    for (int i = k - 1; i >= 0; i--)
        check_mpi(MPI_Wait(&requests[i], MPI_STATUS_IGNORE));
    k = 0;
    for (int c = 0; c < NCOUNTS; c++)
        for (int kind = 0; kind < KINDS; kind++, k++) {
            int root = c % size, meaningful = kind >= 3 || kind == 2 || rank == root;
            size_t bytes = sizeof(int) * (size_t)counts[c] * (kind == 2 ? 1 : (size_t)size);
            if (meaningful)
                tlog("%s kind %d count %d: %lu", name, kind, counts[c], tsum(bufs[k][1], bytes));
            free(bufs[k][0]);
            free(bufs[k][1]);
        }
}

/* Scan and exscan (any operation, non-commutative included), gatherv and
   scatterv with uneven counts and gaps. */
static void prefixes_and_vectors(MPI_Comm comm, const char *name)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Op first;
    MPI_Op_create(user_first, 0, &first);
    MPI_Op ops[3] = {MPI_SUM, MPI_MAX, first};
    enum { N = 1000 };
    int in[N], scans[3][N], exscans[3][N];
    for (int i = 0; i < N; i++)
        in[i] = rank * 3 + i % 11;
    MPI_Request r[8];
    for (int o = 0; o < 3; o++) {
        memset(exscans[o], 0, sizeof exscans[o]); /* rank 0's result is undefined */
        check_mpi(MPI_Iscan(in, scans[o], N, MPI_INT, ops[o], comm, &r[2 * o]));
        check_mpi(MPI_Iexscan(in, exscans[o], N, MPI_INT, ops[o], comm, &r[2 * o + 1]));
    }
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    int total = 0;
    for (int i = 0; i < size; i++) {
        counts[i] = i * 3 + 1;
        displs[i] = total + i; /* a gap of i ints before each block */
        total = displs[i] + counts[i];
    }
    int *all = calloc((size_t)total + 1, sizeof(int)), *gathered = calloc((size_t)total + 1, 4);
    int *mine = calloc((size_t)counts[rank], sizeof(int));
    for (int i = 0; i < total; i++)
        all[i] = 7 * i + 1;
    for (int i = 0; i < counts[rank]; i++)
        mine[i] = rank * 100 + i;
    int root = size - 1;
    check_mpi(MPI_Igatherv(mine, counts[rank], MPI_INT, gathered, counts, displs, MPI_INT, root,
                           comm, &r[6]));
    int *scattered = calloc((size_t)counts[rank], sizeof(int));
    check_mpi(MPI_Iscatterv(all, counts, displs, MPI_INT, scattered, counts[rank], MPI_INT, 0, comm,
                            &r[7]));
    check_mpi(MPI_Waitall(8, r, MPI_STATUSES_IGNORE));
    for (int o = 0; o < 3; o++)
        tlog("%s iscan op %d: %lu, iexscan: %lu", name, o, tsum(scans[o], sizeof scans[o]),
             rank ? tsum(exscans[o], sizeof exscans[o]) : 0UL);
    if (rank == root)
        tlog("%s igatherv: %lu", name, tsum(gathered, sizeof(int) * (size_t)total));
    tlog("%s iscatterv: %lu", name, tsum(scattered, sizeof(int) * (size_t)counts[rank]));
    MPI_Op_free(&first);
    free(counts);
    free(displs);
    free(all);
    free(gathered);
    free(mine);
    free(scattered);
}

/* MPICH before 4.1 computes in-place MPI_Ialltoallw with the wrong rank's
   receive type (pmodels/mpich#6404, fixed in 4.1). */
static int mpich_before_4_1(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length, major = 0, minor = 0;
    MPI_Get_library_version(version, &length);
    const char *at = strstr(version, "MPICH Version:");
    if (!at)
        return 0;
    at += strlen("MPICH Version:");
    return sscanf(at, " %d.%d", &major, &minor) == 2 && (major < 4 || (major == 4 && minor < 1));
}

/* MPI_IN_PLACE in iscan and iexscan (each operation), ialltoallv (uneven
   counts, gaps) and ialltoallw (two types per pair, except where the MPI
   library gets that wrong), all in flight at once. */
static void in_place_prefixes_and_alltoallv(MPI_Comm comm, const char *name)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t n = (size_t)size;
    MPI_Op first;
    MPI_Op_create(user_first, 0, &first);
    MPI_Op ops[3] = {MPI_SUM, MPI_MAX, first};
    enum { N = 500 };
    int scans[3][N], exscans[3][N];
    MPI_Request r[8];
    for (int o = 0; o < 3; o++) {
        for (int i = 0; i < N; i++)
            scans[o][i] = exscans[o][i] = rank * 5 + i % 13;
        check_mpi(MPI_Iscan(MPI_IN_PLACE, scans[o], N, MPI_INT, ops[o], comm, &r[2 * o]));
        check_mpi(MPI_Iexscan(MPI_IN_PLACE, exscans[o], N, MPI_INT, ops[o], comm, &r[2 * o + 1]));
    }
    /* alltoallv: ranks i and j exchange (i + j) % 4 + 1 ints, with gaps */
    int *vc = malloc(sizeof(int) * n), *vd = malloc(sizeof(int) * n), vt = 0;
    for (int j = 0; j < size; j++)
        vc[j] = (rank + j) % 4 + 1, vd[j] = vt + 1, vt = vd[j] + vc[j];
    int *v = malloc(sizeof(int) * (size_t)vt);
    for (int i = 0; i < vt; i++)
        v[i] = rank * 100 + i;
    check_mpi(MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, v, vc, vd, MPI_INT, comm,
                             &r[6]));
    /* alltoallw: with an odd-sum peer 3 pairs of ints, else 6 ints; 32 bytes apart */
    MPI_Datatype pair, *wt = malloc(sizeof(MPI_Datatype) * n);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int *wc = malloc(sizeof(int) * n), *wd = malloc(sizeof(int) * n), mixed = !mpich_before_4_1();
    for (int j = 0; j < size; j++) {
        int odd = mixed && (rank + j) % 2;
        wt[j] = odd ? pair : MPI_INT, wc[j] = odd ? 3 : 6, wd[j] = j * 32;
    }
    int *w = malloc(32 * n);
    for (int i = 0; i < 8 * size; i++)
        w[i] = rank * 50 + i;
    check_mpi(MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, w, wc, wd, wt, comm, &r[7]));
    check_mpi(MPI_Waitall(8, r, MPI_STATUSES_IGNORE));
    for (int o = 0; o < 3; o++)
        tlog("%s iscan in place op %d: %lu, iexscan: %lu", name, o, tsum(scans[o], sizeof scans[o]),
             rank ? tsum(exscans[o], sizeof exscans[o]) : 0UL);
    int wrong = 0; /* block j holds what rank j had for this rank */
    for (int j = 0; j < size; j++) {
        int at = 0; /* where rank j's block for this rank was */
        for (int x = 0; x <= rank; x++)
            at += 1 + (x < rank ? (j + x) % 4 + 1 : 0);
        for (int k = 0; k < vc[j]; k++)
            wrong += v[vd[j] + k] != j * 100 + at + k;
        for (int k = 0; k < 6; k++)
            wrong += w[j * 8 + k] != j * 50 + rank * 8 + k;
    }
    check(wrong == 0);
    unsigned long vsum = 0, wsum = 0; /* the blocks, not the gaps */
    for (int j = 0; j < size; j++) {
        vsum = vsum * 31 + tsum(v + vd[j], sizeof(int) * (size_t)vc[j]);
        wsum = wsum * 31 + tsum((char *)w + wd[j], 24);
    }
    tlog("%s ialltoallv in place: %lu, ialltoallw in place: %lu", name, vsum, wsum);
    MPI_Type_free(&pair);
    MPI_Op_free(&first);
    free(vc), free(vd), free(v), free(wt), free(wc), free(wd), free(w);
}

/* Allgatherv, alltoallv and alltoallw with uneven counts, gaps and (w) two
   types per pair; reduce_scatter with uneven counts (one rank gets none) and
   reduce_scatter_block; MPI_IN_PLACE where allowed; all in flight at once. */
static void vectors_and_reduce_scatter(MPI_Comm comm, const char *name)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t n = (size_t)size;
    int *counts = malloc(sizeof(int) * n), *displs = malloc(sizeof(int) * n);
    int total = 0;
    for (int i = 0; i < size; i++) {
        counts[i] = (i * 5 + 2) % 7; /* 2, 0, 5, 3: rank 1 has nothing */
        /* a gap of one int between blocks; none before the first, as MPICH
           4.0.2's allgatherv on one rank ignores the displacement */
        displs[i] = total + (i > 0);
        total = displs[i] + counts[i];
    }
    enum { K = 9 };
    MPI_Request r[K];
    int mine[8], *gathered[2];
    for (int i = 0; i < 8; i++)
        mine[i] = rank * 1000 + i;
    for (int g = 0; g < 2; g++) {
        gathered[g] = calloc((size_t)total + 1, sizeof(int));
        if (g == 1) /* in place: this rank's block is already there */
            memcpy(gathered[g] + displs[rank], mine, sizeof(int) * (size_t)counts[rank]);
        check_mpi(MPI_Iallgatherv(g ? MPI_IN_PLACE : mine, counts[rank], MPI_INT, gathered[g],
                                  counts, displs, MPI_INT, comm, &r[g]));
    }
    /* alltoallv: rank i sends (i + j) % 4 + 1 ints to rank j, with gaps */
    int *sc = malloc(sizeof(int) * n), *sd = malloc(sizeof(int) * n);
    int *rc = malloc(sizeof(int) * n), *rd = malloc(sizeof(int) * n), st = 0, rt = 0;
    for (int j = 0; j < size; j++) {
        sc[j] = (rank + j) % 4 + 1, sd[j] = st + 2, st = sd[j] + sc[j];
        rc[j] = (j + rank) % 4 + 1, rd[j] = rt + 1, rt = rd[j] + rc[j];
    }
    int *vsend = malloc(sizeof(int) * (size_t)st), *vrecv = calloc((size_t)rt, sizeof(int));
    for (int i = 0; i < st; i++)
        vsend[i] = rank * 100 + i;
    check_mpi(MPI_Ialltoallv(vsend, sc, sd, MPI_INT, vrecv, rc, rd, MPI_INT, comm, &r[2]));
    /* alltoallw: to an odd-sum peer, pairs of ints as one element; bytes */
    MPI_Datatype pair, *stypes = malloc(sizeof(MPI_Datatype) * n);
    MPI_Datatype *rtypes = malloc(sizeof(MPI_Datatype) * n);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int *wsc = malloc(sizeof(int) * n), *wsd = malloc(sizeof(int) * n);
    int *wrc = malloc(sizeof(int) * n), *wrd = malloc(sizeof(int) * n);
    for (int j = 0; j < size; j++) {
        int odd = (rank + j) % 2;
        stypes[j] = odd ? pair : MPI_INT, wsc[j] = odd ? 3 : 6, wsd[j] = j * 32;
        rtypes[j] = MPI_INT, wrc[j] = 6, wrd[j] = j * 28;
    }
    int *wsend = malloc(32 * n), *wrecv = calloc(7 * n, sizeof(int));
    for (int i = 0; i < 8 * size; i++)
        wsend[i] = rank * 50 + i;
    check_mpi(MPI_Ialltoallw(wsend, wsc, wsd, stypes, wrecv, wrc, wrd, rtypes, comm, &r[3]));
    /* alltoall in place */
    int *a2a = malloc(sizeof(int) * 3 * n);
    for (int i = 0; i < 3 * size; i++)
        a2a[i] = rank * 10 + i;
    check_mpi(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a2a, 3, MPI_INT, comm, &r[4]));
    /* reduce_scatter: the input has sum(counts) ints */
    int rs_total = 0;
    for (int i = 0; i < size; i++)
        rs_total += counts[i];
    int *rs_in = malloc(sizeof(int) * (size_t)(rs_total + 1));
    int *rs_out = calloc((size_t)counts[rank] + 1, sizeof(int));
    int *rs_inplace = malloc(sizeof(int) * (size_t)(rs_total + 1));
    for (int i = 0; i < rs_total; i++)
        rs_in[i] = rs_inplace[i] = (rank + 1) * (i + 3);
    check_mpi(MPI_Ireduce_scatter(rs_in, rs_out, counts, MPI_INT, MPI_SUM, comm, &r[5]));
    check_mpi(MPI_Ireduce_scatter(MPI_IN_PLACE, rs_inplace, counts, MPI_INT, MPI_MAX, comm, &r[6]));
    enum { B = 1001 };
    int *blk_in = malloc(sizeof(int) * B * n), *blk_out = calloc(B, sizeof(int));
    double *dblk = malloc(sizeof(double) * B * n);
    for (int i = 0; i < B * size; i++)
        blk_in[i] = rank ^ i, dblk[i] = rank + i % 17;
    check_mpi(MPI_Ireduce_scatter_block(blk_in, blk_out, B, MPI_INT, MPI_BXOR, comm, &r[7]));
    check_mpi(MPI_Ireduce_scatter_block(MPI_IN_PLACE, dblk, B, MPI_DOUBLE, MPI_SUM, comm, &r[8]));
    for (int i = K - 1; i >= 0; i--)
        check_mpi(MPI_Wait(&r[i], MPI_STATUS_IGNORE));
    for (int g = 0; g < 2; g++)
        tlog("%s iallgatherv%s: %lu", name, g ? " in place" : "",
             tsum(gathered[g], sizeof(int) * (size_t)total));
    tlog("%s ialltoallv: %lu", name, tsum(vrecv, sizeof(int) * (size_t)rt));
    tlog("%s ialltoallw: %lu", name, tsum(wrecv, 28 * n));
    tlog("%s ialltoall in place: %lu", name, tsum(a2a, sizeof(int) * 3 * n));
    tlog("%s ireduce_scatter: %lu, in place: %lu", name,
         tsum(rs_out, sizeof(int) * (size_t)counts[rank]),
         tsum(rs_inplace, sizeof(int) * (size_t)counts[rank]));
    tlog("%s ireduce_scatter_block: %lu, in place: %lu", name, tsum(blk_out, sizeof(int) * B),
         tsum(dblk, sizeof(double) * B));
    MPI_Type_free(&pair);
    free(counts), free(displs), free(gathered[0]), free(gathered[1]);
    free(sc), free(sd), free(rc), free(rd), free(vsend), free(vrecv);
    free(stypes), free(rtypes), free(wsc), free(wsd), free(wrc), free(wrd), free(wsend),
        free(wrecv);
    free(a2a), free(rs_in), free(rs_out), free(rs_inplace), free(blk_in), free(blk_out), free(dblk);
}

/* The blocking collectives (Tandem runs them under TANDEM_COLL_BLOCKING=
   tandem), with a nonblocking broadcast in flight on the same communicator
   all along. */
static void blocking(MPI_Comm comm, const char *name)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t n = (size_t)size;
    enum { C = 3000 };
    int *pending = calloc(C, sizeof(int)), *a = malloc(sizeof(int) * C * n);
    int *b = calloc(C * n, sizeof(int)), root = size - 1;
    if (rank == 0)
        fill((unsigned char *)pending, sizeof(int) * C, 77);
    MPI_Request r;
    check_mpi(MPI_Ibcast(pending, C, MPI_INT, 0, comm, &r));
    for (int i = 0; i < C * size; i++)
        a[i] = rank * 7 + i % 13;
    check_mpi(MPI_Barrier(comm));
    check_mpi(MPI_Bcast(a, C, MPI_INT, root, comm));
    tlog("%s bcast: %lu", name, tsum(a, sizeof(int) * C));
    check_mpi(MPI_Allreduce(a, b, C, MPI_INT, MPI_SUM, comm));
    tlog("%s allreduce: %lu", name, tsum(b, sizeof(int) * C));
    check_mpi(MPI_Reduce(a, b, C, MPI_INT, MPI_MAX, root, comm));
    if (rank == root)
        tlog("%s reduce: %lu", name, tsum(b, sizeof(int) * C));
    check_mpi(MPI_Gather(a, 5, MPI_INT, b, 5, MPI_INT, root, comm));
    if (rank == root)
        tlog("%s gather: %lu", name, tsum(b, sizeof(int) * 5 * n));
    check_mpi(MPI_Scatter(a, 5, MPI_INT, b, 5, MPI_INT, root, comm));
    tlog("%s scatter: %lu", name, tsum(b, sizeof(int) * 5));
    check_mpi(MPI_Allgather(a, C, MPI_INT, b, C, MPI_INT, comm));
    tlog("%s allgather: %lu", name, tsum(b, sizeof(int) * C * n));
    check_mpi(MPI_Alltoall(a, C, MPI_INT, b, C, MPI_INT, comm));
    tlog("%s alltoall: %lu", name, tsum(b, sizeof(int) * C * n));
    check_mpi(MPI_Reduce_scatter_block(a, b, C, MPI_INT, MPI_SUM, comm));
    tlog("%s reduce_scatter_block: %lu", name, tsum(b, sizeof(int) * C));
    check_mpi(MPI_Scan(a, b, C, MPI_INT, MPI_SUM, comm));
    tlog("%s scan: %lu", name, tsum(b, sizeof(int) * C));
    memset(b, 0, sizeof(int) * C);
    check_mpi(MPI_Exscan(a, b, C, MPI_INT, MPI_SUM, comm));
    tlog("%s exscan: %lu", name, rank ? tsum(b, sizeof(int) * C) : 0UL);
    check_mpi(MPI_Wait(&r, MPI_STATUS_IGNORE));
    tlog("%s ibcast around them: %lu", name, tsum(pending, sizeof(int) * C));
    free(pending), free(a), free(b);
}

int main(int argc, char **argv)
{
    int rank, size, left, right;
    tinit(&argc, &argv, &rank, &size, &left, &right);

    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    const char *half_name = rank % 2 ? "odd" : "even";
    bcasts(MPI_COMM_WORLD, "world");
    bcasts(half, half_name);
    reductions(MPI_COMM_WORLD, "world");
    reductions(half, half_name);
    movements(MPI_COMM_WORLD, "world");
    movements(half, half_name);
    prefixes_and_vectors(MPI_COMM_WORLD, "world");
    prefixes_and_vectors(half, half_name);
    in_place_prefixes_and_alltoallv(MPI_COMM_WORLD, "world");
    in_place_prefixes_and_alltoallv(half, half_name);
    ordered_reductions(MPI_COMM_WORLD, "world");
    ordered_reductions(half, half_name);
    vectors_and_reduce_scatter(MPI_COMM_WORLD, "world");
    vectors_and_reduce_scatter(half, half_name);
    blocking(MPI_COMM_WORLD, "world");
    blocking(half, half_name);

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
