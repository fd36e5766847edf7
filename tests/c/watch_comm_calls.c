/* An observer preloaded after libtandem: it counts the calls that run the MPI
   library's collectives on a communicator the application holds (making a
   communicator or a window from it), and each rank prints its counts at
   MPI_Finalize. Such a call takes tags of the communicator's nonblocking
   collectives in Open MPI 4.1 (see tdm_comm_copy), so a run with Tandem must
   count what the same run without Tandem counts: the application's own calls.

   The application's communicators are MPI_COMM_WORLD, MPI_COMM_SELF and those
   the counted calls made from them, until freed; a communicator made any
   other way (Tandem's private copies, from MPI_Comm_create_group) and what is
   made from it are not counted. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

enum {
    DUP,
    DUP_WITH_INFO,
    IDUP,
    SPLIT,
    SPLIT_TYPE,
    CREATE,
    CART_CREATE,
    CART_SUB,
    GRAPH_CREATE,
    DIST_GRAPH_CREATE,
    DIST_GRAPH_CREATE_ADJACENT,
    WIN_ALLOCATE_SHARED,
    WIN_ALLOCATE,
    WIN_CREATE,
    IDUP_WITH_INFO,
    KINDS
};

static const char *const names[KINDS] = {"Comm_dup",
                                         "Comm_dup_with_info",
                                         "Comm_idup",
                                         "Comm_split",
                                         "Comm_split_type",
                                         "Comm_create",
                                         "Cart_create",
                                         "Cart_sub",
                                         "Graph_create",
                                         "Dist_graph_create",
                                         "Dist_graph_create_adjacent",
                                         "Win_allocate_shared",
                                         "Win_allocate",
                                         "Win_create",
                                         "Comm_idup_with_info"};

static int counts[KINDS];
static MPI_Comm known[4096];
static int nknown;

static int is_application_comm(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF)
        return 1;
    for (int i = 0; i < nknown; i++)
        if (known[i] == comm)
            return 1;
    return 0;
}

/* Count a call made from 'parent'; what it made from an application
   communicator is one too. */
static void seen(int kind, MPI_Comm parent, int rc, const MPI_Comm *made)
{
    if (!is_application_comm(parent))
        return;
    counts[kind]++;
    if (rc == MPI_SUCCESS && made && *made != MPI_COMM_NULL &&
        nknown < (int)(sizeof known / sizeof known[0]))
        known[nknown++] = *made;
}

#define REAL(name, type) ((type)dlsym(RTLD_NEXT, #name))

int PMPI_Comm_free(MPI_Comm *comm);
int PMPI_Comm_free(MPI_Comm *comm)
{
    for (int i = 0; comm && i < nknown; i++)
        if (known[i] == *comm)
            known[i] = known[--nknown];
    return REAL(PMPI_Comm_free, int (*)(MPI_Comm *))(comm);
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    int rc = REAL(PMPI_Comm_dup, int (*)(MPI_Comm, MPI_Comm *))(comm, newcomm);
    seen(DUP, comm, rc, newcomm);
    return rc;
}

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm);
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    int rc =
        REAL(PMPI_Comm_dup_with_info, int (*)(MPI_Comm, MPI_Info, MPI_Comm *))(comm, info, newcomm);
    seen(DUP_WITH_INFO, comm, rc, newcomm);
    return rc;
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    int rc =
        REAL(PMPI_Comm_idup, int (*)(MPI_Comm, MPI_Comm *, MPI_Request *))(comm, newcomm, request);
    seen(IDUP, comm, rc, NULL); /* the handle is not valid before the request completes */
    return rc;
}

#if MPI_VERSION >= 4
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request);
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    int rc = REAL(PMPI_Comm_idup_with_info, int (*)(MPI_Comm, MPI_Info, MPI_Comm *, MPI_Request *))(
        comm, info, newcomm, request);
    seen(IDUP_WITH_INFO, comm, rc, NULL);
    return rc;
}
#endif

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    int rc =
        REAL(PMPI_Comm_split, int (*)(MPI_Comm, int, int, MPI_Comm *))(comm, color, key, newcomm);
    seen(SPLIT, comm, rc, newcomm);
    return rc;
}

int PMPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm);
int PMPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    int rc = REAL(PMPI_Comm_split_type, int (*)(MPI_Comm, int, int, MPI_Info, MPI_Comm *))(
        comm, type, key, info, newcomm);
    seen(SPLIT_TYPE, comm, rc, newcomm);
    return rc;
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm);
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    int rc = REAL(PMPI_Comm_create, int (*)(MPI_Comm, MPI_Group, MPI_Comm *))(comm, group, newcomm);
    seen(CREATE, comm, rc, newcomm);
    return rc;
}

int PMPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                     MPI_Comm *newcomm);
int PMPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                     MPI_Comm *newcomm)
{
    int rc =
        REAL(PMPI_Cart_create, int (*)(MPI_Comm, int, const int *, const int *, int, MPI_Comm *))(
            comm, ndims, dims, periods, reorder, newcomm);
    seen(CART_CREATE, comm, rc, newcomm);
    return rc;
}

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm);
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    int rc =
        REAL(PMPI_Cart_sub, int (*)(MPI_Comm, const int *, MPI_Comm *))(comm, remain_dims, newcomm);
    seen(CART_SUB, comm, rc, newcomm);
    return rc;
}

int PMPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
                      MPI_Comm *newcomm);
int PMPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
                      MPI_Comm *newcomm)
{
    int rc =
        REAL(PMPI_Graph_create, int (*)(MPI_Comm, int, const int *, const int *, int, MPI_Comm *))(
            comm, nnodes, index, edges, reorder, newcomm);
    seen(GRAPH_CREATE, comm, rc, newcomm);
    return rc;
}

int PMPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *newcomm);
int PMPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *newcomm)
{
    int rc =
        REAL(PMPI_Dist_graph_create, int (*)(MPI_Comm, int, const int *, const int *, const int *,
                                             const int *, MPI_Info, int, MPI_Comm *))(
            comm, n, sources, degrees, destinations, weights, info, reorder, newcomm);
    seen(DIST_GRAPH_CREATE, comm, rc, newcomm);
    return rc;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *newcomm);
int PMPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *newcomm)
{
    int rc =
        REAL(PMPI_Dist_graph_create_adjacent,
             int (*)(MPI_Comm, int, const int *, const int *, int, const int *, const int *,
                     MPI_Info, int, MPI_Comm *))(comm, indegree, sources, sourceweights, outdegree,
                                                 destinations, destweights, info, reorder, newcomm);
    seen(DIST_GRAPH_CREATE_ADJACENT, comm, rc, newcomm);
    return rc;
}

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win);
int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    int rc = REAL(PMPI_Win_allocate_shared,
                  int (*)(MPI_Aint, int, MPI_Info, MPI_Comm, void *, MPI_Win *))(
        size, disp_unit, info, comm, baseptr, win);
    seen(WIN_ALLOCATE_SHARED, comm, rc, NULL);
    return rc;
}

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win);
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win)
{
    int rc = REAL(PMPI_Win_allocate, int (*)(MPI_Aint, int, MPI_Info, MPI_Comm, void *, MPI_Win *))(
        size, disp_unit, info, comm, baseptr, win);
    seen(WIN_ALLOCATE, comm, rc, NULL);
    return rc;
}

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win);
int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win)
{
    int rc = REAL(PMPI_Win_create, int (*)(void *, MPI_Aint, int, MPI_Info, MPI_Comm, MPI_Win *))(
        base, size, disp_unit, info, comm, win);
    seen(WIN_CREATE, comm, rc, NULL);
    return rc;
}

int PMPI_Finalize(void);
int PMPI_Finalize(void)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char line[1024];
    int used = snprintf(line, sizeof line, "watch[%d]:", rank);
    for (int i = 0; i < KINDS && used < (int)sizeof line; i++)
        used += snprintf(line + used, sizeof line - (size_t)used, " %s=%d", names[i], counts[i]);
    fprintf(stderr, "%s\n", line);
    return REAL(PMPI_Finalize, int (*)(void))();
}
