/*
 * FastMPJ's I/O-intensive application (Ramos et al., figures 12-14): rank 0
 * reads text files line by line into one block per rank and scatters the
 * blocks; every rank (rank 0 too) runs a synthetic workload over the lines of
 * its block. Blocking: MPI_Scatter, then process. Nonblocking: up to M
 * MPI_Iscatter in flight (MaxConcurrent): rank 0 reads the next buffer while
 * earlier scatters move, the other ranks keep M scatters posted and process
 * whichever block arrives. The end is a block marked final (M of them in the
 * nonblocking form, one per scatter still posted).
 *
 * The input: text files whose line lengths change every 256 KiB (8 to 1024
 * characters), so blocks differ in their number of lines and the work is
 * unbalanced, as in FastMPJ's financial data. The workload is OPS operations
 * per line, whatever its length.
 *
 *   coll_io_app DIR MODES OPS [TRIALS] [BLOCK_KIB] [INPUT_MIB]
 *     MODES  comma-separated: block, nbcM (M concurrent Iscatters: nbc4, nbc16)
 *
 * DIR receives the input files (made once, by rank 0). One JSON object per
 * mode and trial on stdout; modes alternate within each trial. Each record
 * says whether every byte and line of the input was processed exactly once.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FILES = 4, HEADER = 8, REGION = 256 * 1024 };

typedef struct {
    int32_t length; /* bytes of text after the header */
    int32_t final;  /* 1: no more data */
} header;

static int rank, size, ops;
static size_t block_bytes;
static char paths[FILES][4096];
static volatile double sink;

/* -------------------------------------------------------------- the input */

static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return *state >> 33;
}

/* Rank 0: write the input files unless they are there with the right size. */
static int make_input(const char *dir, size_t total)
{
    uint64_t state = 42;
    for (int f = 0; f < FILES; f++) {
        snprintf(paths[f], sizeof paths[f], "%s/tandem-ioapp-%zu-%d.txt", dir, total, f);
        FILE *in = fopen(paths[f], "r");
        if (in) {
            fseek(in, 0, SEEK_END);
            long have = ftell(in);
            fclose(in);
            if (have == (long)(total / FILES))
                continue;
        }
        FILE *out = fopen(paths[f], "w");
        if (!out) {
            perror(paths[f]);
            return -1;
        }
        size_t written = 0, length = 0;
        while (written < total / FILES) {
            if (written % REGION < length || length == 0) /* a new region */
                length = 8 + next_random(&state) % 1017;
            size_t n = length < total / FILES - written ? length : total / FILES - written;
            for (size_t i = 0; i + 1 < n; i++)
                fputc('a' + (int)(next_random(&state) % 26), out);
            fputc('\n', out);
            written += n;
        }
        fclose(out);
    }
    return 0;
}

/* Rank 0's reader: whole lines, file after file. */
typedef struct {
    int file;
    FILE *in;
    char line[2048];
    size_t pending; /* a line read that did not fit in the last block */
} reader;

static int read_line(reader *r)
{
    if (r->pending)
        return 1;
    while (r->file < FILES) {
        if (!r->in && !(r->in = fopen(paths[r->file], "r")))
            return 0;
        if (fgets(r->line, sizeof r->line, r->in)) {
            r->pending = strlen(r->line);
            return 1;
        }
        fclose(r->in);
        r->in = NULL;
        r->file++;
    }
    return 0;
}

/* Fill every rank's block of 'buffer' with whole lines; 0 when the input had
   nothing left. */
static int fill(reader *r, char *buffer)
{
    int any = 0;
    for (int i = 0; i < size; i++) {
        char *block = buffer + (size_t)i * block_bytes;
        header h = {0, 0};
        while (read_line(r) && HEADER + (size_t)h.length + r->pending <= block_bytes) {
            memcpy(block + HEADER + h.length, r->line, r->pending);
            h.length += (int32_t)r->pending;
            r->pending = 0;
            any = 1;
        }
        memcpy(block, &h, sizeof h);
    }
    return any;
}

static void mark_final(char *buffer)
{
    header h = {0, 1};
    for (int i = 0; i < size; i++)
        memcpy(buffer + (size_t)i * block_bytes, &h, sizeof h);
}

/* ----------------------------------------------------------- the workload */

typedef struct {
    long long bytes, lines;
} tally;

/* OPS operations per line; returns 1 when the block is the final one. */
static int process(const char *block, tally *t)
{
    header h;
    memcpy(&h, block, sizeof h);
    if (h.final)
        return 1;
    const char *text = block + HEADER, *end = text + h.length;
    double acc = 0;
    while (text < end) {
        const char *eol = memchr(text, '\n', (size_t)(end - text));
        size_t len = eol ? (size_t)(eol - text) + 1 : (size_t)(end - text);
        for (int k = 0; k < ops; k++)
            acc = acc * 0.999999 + text[(size_t)k % len];
        t->lines++;
        t->bytes += (long long)len;
        text += len;
    }
    sink += acc;
    return 0;
}

/* -------------------------------------------------------------- the modes */

static void run_blocking(char *buffer, char *mine, tally *t)
{
    if (rank == 0) {
        reader r = {0};
        int more = 1;
        while (more) {
            if (!(more = fill(&r, buffer)))
                mark_final(buffer);
            MPI_Scatter(buffer, (int)block_bytes, MPI_BYTE, MPI_IN_PLACE, (int)block_bytes,
                        MPI_BYTE, 0, MPI_COMM_WORLD);
            process(buffer, t);
        }
        return;
    }
    for (;;) {
        MPI_Scatter(NULL, 0, MPI_BYTE, mine, (int)block_bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (process(mine, t))
            return;
    }
}

static void run_nonblocking(int m, char **buffers, MPI_Request *requests, tally *t)
{
    for (int i = 0; i < m; i++)
        requests[i] = MPI_REQUEST_NULL;
    if (rank == 0) {
        reader r = {0};
        int more = 1, finals = 0, slot = 0, used = 0;
        while (finals < m) {
            if (used < m) { /* a buffer never used yet */
                slot = used++;
            } else {
                MPI_Waitany(m, requests, &slot, MPI_STATUS_IGNORE);
            }
            if (!more || !(more = fill(&r, buffers[slot]))) {
                mark_final(buffers[slot]); /* one per scatter the others keep posted */
                finals++;
            }
            MPI_Iscatter(buffers[slot], (int)block_bytes, MPI_BYTE, MPI_IN_PLACE, (int)block_bytes,
                         MPI_BYTE, 0, MPI_COMM_WORLD, &requests[slot]);
            process(buffers[slot], t); /* rank 0's own block: the send buffer is readable */
        }
        MPI_Waitall(m, requests, MPI_STATUSES_IGNORE);
        return;
    }
    for (int i = 0; i < m; i++)
        MPI_Iscatter(NULL, 0, MPI_BYTE, buffers[i], (int)block_bytes, MPI_BYTE, 0, MPI_COMM_WORLD,
                     &requests[i]);
    for (;;) {
        int slot;
        MPI_Waitany(m, requests, &slot, MPI_STATUS_IGNORE);
        if (slot == MPI_UNDEFINED)
            return; /* every scatter ended with a final block */
        if (!process(buffers[slot], t))
            MPI_Iscatter(NULL, 0, MPI_BYTE, buffers[slot], (int)block_bytes, MPI_BYTE, 0,
                         MPI_COMM_WORLD, &requests[slot]);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: coll_io_app DIR block,nbc4,... OPS [TRIALS] [BLOCK_KIB] "
                            "[INPUT_MIB]\n");
        MPI_Finalize();
        return 1;
    }
    ops = atoi(argv[3]);
    int trials = argc > 4 ? atoi(argv[4]) : 3;
    block_bytes = (size_t)(argc > 5 ? atoi(argv[5]) : 512) * 1024;
    size_t total = (size_t)(argc > 6 ? atoi(argv[6]) : 64) << 20;
    int ok = rank == 0 ? make_input(argv[1], total) == 0 : 1;
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {
        MPI_Finalize();
        return 1;
    }
    long long expected_lines = 0;
    if (rank == 0) { /* the truth: the lines of the input */
        reader r = {0};
        while (read_line(&r))
            expected_lines++, r.pending = 0;
    }
    enum { MODES = 16 };
    int concurrent[MODES], nmodes = 0, most = 1;
    for (char *m = strtok(argv[2], ","); m && nmodes < MODES; m = strtok(NULL, ",")) {
        concurrent[nmodes] = strcmp(m, "block") == 0 ? 0 : atoi(m + 3);
        most = concurrent[nmodes] > most ? concurrent[nmodes] : most;
        nmodes++;
    }
    char **buffers = malloc(sizeof(char *) * (size_t)most);
    for (int i = 0; i < most; i++)
        buffers[i] = calloc(rank == 0 ? (size_t)size : 1, block_bytes);
    MPI_Request *requests = malloc(sizeof(MPI_Request) * (size_t)most);
    for (int trial = 0; trial < trials; trial++) {
        for (int k = 0; k < nmodes; k++) {
            tally t = {0, 0}, all;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (concurrent[k] == 0)
                run_blocking(buffers[0], buffers[0], &t);
            else
                run_nonblocking(concurrent[k], buffers, requests, &t);
            double mine = MPI_Wtime() - t0, slowest;
            MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            MPI_Reduce(&t, &all, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                char mode[16];
                snprintf(mode, sizeof mode, concurrent[k] ? "nbc%d" : "block", concurrent[k]);
                printf(
                    "{\"benchmark\": \"ioapp\", \"mode\": \"%s\", \"concurrent\": %d, "
                    "\"ranks\": %d, \"ops_per_line\": %d, \"block_bytes\": %zu, "
                    "\"input_bytes\": %zu, \"trial\": %d, \"time_s\": %.6f, \"lines\": %lld, "
                    "\"correct\": %s}\n",
                    mode, concurrent[k], size, ops, block_bytes, total, trial, slowest, all.lines,
                    all.bytes == (long long)(total / FILES * FILES) && all.lines == expected_lines
                        ? "true"
                        : "false");
                fflush(stdout);
            }
        }
    }
    for (int i = 0; i < most; i++)
        free(buffers[i]);
    free(buffers);
    free(requests);
    MPI_Finalize();
    return sink == 12345.678; /* keeps the workload */
}
