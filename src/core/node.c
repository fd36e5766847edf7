/*
 * The node's ranks and what they share (node.h): a counter of borrowers and
 * one slot per local rank naming the CPU it lends, in a shared-memory window
 * that local rank 0 allocates. Without the window (an MPI library that
 * refuses it) the count reads 1, so lending waits behave as if a thread
 * always wanted a CPU, and no CPU is ever seen lent.
 */
#include "core/node.h"

#include <stdatomic.h>
#include <stdlib.h>

/* The window's content. */
typedef struct {
    atomic_int borrowers; /* progress threads of the node that have work */
    atomic_int lent[];    /* per local rank: the CPU it lends + 1, or 0 */
} shared_state;

static struct {
    MPI_Comm comm;
    MPI_Win window;
    shared_state *shared; /* in the window; NULL without one */
    unsigned char *mates; /* world rank -> shares this node; NULL if unknown */
    int world_size;
    int local_rank, local_size;
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

/* The shared state: local rank 0 holds it and zeroes it before anyone reads
   it (the barrier). */
static void share_state(int local_rank, int local_size)
{
    void *base = NULL;
    MPI_Aint need = (MPI_Aint)(sizeof(shared_state) + sizeof(atomic_int) * (size_t)local_size);
    MPI_Aint bytes = local_rank == 0 ? need : 0;
    if (PMPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, node.comm, &base, &node.window) !=
        MPI_SUCCESS) {
        node.window = MPI_WIN_NULL;
        return;
    }
    MPI_Aint size;
    int unit;
    if (PMPI_Win_shared_query(node.window, 0, &size, &unit, &base) != MPI_SUCCESS || size < need) {
        PMPI_Win_free(&node.window);
        return;
    }
    node.shared = base;
    if (local_rank == 0) {
        atomic_init(&node.shared->borrowers, 0);
        for (int i = 0; i < local_size; i++)
            atomic_init(&node.shared->lent[i], 0);
    }
    PMPI_Barrier(node.comm);
}

int tdm_node_init(MPI_Comm world)
{
    int rc = PMPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node.comm);
    if (rc != MPI_SUCCESS)
        return rc;
    PMPI_Comm_rank(node.comm, &node.local_rank);
    PMPI_Comm_size(node.comm, &node.local_size);
    mark_mates(node.local_size);
    share_state(node.local_rank, node.local_size);
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
    if (node.shared)
        atomic_fetch_add_explicit(&node.shared->borrowers, delta, memory_order_relaxed);
}

int tdm_node_borrowers(void)
{
    return node.shared ? atomic_load_explicit(&node.shared->borrowers, memory_order_relaxed) : 1;
}

void tdm_node_lend(int cpu)
{
    if (node.shared)
        atomic_store_explicit(&node.shared->lent[node.local_rank], cpu < 0 ? 0 : cpu + 1,
                              memory_order_relaxed);
}

int tdm_node_lent_cpu(int current)
{
    if (!node.shared)
        return -1;
    int first = -1;
    for (int k = 1; k <= node.local_size; k++) {
        int i = (node.local_rank + k) % node.local_size;
        int cpu = atomic_load_explicit(&node.shared->lent[i], memory_order_relaxed) - 1;
        if (cpu >= 0 && cpu == current)
            return cpu;
        if (cpu >= 0 && first < 0)
            first = cpu;
    }
    return first;
}

void tdm_node_finalize(void)
{
    node.shared = NULL;
    if (node.window != MPI_WIN_NULL)
        PMPI_Win_free(&node.window);
    if (node.comm != MPI_COMM_NULL)
        PMPI_Comm_free(&node.comm);
    free(node.mates);
    node.mates = NULL;
}
