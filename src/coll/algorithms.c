/*
 * The collectives Tandem runs itself (TANDEM_COLL=tandem), each built as a
 * schedule of rounds (schedule.h):
 *
 *   MPI_Ibarrier  dissemination: in round k, send to rank + 2^k and receive
 *                 from rank - 2^k; ceil(log2 n) rounds
 *   MPI_Ibcast    binomial tree (minimum spanning tree) rooted at 'root':
 *                 receive from the parent, then send to every child
 *
 * A call Tandem does not handle -- TANDEM_COLL=native, an inter-communicator,
 * arguments the MPI library must reject (it then raises the error itself) --
 * goes to the MPI library unchanged.
 */
#include <limits.h>

#include "coll/schedule.h"
#include "wrappers/gen_hooks.h"

/* Arguments the MPI library would accept, for a call Tandem takes over. */
static int valid(MPI_Comm comm, MPI_Count count, MPI_Datatype type, int root, int *size)
{
    int type_size = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, size) != MPI_SUCCESS)
        return 0;
    if (count < 0 || count > INT_MAX || root < 0 || root >= *size)
        return 0;
    return type == MPI_DATATYPE_NULL ? count == 0 : PMPI_Type_size(type, &type_size) == MPI_SUCCESS;
}

static int add(tdm_schedule *s, tdm_op_kind kind, void *buf, MPI_Count count, MPI_Datatype type,
               int peer)
{
    tdm_op op = {kind, buf, NULL, count, type, peer, MPI_OP_NULL};
    return tdm_schedule_add(s, op);
}

int tdm_hook_Ibarrier(int lang, MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    int size, rank;
    tdm_schedule *s;
    if (!tdm_coll_on || !valid(comm, 0, MPI_BYTE, 0, &size) || !(s = tdm_schedule_new(comm)))
        return PMPI_Ibarrier(comm, request);
    PMPI_Comm_rank(comm, &rank);
    for (int distance = 1; distance < size; distance *= 2) {
        if (distance > 1)
            tdm_schedule_round(s);
        add(s, TDM_OP_SEND, NULL, 0, MPI_BYTE, (rank + distance) % size);
        add(s, TDM_OP_RECV, NULL, 0, MPI_BYTE, (rank - distance + size) % size);
    }
    return tdm_schedule_start(s, request);
}

/* Binomial tree over the ranks relative to the root: the parent of relative
   rank v clears its lowest set bit; its children set each lower bit. */
static int ibcast(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    int size, rank;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    tdm_schedule *s = tdm_schedule_new(comm);
    if (!s)
        return -1;
    int v = (rank - root + size) % size, mask = 1;
    while (mask < size && !(v & mask))
        mask <<= 1;
    if (v != 0) {
        add(s, TDM_OP_RECV, buffer, count, datatype, ((v - mask) + root) % size);
        tdm_schedule_round(s);
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < size)
            add(s, TDM_OP_SEND, buffer, count, datatype, (v + mask + root) % size);
    return tdm_schedule_start(s, request);
}

int tdm_hook_Ibcast(int lang, void *buffer, int count, MPI_Datatype datatype, int root,
                    MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    int size, rc;
    if (!tdm_coll_on || !valid(comm, count, datatype, root, &size) ||
        (rc = ibcast(buffer, count, datatype, root, comm, request)) < 0)
        return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
    return rc;
}

#if MPI_VERSION >= 4
int tdm_hook_Ibcast_c(int lang, void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                      MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    int size, rc;
    if (!tdm_coll_on || !valid(comm, count, datatype, root, &size) ||
        (rc = ibcast(buffer, count, datatype, root, comm, request)) < 0)
        return PMPI_Ibcast_c(buffer, count, datatype, root, comm, request);
    return rc;
}
#endif
