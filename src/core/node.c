/*
 * The node's ranks and what they share (node.h). The node is the host: the
 * ranks whose host names are equal, found by splitting Tandem's copy of
 * MPI_COMM_WORLD on a hash of the name and then on the name itself. That is
 * not always the MPI library's shared-memory domain (MPI_COMM_TYPE_SHARED),
 * which decides only which peers are reached through shared memory
 * (tdm_node_mate): MPICH with MPIR_CVAR_NOLOCAL=1 makes each rank a domain of
 * its own while the ranks still share the host's cores, and cores are what
 * the node is for here.
 *
 * Host rank 0 makes a POSIX shared-memory segment of Tandem's own (the MPI's
 * shared windows need its shared-memory domain): a counter of borrowers and
 * one slot per host rank naming the CPU it lends and the lent CPU its
 * progress thread runs on. A cookie in the segment,
 * sent with its name, proves that every rank mapped the same one (a name
 * reused by another machine of the same host name, or another /dev/shm, is
 * refused). Without the segment the count reads 1, so lending waits behave
 * as if a thread always wanted a CPU, and no CPU is ever seen lent.
 */
#include "core/node.h"
#include "core/runtime.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The segment's content. */
typedef struct {
    atomic_int lent;  /* the CPU this rank lends + 1, or 0 */
    atomic_int guest; /* the lent CPU its progress thread is pinned to + 1, or 0 */
} rank_slot;

typedef struct {
    uint64_t cookie;      /* set by its maker, checked by the others */
    atomic_int borrowers; /* progress threads of the node that have work */
    rank_slot slot[];     /* per host rank */
} shared_state;

/* What host rank 0 sends to the others: where the segment is. */
typedef struct {
    uint64_t cookie;
    char name[56]; /* empty when it could not be made */
} segment_address;

static struct {
    MPI_Comm comm;
    shared_state *shared; /* in the segment; NULL without one */
    size_t shared_bytes;
    unsigned char *mates; /* world rank -> same shared-memory domain; NULL if unknown */
    int world_size;
    int local_rank, local_size;
} node = {.comm = MPI_COMM_NULL};

/* The world ranks of the MPI library's shared-memory domain ('world' is
   Tandem's copy of MPI_COMM_WORLD, of the same group). */
static void mark_mates(MPI_Comm world)
{
    MPI_Comm domain;
    if (PMPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &domain) != MPI_SUCCESS)
        return;
    int local_size;
    PMPI_Comm_size(domain, &local_size);
    MPI_Group world_group, node_group;
    int *in_node = malloc(sizeof(int) * (size_t)local_size);
    int *in_world = malloc(sizeof(int) * (size_t)local_size);
    PMPI_Comm_size(tdm_world, &node.world_size);
    node.mates = calloc((size_t)node.world_size, 1);
    int rc = MPI_ERR_NO_MEM;
    if (in_node && in_world && node.mates) {
        PMPI_Comm_group(tdm_world, &world_group);
        PMPI_Comm_group(domain, &node_group);
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
    PMPI_Comm_free(&domain);
}

/* FNV-1a, as a non-negative color for MPI_Comm_split. */
static int name_color(const char *name)
{
    uint32_t h = 2166136261u;
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    return (int)(h & 0x7fffffff);
}

/* Split 'world' by host name: first on its hash, then, within a hash, on
   the first rank of the same name (two names of one hash stay apart). */
static int split_by_host(MPI_Comm world, MPI_Comm *host)
{
    char name[256] = {0};
    if (gethostname(name, sizeof name - 1) != 0)
        snprintf(name, sizeof name, "unknown");
    MPI_Comm same_hash;
    int rc = PMPI_Comm_split(world, name_color(name), 0, &same_hash);
    if (rc != MPI_SUCCESS)
        return rc;
    int rank, size;
    PMPI_Comm_rank(same_hash, &rank);
    PMPI_Comm_size(same_hash, &size);
    char *names = malloc(sizeof name * (size_t)size);
    rc = names
             ? PMPI_Allgather(name, sizeof name, MPI_CHAR, names, sizeof name, MPI_CHAR, same_hash)
             : MPI_ERR_NO_MEM;
    int first = 0;
    while (rc == MPI_SUCCESS && strcmp(names + sizeof name * (size_t)first, name) != 0)
        first++;
    free(names);
    /* every rank must join the second split, even one whose gather failed */
    int split_rc = PMPI_Comm_split(same_hash, first, rank, host);
    PMPI_Comm_free(&same_hash);
    return rc != MPI_SUCCESS ? rc : split_rc;
}

/* Host rank 0 makes the segment, zeroed, and names it. */
static shared_state *make_segment(size_t bytes, segment_address *address)
{
    static unsigned serial;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    address->cookie = ((uint64_t)getpid() << 32) ^ (uint64_t)now.tv_nsec ^
                      ((uint64_t)now.tv_sec << 20) ^ (uintptr_t)&now;
    snprintf(address->name, sizeof address->name, "/tandem-node-%d-%u-%08x", (int)getpid(),
             serial++, (unsigned)address->cookie);
    int fd = shm_open(address->name, O_CREAT | O_EXCL | O_RDWR, 0600);
    void *base = MAP_FAILED;
    if (fd >= 0) {
        if (ftruncate(fd, (off_t)bytes) == 0)
            base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
    }
    if (base == MAP_FAILED) {
        if (fd >= 0)
            shm_unlink(address->name);
        address->name[0] = '\0';
        return NULL;
    }
    shared_state *state = base; /* ftruncate zeroed it: no borrowers, nothing lent */
    state->cookie = address->cookie;
    return state;
}

static shared_state *map_segment(size_t bytes, const segment_address *address)
{
    if (!address->name[0])
        return NULL;
    int fd = shm_open(address->name, O_RDWR, 0);
    if (fd < 0)
        return NULL;
    struct stat st;
    void *base = MAP_FAILED;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= bytes)
        base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED)
        return NULL;
    shared_state *state = base;
    if (state->cookie != address->cookie) {
        munmap(base, bytes);
        return NULL;
    }
    return state;
}

/* The shared state, used only if every rank of the host mapped it. */
static void share_state(void)
{
    size_t bytes = sizeof(shared_state) + sizeof(rank_slot) * (size_t)node.local_size;
    segment_address address = {0};
    shared_state *state = NULL;
    if (node.local_rank == 0)
        state = make_segment(bytes, &address);
    int rc = PMPI_Bcast(&address, sizeof address, MPI_BYTE, 0, node.comm);
    if (rc == MPI_SUCCESS && node.local_rank != 0)
        state = map_segment(bytes, &address);
    int mapped = state != NULL, everyone = 0;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allreduce(&mapped, &everyone, 1, MPI_INT, MPI_MIN, node.comm);
    if (node.local_rank == 0 && address.name[0])
        shm_unlink(address.name); /* every rank that could map it has */
    if (rc != MPI_SUCCESS || !everyone) {
        if (state)
            munmap(state, bytes);
        return;
    }
    node.shared = state;
    node.shared_bytes = bytes;
}

int tdm_node_init(MPI_Comm world)
{
    int rc = split_by_host(world, &node.comm);
    if (rc != MPI_SUCCESS)
        return rc;
    PMPI_Comm_rank(node.comm, &node.local_rank);
    PMPI_Comm_size(node.comm, &node.local_size);
    mark_mates(world);
    share_state();
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
        atomic_store_explicit(&node.shared->slot[node.local_rank].lent, cpu < 0 ? 0 : cpu + 1,
                              memory_order_relaxed);
}

void tdm_node_guest(int cpu)
{
    if (node.shared)
        atomic_store_explicit(&node.shared->slot[node.local_rank].guest, cpu < 0 ? 0 : cpu + 1,
                              memory_order_relaxed);
}

int tdm_node_has_guest(int cpu)
{
    if (!node.shared)
        return 1;
    for (int i = 0; i < node.local_size; i++)
        if (i != node.local_rank &&
            atomic_load_explicit(&node.shared->slot[i].guest, memory_order_relaxed) == cpu + 1)
            return 1;
    return 0;
}

int tdm_node_lent_cpu(int current)
{
    if (!node.shared)
        return -1;
    int first = -1;
    for (int k = 1; k <= node.local_size; k++) {
        int i = (node.local_rank + k) % node.local_size;
        int cpu = atomic_load_explicit(&node.shared->slot[i].lent, memory_order_relaxed) - 1;
        if (cpu >= 0 && cpu == current)
            return cpu;
        if (cpu >= 0 && first < 0)
            first = cpu;
    }
    return first;
}

void tdm_node_finalize(void)
{
    if (node.shared)
        munmap(node.shared, node.shared_bytes);
    node.shared = NULL;
    if (node.comm != MPI_COMM_NULL)
        PMPI_Comm_free(&node.comm);
    free(node.mates);
    node.mates = NULL;
}
