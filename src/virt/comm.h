/*
 * Communicators of virtual ranks. Each rank keeps its own table of the
 * communicators it belongs to; a communicator's members agree on its
 * context, a number that no other communicator of the process uses (and
 * context + 1 carries its collectives). The world is every virtual rank in
 * order; MPI_COMM_SELF is the rank alone.
 */
#ifndef TDM_VIRT_COMM_H
#define TDM_VIRT_COMM_H

/* An attribute cached on a communicator (virt/attr). */
typedef struct {
    int keyval;
    void *value;
} tdm_virt_attr;

typedef struct {
    int used;            /* the slot holds a communicator */
    int context;         /* point-to-point context; context + 1 for collectives */
    int size;            /* ranks in it */
    int rank;            /* this rank's rank in it */
    int *members;        /* world rank of each member; NULL for the world (identity) */
    int errors_return;   /* MPI_ERRORS_RETURN set (else errors are fatal) */
    unsigned coll_count; /* collectives this rank started on it (their tags) */
    int cart;            /* it has a Cartesian topology (MPI_Cart_create, _sub) */
    int ndims;           /* its dimensions */
    int *topo;           /* ndims sizes, then ndims periodic flags (malloc'ed) */
    int dist_graph;      /* it has a distributed graph topology, or a graph one */
    int indegree, outdegree;
    int *edges;           /* indegree sources, then outdegree destinations (malloc'ed) */
    int graph;            /* a graph topology (MPI_Graph_create): also a distributed graph
                             whose in- and out-neighbours are the rank's neighbours;
                             ndims holds its nodes, topo their index, then the edges */
    tdm_virt_attr *attrs; /* in the order set (malloc'ed) */
    char *name;           /* MPI_Comm_set_name's (malloc'ed), or NULL */
    int n_attrs, cap_attrs;
} tdm_virt_comm;

/* Table slots of the world and of MPI_COMM_SELF in every rank's table. */
enum { TDM_VIRT_COMM_WORLD = 0, TDM_VIRT_COMM_SELF = 1 };

/* Make each local rank's table with the world (world_size ranks, the first
   of this process world_offset) and its own MPI_COMM_SELF; this is process
   'process' of 'processes'. */
int tdm_virt_comm_init(int local_ranks, int world_offset, int world_size, int process,
                       int processes);
void tdm_virt_comm_finish(void);

/* Local rank 'local''s communicator in slot 'slot', or NULL. */
tdm_virt_comm *tdm_virt_comm_get(int local, int slot);

/* Put a new communicator in a free slot of local rank 'local''s table
   (members: malloc'ed, taken over). Returns the slot, or -1 without memory. */
int tdm_virt_comm_add(int local, int context, int size, int rank, int *members);

/* Free slot 'slot' of local rank 'local' (not the world or self). */
void tdm_virt_comm_remove(int local, int slot);

/* 'count' fresh contexts, unique among all processes: the i-th is
   *first + i * *stride (each even: context + 1 is its collectives'). Any
   thread. */
void tdm_virt_comm_new_contexts(int count, int *first, int *stride);

/* The world rank of rank 'r' of 'comm'. */
static inline int tdm_virt_comm_world_rank(const tdm_virt_comm *comm, int r)
{
    return comm->members ? comm->members[r] : r;
}

#endif
