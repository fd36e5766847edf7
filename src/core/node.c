/*
 * The node's ranks and their shared counter (node.h). The counter is one int
 * in a shared-memory window that local rank 0 allocates; every rank adds to it
 * atomically. Without the window (an MPI library that refuses it) the count
 * reads 1, so lending waits behave as if a thread always wanted a CPU.
 */
#include "core/node.h"

#include <stdatomic.h>
#include <stdlib.h>

static struct {
    MPI_Comm comm;
    MPI_Win window;
    atomic_int *borrowers; /* in the window; NULL without one */
    unsigned char *mates;  /* world rank -> shares this node; NULL if unknown */
    int world_size;
} node = {.comm = MPI_COMM_NULL, .window = MPI_WIN_NULL};

static void mark_mates(int local_size)
{
    MPI_Group world_group, node_group;
    int *in_node = malloc(sizeof(int) * (size_t)local_size);
    int *in_world = malloc(sizeof(int) * (size_t)local_size);
    PMPI_Comm_size(MPI_COMM_WORLD, &node.world_size);
    node.mates = calloc((size_t)node.world_size, 1);
    int rc = MPI_ERR_NO_MEM;
    if (in_node && in_world && node.mates) {
        PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
        PMPI_Comm_group(node.comm, &node_group);
        for (int i = 0; i < local_size; i++)
            in_node[i] = i;
        rc = PMPI_Group_translate_ranks(node_group, local_size, in_node, world_group, in_world);
        for (int i = 0; rc == MPI_SUCCESS && i < local_size; i++)
            node.mates[in_world[i]] = 1;
        PMPI_Group_free(&node_group);
        PMPI_Group_free(&world_group);
    }
    if (rc != MPI_SUCCESS) {
        free(node.mates);
        node.mates = NULL;
    }
    free(in_node);
    free(in_world);
}

/* The shared counter: local rank 0 holds it and sets it to 0 before anyone
   reads it (the barrier). */
static void share_counter(int local_rank)
{
    void *base = NULL;
    MPI_Aint bytes = local_rank == 0 ? (MPI_Aint)sizeof(atomic_int) : 0;
    if (PMPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, node.comm, &base, &node.window) !=
        MPI_SUCCESS) {
        node.window = MPI_WIN_NULL;
        return;
    }
    MPI_Aint size;
    int unit;
    if (PMPI_Win_shared_query(node.window, 0, &size, &unit, &base) != MPI_SUCCESS ||
        size < (MPI_Aint)sizeof(atomic_int)) {
        PMPI_Win_free(&node.window);
        return;
    }
    node.borrowers = base;
    if (local_rank == 0)
        atomic_init(node.borrowers, 0);
    PMPI_Barrier(node.comm);
}

int tdm_node_init(void)
{
    int rc =
        PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node.comm);
    if (rc != MPI_SUCCESS)
        return rc;
    int local_rank, local_size;
    PMPI_Comm_rank(node.comm, &local_rank);
    PMPI_Comm_size(node.comm, &local_size);
    mark_mates(local_size);
    share_counter(local_rank);
    return MPI_SUCCESS;
}

MPI_Comm tdm_node_comm(void)
{
    return node.comm;
}

int tdm_node_mate(int world_rank)
{
    return !node.mates || world_rank < 0 || world_rank >= node.world_size || node.mates[world_rank];
}

int tdm_node_single(void)
{
    if (!node.mates)
        return 0;
    for (int i = 0; i < node.world_size; i++)
        if (!node.mates[i])
            return 0;
    return 1;
}

void tdm_node_borrow(int delta)
{
    if (node.borrowers)
        atomic_fetch_add_explicit(node.borrowers, delta, memory_order_relaxed);
}

int tdm_node_borrowers(void)
{
    return node.borrowers ? atomic_load_explicit(node.borrowers, memory_order_relaxed) : 1;
}

void tdm_node_finalize(void)
{
    node.borrowers = NULL;
    if (node.window != MPI_WIN_NULL)
        PMPI_Win_free(&node.window);
    if (node.comm != MPI_COMM_NULL)
        PMPI_Comm_free(&node.comm);
    free(node.mates);
    node.mates = NULL;
}
