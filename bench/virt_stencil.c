/*
 * The 2D stencil of TinyMPI's report (its Listing 1): each step computes,
 * then exchanges halos with 4 neighbours. One plain MPI program, built
 * against the real MPI (tandem-bench-virt-stencil-real) and with `tandem cc`
 * (tandem-bench-virt-stencil), so that the same source runs as MPI
 * processes and as virtual ranks. It calls only what the virtual ranks
 * support: Init, Finalize, Comm_rank/size, Irecv, Isend, Waitall, Sendrecv,
 * Barrier, Allreduce, Wtime.
 *
 * Strong scaling, as the report's: a fixed global grid of GX x GY doubles,
 * periodic. The P ranks are CORES groups of P / CORES consecutive ranks
 * (the ranks of one core under `tandem run --virtual V`, where consecutive
 * ranks share a core: CORES = hosts x cores); core k holds the rows
 * [k GY / CORES, (k + 1) GY / CORES), which its V ranks split in columns.
 * So the east and west neighbours of a rank are ranks of its own core
 * (itself when V = 1), and the north and south neighbours those of the
 * cores above and below: on another host when one core per host is used.
 * With V ranks per core each rank gets 1/V of its core's work, and the
 * bytes a core sends north and south do not change with V.
 *
 * One step: every point becomes the mean of itself and its 4 neighbours,
 * then KMAX iterations of a little arithmetic on it (the compute intensity);
 * then the exchange of HALO rows or columns with each neighbour:
 *   nonblocking  4 MPI_Irecv, 4 MPI_Isend, MPI_Waitall (the report's);
 *   blocking     4 MPI_Sendrecv, one per direction;
 *   overlap      the outer rows and columns first, then 4 MPI_Irecv and
 *                4 MPI_Isend, the interior while they travel, MPI_Waitall.
 * Every point's value depends on the global grid only, not on the
 * decomposition: the checksum (the sum of the values' bits, an integer, so
 * that the order of the sum does not matter) is the same for any number of
 * ranks, virtual or not, and any exchange.
 *
 *   virt_stencil [--grid GX,GY] [--kmax K] [--halo W] [--steps S]
 *                [--trials T] [--exchange nonblocking|blocking|overlap] [--cores N]
 *                [--check]
 *
 * --cores N: the N groups of consecutive ranks, one per core (default 1; the
 * hosts x cores of `tandem run --virtual`). With --check rank 0 prints the
 * checksum line only (the tests compare it); else one JSON object: the median over the trials of
 * the time per step (the slowest rank's), the compute time per step of a core (the sum over its
 * ranks, the mean over the cores), the rest (communication and waiting),
 * and the checksum.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TRIALS 64

typedef struct {
    long gx, gy;          /* the global grid, points */
    int kmax;             /* arithmetic iterations per point and step (default 4) */
    int halo;             /* rows or columns per message (default 2) */
    int steps;            /* per trial (default 50) */
    int trials;           /* each timed on its own (default 3) */
    int cores;            /* groups of consecutive ranks, one row of tiles each (default 1) */
    const char *exchange; /* nonblocking, blocking or overlap */
    int check;            /* print the checksum only (--check) */
} options;

typedef struct {
    int rank, size, per_core, core, v;
    long nx, ny, x0, y0; /* the tile, points, and its first global column and row */
    long w;              /* halo width */
    long stride;         /* nx + 2 w */
    double *old, *new;   /* (ny + 2 w) x (nx + 2 w), the halo around */
    double *east_out, *west_out, *east_in, *west_in; /* packed columns, w x ny */
    int north, south, east, west;
} tile;

static void usage(const char *why)
{
    fprintf(stderr,
            "virt_stencil: %s\n"
            "usage: virt_stencil [--grid GX,GY] [--kmax K] [--halo W] [--steps S] [--trials T]\n"
            "                    [--exchange nonblocking|blocking|overlap] [--cores N] [--check]\n"
            "  --cores N: the ranks form N groups of consecutive ranks, one per core (the\n"
            "  hosts x cores of tandem run --virtual; for MPI processes, the cores they share)\n",
            why);
}

static int parse(int argc, char **argv, options *o, char *why, size_t len)
{
    *o = (options){8192, 256, 4, 2, 50, 3, 1, "nonblocking", 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--check")) {
            o->check = 1;
            continue;
        }
        if (!v) {
            snprintf(why, len, "%s: expected a value after it", a);
            return 1;
        }
        i++;
        if (!strcmp(a, "--grid")) {
            if (sscanf(v, "%ld,%ld", &o->gx, &o->gy) != 2 || o->gx < 1 || o->gy < 1) {
                snprintf(why, len, "--grid %s: expected GX,GY, two positive point counts", v);
                return 1;
            }
        } else if (!strcmp(a, "--exchange")) {
            if (strcmp(v, "nonblocking") && strcmp(v, "blocking") && strcmp(v, "overlap")) {
                snprintf(why, len, "--exchange %s: expected nonblocking, blocking or overlap", v);
                return 1;
            }
            o->exchange = v;
        } else {
            int *field = !strcmp(a, "--kmax")     ? &o->kmax
                         : !strcmp(a, "--halo")   ? &o->halo
                         : !strcmp(a, "--steps")  ? &o->steps
                         : !strcmp(a, "--trials") ? &o->trials
                         : !strcmp(a, "--cores")  ? &o->cores
                                                  : NULL;
            if (!field) {
                snprintf(why, len, "%s: unknown option", a);
                return 1;
            }
            char *end;
            long n = strtol(v, &end, 10);
            int low = field == &o->kmax ? 0 : 1;
            if (*end || n < low || n > 1000000) {
                snprintf(why, len, "%s %s: expected a whole number from %d to 1000000", a, v, low);
                return 1;
            }
            *field = (int)n;
        }
    }
    if (o->trials > MAX_TRIALS) {
        snprintf(why, len, "--trials %d: expected at most %d", o->trials, MAX_TRIALS);
        return 1;
    }
    return 0;
}

static double initial(long i, long j)
{
    return (double)((i * 7 + j * 13) % 101) / 101.0;
}

#define AT(t, a, row, col) ((a)[((row) + (t)->w) * (t)->stride + (col) + (t)->w])

/* The new value of point (row, col) of the tile from the old array. */
static inline double point(const tile *t, int kmax, long row, long col)
{
    const double *a = t->old;
    double v = 0.2 * (AT(t, a, row, col) + AT(t, a, row - 1, col) + AT(t, a, row + 1, col) +
                      AT(t, a, row, col - 1) + AT(t, a, row, col + 1));
    for (int k = 0; k < kmax; k++)
        v = v * (1.0 - 0.25 * v) + 0.125;
    return v;
}

static void compute_rows(tile *t, int kmax, long r0, long r1, long c0, long c1)
{
    for (long row = r0; row < r1; row++)
        for (long col = c0; col < c1; col++)
            AT(t, t->new, row, col) = point(t, kmax, row, col);
}

/* The outer w rows and columns of the tile (the ones sent). */
static void compute_border(tile *t, int kmax)
{
    long w = t->w < t->ny ? t->w : t->ny, wc = t->w < t->nx ? t->w : t->nx;
    compute_rows(t, kmax, 0, w, 0, t->nx);
    if (t->ny > w)
        compute_rows(t, kmax, t->ny - w > w ? t->ny - w : w, t->ny, 0, t->nx);
    if (t->ny > 2 * w) {
        compute_rows(t, kmax, w, t->ny - w, 0, wc);
        if (t->nx > wc)
            compute_rows(t, kmax, w, t->ny - w, t->nx - wc > wc ? t->nx - wc : wc, t->nx);
    }
}

static void compute_interior(tile *t, int kmax)
{
    if (t->ny > 2 * t->w && t->nx > 2 * t->w)
        compute_rows(t, kmax, t->w, t->ny - t->w, t->w, t->nx - t->w);
}

static void pack_columns(tile *t)
{
    for (long row = 0; row < t->ny; row++)
        for (long k = 0; k < t->w; k++) {
            t->west_out[row * t->w + k] = AT(t, t->new, row, k);
            t->east_out[row * t->w + k] = AT(t, t->new, row, t->nx - t->w + k);
        }
}

static void unpack_columns(tile *t)
{
    for (long row = 0; row < t->ny; row++)
        for (long k = 0; k < t->w; k++) {
            AT(t, t->new, row, -t->w + k) = t->west_in[row * t->w + k];
            AT(t, t->new, row, t->nx + k) = t->east_in[row * t->w + k];
        }
}

/* The tags say the direction the data travel, so that a rank that is its
   own neighbour (or both neighbours of another) matches each message. */
enum { TO_NORTH = 1, TO_SOUTH, TO_EAST, TO_WEST };

static void post(tile *t, MPI_Request *req)
{
    long rowbytes = t->w * t->stride;
    int n = (int)rowbytes, c = (int)(t->w * t->ny);
    double *a = t->new;
    /* receive from the south what travels north into the rows below the tile, ... */
    MPI_Irecv(&AT(t, a, t->ny, -t->w), n, MPI_DOUBLE, t->south, TO_NORTH, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(&AT(t, a, -t->w, -t->w), n, MPI_DOUBLE, t->north, TO_SOUTH, MPI_COMM_WORLD, &req[1]);
    MPI_Irecv(t->west_in, c, MPI_DOUBLE, t->west, TO_EAST, MPI_COMM_WORLD, &req[2]);
    MPI_Irecv(t->east_in, c, MPI_DOUBLE, t->east, TO_WEST, MPI_COMM_WORLD, &req[3]);
    MPI_Isend(&AT(t, a, 0, -t->w), n, MPI_DOUBLE, t->north, TO_NORTH, MPI_COMM_WORLD, &req[4]);
    MPI_Isend(&AT(t, a, t->ny - t->w, -t->w), n, MPI_DOUBLE, t->south, TO_SOUTH, MPI_COMM_WORLD,
              &req[5]);
    MPI_Isend(t->east_out, c, MPI_DOUBLE, t->east, TO_EAST, MPI_COMM_WORLD, &req[6]);
    MPI_Isend(t->west_out, c, MPI_DOUBLE, t->west, TO_WEST, MPI_COMM_WORLD, &req[7]);
}

/* The rows exchanged north and south are whole rows of the array, the
   columns of the halo included: the corners are not read by the stencil. */
static void exchange_blocking(tile *t)
{
    int n = (int)(t->w * t->stride), c = (int)(t->w * t->ny);
    double *a = t->new;
    MPI_Sendrecv(&AT(t, a, 0, -t->w), n, MPI_DOUBLE, t->north, TO_NORTH, &AT(t, a, t->ny, -t->w), n,
                 MPI_DOUBLE, t->south, TO_NORTH, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&AT(t, a, t->ny - t->w, -t->w), n, MPI_DOUBLE, t->south, TO_SOUTH,
                 &AT(t, a, -t->w, -t->w), n, MPI_DOUBLE, t->north, TO_SOUTH, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(t->east_out, c, MPI_DOUBLE, t->east, TO_EAST, t->west_in, c, MPI_DOUBLE, t->west,
                 TO_EAST, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(t->west_out, c, MPI_DOUBLE, t->west, TO_WEST, t->east_in, c, MPI_DOUBLE, t->east,
                 TO_WEST, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* One step; returns the seconds spent computing. */
static double step(tile *t, const options *o)
{
    MPI_Request req[8];
    double t0 = MPI_Wtime(), busy;
    if (!strcmp(o->exchange, "overlap")) {
        compute_border(t, o->kmax);
        pack_columns(t);
        busy = MPI_Wtime() - t0;
        post(t, req);
        double t1 = MPI_Wtime();
        compute_interior(t, o->kmax);
        busy += MPI_Wtime() - t1;
        MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
    } else {
        compute_border(t, o->kmax);
        compute_interior(t, o->kmax);
        pack_columns(t);
        busy = MPI_Wtime() - t0;
        if (!strcmp(o->exchange, "blocking")) {
            exchange_blocking(t);
        } else {
            post(t, req);
            MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
        }
    }
    unpack_columns(t);
    double *swap = t->old;
    t->old = t->new;
    t->new = swap;
    return busy;
}

static void fill(tile *t, const options *o)
{
    for (long row = -t->w; row < t->ny + t->w; row++)
        for (long col = -t->w; col < t->nx + t->w; col++) {
            long i = ((t->y0 + row) % o->gy + o->gy) % o->gy;
            long j = ((t->x0 + col) % o->gx + o->gx) % o->gx;
            AT(t, t->old, row, col) = initial(i, j);
            AT(t, t->new, row, col) = 0.0;
        }
}

static uint64_t checksum(const tile *t)
{
    uint64_t sum = 0;
    for (long row = 0; row < t->ny; row++)
        for (long col = 0; col < t->nx; col++) {
            uint64_t bits;
            double v = AT(t, t->old, row, col);
            memcpy(&bits, &v, sizeof bits);
            sum += bits ^ (bits >> 29);
        }
    return sum;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    options o;
    char why[200];
    tile t = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &t.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t.size);
    int bad = parse(argc, argv, &o, why, sizeof why);
    if (!bad && t.size % o.cores) {
        snprintf(why, sizeof why, "--cores %d: the %d ranks must be a multiple of it", o.cores,
                 t.size);
        bad = 1;
    }
    if (!bad) {
        t.per_core = t.size / o.cores;
        t.w = o.halo;
        if (o.gy % o.cores || o.gx % t.per_core || o.gy / o.cores < t.w ||
            o.gx / t.per_core < t.w) {
            snprintf(why, sizeof why,
                     "--grid %ld,%ld: GY must be a multiple of the %d cores and GX of the %d "
                     "ranks per core, each tile at least --halo %d wide",
                     o.gx, o.gy, o.cores, t.per_core, o.halo);
            bad = 1;
        }
    }
    if (bad) {
        if (t.rank == 0)
            usage(why);
        MPI_Finalize();
        return 2;
    }
    t.core = t.rank / t.per_core;
    t.v = t.rank % t.per_core;
    t.nx = o.gx / t.per_core;
    t.ny = o.gy / o.cores;
    t.x0 = t.v * t.nx;
    t.y0 = t.core * t.ny;
    t.stride = t.nx + 2 * t.w;
    t.north = ((t.core + o.cores - 1) % o.cores) * t.per_core + t.v;
    t.south = ((t.core + 1) % o.cores) * t.per_core + t.v;
    t.west = t.core * t.per_core + (t.v + t.per_core - 1) % t.per_core;
    t.east = t.core * t.per_core + (t.v + 1) % t.per_core;
    size_t cells = (size_t)(t.ny + 2 * t.w) * (size_t)t.stride;
    size_t column = (size_t)(t.w * t.ny);
    t.old = malloc(cells * sizeof(double));
    t.new = malloc(cells * sizeof(double));
    double *columns = malloc(4 * column * sizeof(double));
    if (!t.old || !t.new || !columns) {
        fprintf(stderr, "virt_stencil: rank %d: out of memory\n", t.rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    t.east_out = columns;
    t.west_out = columns + column;
    t.east_in = columns + 2 * column;
    t.west_in = columns + 3 * column;

    double per_step[MAX_TRIALS], busy_step[MAX_TRIALS];
    uint64_t sum = 0;
    for (int trial = 0; trial < o.trials; trial++) {
        fill(&t, &o);
        MPI_Barrier(MPI_COMM_WORLD);
        double busy = 0, t0 = MPI_Wtime();
        for (int s = 0; s < o.steps; s++)
            busy += step(&t, &o);
        double mine[2] = {MPI_Wtime() - t0, busy}, all[2];
        MPI_Allreduce(&mine[0], &all[0], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&mine[1], &all[1], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        per_step[trial] = all[0] / o.steps;
        busy_step[trial] = all[1] / o.cores / o.steps; /* a core's: the sum over its ranks */
        uint64_t local = checksum(&t);
        MPI_Allreduce(&local, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    }
    if (t.rank == 0 && o.check) {
        printf("checksum %016llx\n", (unsigned long long)sum);
    } else if (t.rank == 0) {
        double sorted[MAX_TRIALS];
        memcpy(sorted, per_step, sizeof(double) * (size_t)o.trials);
        qsort(sorted, (size_t)o.trials, sizeof(double), compare);
        double median = sorted[o.trials / 2];
        memcpy(sorted, busy_step, sizeof(double) * (size_t)o.trials);
        qsort(sorted, (size_t)o.trials, sizeof(double), compare);
        double compute = sorted[o.trials / 2];
        printf("{\"benchmark\": \"virt-stencil\", \"ranks\": %d, \"cores\": %d, "
               "\"grid\": [%ld, %ld], \"kmax\": %d, \"halo\": %d, \"steps\": %d, "
               "\"trials\": %d, \"exchange\": \"%s\", \"step_s\": %.9f, \"compute_s\": %.9f, "
               "\"comm_s\": %.9f, \"steps_s\": [",
               t.size, o.cores, o.gx, o.gy, o.kmax, o.halo, o.steps, o.trials, o.exchange, median,
               compute, median - compute > 0 ? median - compute : 0.0);
        for (int i = 0; i < o.trials; i++)
            printf("%s%.9f", i ? ", " : "", per_step[i]);
        printf("], \"checksum\": \"%016llx\"}\n", (unsigned long long)sum);
    }
    free(t.old);
    free(t.new);
    free(columns);
    MPI_Finalize();
    return 0;
}
