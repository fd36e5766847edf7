/*
 * 3D heat conduction whose halos move by one-sided gets, as DART-MPI's
 * paper measured it (docs/PERFORMANCE.md, "One-sided: heat conduction").
 * An EDGE^3 grid is cut into slabs along z, one per rank; each step every
 * rank reads its neighbours' boundary planes into its ghost planes with
 * MPI_Rget under a lock_all epoch held for the whole run, and updates its
 * cells with a 7-point stencil (explicit Euler, the grid's outer faces
 * fixed). Two modes, alternated over the trials of one launch:
 *
 *   blocking    get the halos, wait for them, then update every plane
 *   overlapped  post the gets, update the planes that need no halo, wait,
 *               then update the two planes next to the halos
 *
 * The grid is double-buffered (a step reads one copy and writes the other)
 * and each step ends with MPI_Win_sync and a barrier, so a neighbour's plane
 * is never rewritten while a get reads it. A target that serves gets only
 * inside its MPI calls answers the overlapped gets once its own update is
 * over, and the overlapped step then takes as long as the blocking one.
 * Both modes must end with bitwise the same grid: each rank compares its
 * checksums, and the world's sum is printed.
 *
 *   heat3d [EDGE [STEPS [TRIALS]]]   defaults 160, 20, 3; 2 ranks or more,
 *                                    at least 2 planes each
 * One JSON object on stdout (rank 0): per mode the median time per step over
 * the trials and every trial, the update alone, and whether the modes agree.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

struct grid {
    int nx, ny, nz;   /* nz: this rank's planes, without the two ghosts */
    size_t plane;     /* cells per plane */
    double *cells[2]; /* each nz + 2 planes: ghost 0, planes 1..nz, ghost nz + 1 */
    MPI_Win win[2];   /* a window over each copy */
    int rank, size;
    int below, above; /* neighbour ranks, or MPI_PROC_NULL */
    int below_nz;     /* the planes of the rank below */
    long z0;          /* this rank's first plane in the whole grid */
};

static int planes_of(int edge, int size, int rank)
{
    return edge / size + (rank < edge % size);
}

static void usage(const char *why)
{
    fprintf(stderr, "heat3d: %s\nusage: heat3d [EDGE [STEPS [TRIALS]]] on 2 or more ranks\n", why);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* The starting temperature: a hot ball in a cold box. */
static void initialize(struct grid *g, int edge)
{
    for (int c = 0; c < 2; c++)
        memset(g->cells[c], 0, (size_t)(g->nz + 2) * g->plane * sizeof(double));
    double centre = edge / 2.0, radius2 = (edge / 4.0) * (edge / 4.0);
    for (int z = 1; z <= g->nz; z++)
        for (int y = 0; y < g->ny; y++)
            for (int x = 0; x < g->nx; x++) {
                double dz = (double)(g->z0 + z - 1) - centre, dy = y - centre, dx = x - centre;
                double t = dx * dx + dy * dy + dz * dz < radius2 ? 100.0 : 0.0;
                size_t i = (size_t)z * g->plane + (size_t)y * (size_t)g->nx + (size_t)x;
                g->cells[0][i] = g->cells[1][i] = t;
            }
}

/* The stencil on planes [z0, z1) of copy 'from' into copy 'to'. Cells on the
   grid's outer faces keep their value. */
static void update(const struct grid *g, int from, int z0, int z1)
{
    const double k = 0.1;
    const size_t nx = (size_t)g->nx, plane = g->plane;
    for (int z = z0; z < z1; z++) {
        int face = (g->rank == 0 && z == 1) || (g->rank == g->size - 1 && z == g->nz);
        const double *c = g->cells[from] + (size_t)z * plane;
        double *t = g->cells[1 - from] + (size_t)z * plane;
        for (int y = 0; y < g->ny; y++)
            for (int x = 0; x < g->nx; x++) {
                size_t i = (size_t)y * nx + (size_t)x;
                if (face || x == 0 || y == 0 || x == g->nx - 1 || y == g->ny - 1) {
                    t[i] = c[i];
                    continue;
                }
                t[i] = c[i] + k * (c[i - 1] + c[i + 1] + c[i - nx] + c[i + nx] + c[i - plane] +
                                   c[i + plane] - 6 * c[i]);
            }
    }
}

/* Post the gets of the neighbours' boundary planes of copy 'from' into this
   rank's ghost planes of the same copy. Returns the number of requests. */
static int get_halos(struct grid *g, int from, MPI_Request *req)
{
    int n = 0, count = (int)g->plane;
    double *u = g->cells[from];
    if (g->below != MPI_PROC_NULL) /* its last plane, nz, into ghost 0 */
        MPI_Rget(u, count, MPI_DOUBLE, g->below, (MPI_Aint)g->below_nz * (MPI_Aint)g->plane, count,
                 MPI_DOUBLE, g->win[from], &req[n++]);
    if (g->above != MPI_PROC_NULL) /* its first plane, 1, into ghost nz + 1 */
        MPI_Rget(u + (size_t)(g->nz + 1) * g->plane, count, MPI_DOUBLE, g->above,
                 (MPI_Aint)g->plane, count, MPI_DOUBLE, g->win[from], &req[n++]);
    return n;
}

/* 'steps' steps of one mode from the starting grid; returns the seconds per
   step and sets the copy that holds the result. */
static double run(struct grid *g, int edge, int steps, int overlapped, int *result)
{
    initialize(g, edge);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int cur = 0;
    for (int s = 0; s < steps; s++) {
        MPI_Request req[2];
        int n = get_halos(g, cur, req);
        if (overlapped) {
            update(g, cur, 2, g->nz); /* the planes that need no ghost */
            MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
            update(g, cur, 1, 2);
            if (g->nz > 1)
                update(g, cur, g->nz, g->nz + 1);
        } else {
            MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
            update(g, cur, 1, g->nz + 1);
        }
        MPI_Win_sync(g->win[1 - cur]);
        MPI_Barrier(MPI_COMM_WORLD);
        cur = 1 - cur;
    }
    *result = cur;
    return (MPI_Wtime() - t0) / steps;
}

static double checksum(const struct grid *g, int copy)
{
    double sum = 0;
    const double *u = g->cells[copy] + g->plane;
    size_t first = (size_t)g->z0 * g->plane; /* weights by place in the whole grid */
    for (size_t i = 0; i < (size_t)g->nz * g->plane; i++)
        sum += u[i] * (double)((first + i) % 7 + 1);
    return sum;
}

static void print_list(const char *name, const double *v, int n)
{
    printf("\"%s\": [", name);
    for (int i = 0; i < n; i++)
        printf("%s%.6f", i ? ", " : "", v[i]);
    printf("], ");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct grid g;
    memset(&g, 0, sizeof g);
    MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g.size);
    int edge = argc > 1 ? atoi(argv[1]) : 160;
    int steps = argc > 2 ? atoi(argv[2]) : 20;
    int trials = argc > 3 ? atoi(argv[3]) : 3;
    if (g.size < 2)
        usage("needs 2 or more ranks");
    if (edge < 8 || edge > 2048 || edge / g.size < 2)
        usage("EDGE must be 8 to 2048, and at least 2 planes per rank");
    if (steps < 1 || steps > 100000 || trials < 1 || trials > 1000)
        usage("STEPS must be 1 to 100000 and TRIALS 1 to 1000");
    g.nx = g.ny = edge;
    g.plane = (size_t)edge * (size_t)edge;
    g.nz = planes_of(edge, g.size, g.rank);
    for (int r = 0; r < g.rank; r++)
        g.z0 += planes_of(edge, g.size, r);
    g.below = g.rank > 0 ? g.rank - 1 : MPI_PROC_NULL;
    g.above = g.rank < g.size - 1 ? g.rank + 1 : MPI_PROC_NULL;
    g.below_nz = g.rank > 0 ? planes_of(edge, g.size, g.rank - 1) : 0;
    /* whole 64-byte lines: MPICH 4.0.2's windows of other sizes read zeros
       on 4 ranks (docs/ONESIDED.md) */
    MPI_Aint bytes = (MPI_Aint)((size_t)(g.nz + 2) * g.plane * sizeof(double) + 63) / 64 * 64;
    for (int c = 0; c < 2; c++) {
        MPI_Win_allocate(bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &g.cells[c],
                         &g.win[c]);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, g.win[c]);
    }

    /* the update alone, for the record */
    initialize(&g, edge);
    double *alone = malloc(sizeof(double) * (size_t)trials);
    for (int t = 0; t < trials; t++) {
        double t0 = MPI_Wtime();
        update(&g, 0, 1, g.nz + 1);
        alone[t] = MPI_Wtime() - t0;
    }
    double *times[2] = {malloc(sizeof(double) * (size_t)trials),
                        malloc(sizeof(double) * (size_t)trials)};
    double sums[2] = {0, 0};
    int agree = 1;
    for (int t = 0; t < 2 * trials; t++) {
        int overlapped = (t + t / 2) % 2; /* blocking first, then each first in turn */
        int copy;
        times[overlapped][t / 2] = run(&g, edge, steps, overlapped, &copy);
        double sum = checksum(&g, copy);
        if (t < 2)
            sums[overlapped] = sum;
        else
            agree &= sum == sums[overlapped];
    }
    agree &= sums[0] == sums[1];
    int all_agree;
    MPI_Allreduce(&agree, &all_agree, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    double world_sum;
    MPI_Allreduce(&sums[0], &world_sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double update_s = median(alone, trials), worst;
    MPI_Allreduce(&update_s, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    if (g.rank == 0) {
        double blocking = median(times[0], trials), overlapped = median(times[1], trials);
        printf("{\"edge\": %d, \"ranks\": %d, \"steps\": %d, \"trials\": %d, \"halo_bytes\": %zu, ",
               edge, g.size, steps, trials, g.plane * sizeof(double));
        print_list("blocking", times[0], trials);
        print_list("overlapped", times[1], trials);
        printf("\"blocking_s\": %.6f, \"overlapped_s\": %.6f, \"update_s\": %.6f, "
               "\"speedup\": %.3f, \"agree\": %s, \"checksum\": %.6e}\n",
               blocking, overlapped, worst, overlapped > 0 ? blocking / overlapped : 0.0,
               all_agree ? "true" : "false", world_sum);
        fflush(stdout);
    }
    for (int c = 0; c < 2; c++) {
        MPI_Win_unlock_all(g.win[c]);
        MPI_Win_free(&g.win[c]);
    }
    free(alone);
    free(times[0]);
    free(times[1]);
    MPI_Finalize();
    return all_agree ? 0 : 1;
}
