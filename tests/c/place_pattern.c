/*
 * A communication pattern read from a TreeMatch matrix (N lines of N
 * numbers: row i, column j = what rank i sends rank j), for the placement
 * tests (tests/python/test_place.py, test_hosts.py).
 *
 *   place_pattern MATRIX send      every rank sends each peer its row's bytes,
 *                                  one message each, so that a monitoring
 *                                  records the matrix
 *   place_pattern MATRIX reorder   MPI_Dist_graph_create of the matrix (one
 *                                  edge per non-zero entry, weighted by it)
 *                                  with reorder = 1; rank 0 prints, for each
 *                                  process in world order, its new rank, its
 *                                  host and CPU: Open MPI's topo/treematch
 *                                  renumbers the processes this way
 *
 * The matrix must have as many lines as there are ranks; every rank reads it.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, const char *path)
{
    fprintf(stderr, "place_pattern: %s: %s\n", path, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* The size x size matrix of 'path', as doubles. */
static double *read_matrix(const char *path, int size)
{
    FILE *file = fopen(path, "r");
    if (!file)
        fail("cannot be read", path);
    double *matrix = malloc(sizeof(double) * (size_t)size * (size_t)size);
    for (int i = 0; i < size * size; i++)
        if (fscanf(file, "%lf", &matrix[i]) != 1 || matrix[i] < 0)
            fail("expected N lines of N non-negative numbers, N the number of ranks", path);
    double extra;
    if (fscanf(file, "%lf", &extra) == 1)
        fail("more numbers than N x N, N the number of ranks", path);
    fclose(file);
    return matrix;
}

static void send_pattern(const double *matrix, int rank, int size)
{
    size_t longest = 1;
    for (int i = 0; i < size * size; i++)
        if ((size_t)matrix[i] > longest)
            longest = (size_t)matrix[i];
    char *out = calloc(longest, 1), *in = calloc(longest * (size_t)size, 1);
    MPI_Request *requests = malloc(sizeof(MPI_Request) * 2 * (size_t)size);
    int count = 0;
    for (int peer = 0; peer < size; peer++) {
        int from = (int)matrix[peer * size + rank], to = (int)matrix[rank * size + peer];
        if (peer != rank && from > 0)
            MPI_Irecv(in + (size_t)peer * longest, from, MPI_BYTE, peer, 0, MPI_COMM_WORLD,
                      &requests[count++]);
        if (peer != rank && to > 0)
            MPI_Isend(out, to, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &requests[count++]);
    }
    MPI_Waitall(count, requests, MPI_STATUSES_IGNORE);
    free(requests);
    free(in);
    free(out);
}

static void reorder(const double *matrix, int rank, int size)
{
    int *targets = calloc((size_t)size, sizeof(int)), *weights = calloc((size_t)size, sizeof(int));
    int degree = 0;
    for (int peer = 0; peer < size; peer++) {
        double weight = matrix[rank * size + peer];
        if (peer != rank && weight > 0) {
            targets[degree] = peer;
            weights[degree++] = weight > INT_MAX ? INT_MAX : (int)weight;
        }
    }
    MPI_Comm graph;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &degree, targets, weights, MPI_INFO_NULL, 1,
                          &graph);
    int line[2] = {0, sched_getcpu()};
    MPI_Comm_rank(graph, &line[0]);
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    int length;
    MPI_Get_processor_name(host, &length);
    int *lines = malloc(sizeof(int) * 2 * (size_t)size);
    char *hosts = malloc((size_t)MPI_MAX_PROCESSOR_NAME * (size_t)size);
    MPI_Gather(line, 2, MPI_INT, lines, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    if (rank == 0)
        for (int p = 0; p < size; p++)
            printf("process %d new %d host %s cpu %d\n", p, lines[2 * p],
                   hosts + (size_t)p * MPI_MAX_PROCESSOR_NAME, lines[2 * p + 1]);
    MPI_Comm_free(&graph);
    free(hosts);
    free(lines);
    free(weights);
    free(targets);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || (strcmp(argv[2], "send") != 0 && strcmp(argv[2], "reorder") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: place_pattern MATRIX send|reorder\n");
        MPI_Finalize();
        return 2;
    }
    double *matrix = read_matrix(argv[1], size);
    if (strcmp(argv[2], "send") == 0)
        send_pattern(matrix, rank, size);
    else
        reorder(matrix, rank, size);
    free(matrix);
    MPI_Finalize();
    return 0;
}
