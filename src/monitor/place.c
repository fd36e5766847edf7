/* Placement inside a run: monitor/place.h and tandem.h's tandem_place_comm. */
#include "monitor/place.h"

#include <mpi.h>
#include <stdlib.h>

#include "core/runtime.h"
#include "monitor/monitor.h"
#include "tandem.h"
#include "wrappers/gen_hooks.h"

int tdm_place_greedy(int n, const double *traffic, const int *host_of, int *role_of)
{
    char *placed = calloc((size_t)n, 1), *host_done = calloc((size_t)n, 1);
    double *gain = malloc(sizeof(double) * (size_t)n);
    int *roles = malloc(sizeof(int) * (size_t)n);
    if (!placed || !host_done || !gain || !roles) {
        free(placed);
        free(host_done);
        free(gain);
        free(roles);
        return -1;
    }
    for (int first = 0; first < n; first++) {
        int host = host_of[first];
        if (host_done[host])
            continue;
        host_done[host] = 1;
        int slots = 0;
        for (int s = first; s < n; s++)
            slots += host_of[s] == host;
        /* the seed: the most traffic to the roles not yet placed */
        int seed = -1;
        double best = -1;
        for (int r = 0; r < n; r++) {
            if (placed[r])
                continue;
            double total = 0;
            for (int q = 0; q < n; q++)
                total += placed[q] || q == r ? 0 : traffic[(size_t)r * (size_t)n + (size_t)q];
            if (total > best) {
                best = total;
                seed = r;
            }
        }
        int taken = 0;
        for (int r = 0; r < n; r++)
            gain[r] = 0;
        for (int next = seed; next >= 0 && taken < slots;) {
            placed[next] = 1;
            roles[taken++] = next;
            for (int r = 0; r < n; r++)
                gain[r] += traffic[(size_t)r * (size_t)n + (size_t)next];
            next = -1;
            for (int r = 0; r < n; r++)
                if (!placed[r] && (next < 0 || gain[r] > gain[next]))
                    next = r;
        }
        /* the host's slots, in order, get its roles in increasing order */
        for (int i = 1; i < taken; i++)
            for (int j = i; j > 0 && roles[j - 1] > roles[j]; j--) {
                int t = roles[j];
                roles[j] = roles[j - 1];
                roles[j - 1] = t;
            }
        for (int s = first, i = 0; s < n && i < taken; s++)
            if (host_of[s] == host)
                role_of[s] = roles[i++];
    }
    free(placed);
    free(host_done);
    free(gain);
    free(roles);
    return 0;
}

/* Each slot's host: the comm rank of the host's first process. */
static int hosts_of(MPI_Comm comm, int rank, int *host_of)
{
    MPI_Comm host;
    int rc, first = rank;
    TDM_CALL_MPI(rc, PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host));
    rc = PMPI_Allreduce(&rank, &first, 1, MPI_INT, MPI_MIN, host);
    PMPI_Comm_free(&host);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allgather(&first, 1, MPI_INT, host_of, 1, MPI_INT, comm);
fn_exit:
    return rc;
}

TDM_EXPORT int tandem_place_comm(MPI_Comm comm, MPI_Comm *newcomm)
{
    if (!tdm_active || comm == MPI_COMM_NULL || newcomm == NULL)
        return !tdm_active ? MPI_ERR_OTHER : comm == MPI_COMM_NULL ? MPI_ERR_COMM : MPI_ERR_ARG;
    comm = tdm_world_in(comm);
    int rc, rank, n, world_size, inter = 0, role = 0;
    TDM_CALL_MPI(rc, PMPI_Comm_test_inter(comm, &inter));
    if (inter)
        return MPI_ERR_COMM;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &n);
    PMPI_Comm_size(tdm_world, &world_size);
    int *members = malloc(sizeof(int) * (size_t)n), *in_world = malloc(sizeof(int) * (size_t)n);
    int *host_of = malloc(sizeof(int) * (size_t)n), *role_of = malloc(sizeof(int) * (size_t)n);
    unsigned long long *bytes = malloc(sizeof(unsigned long long) * (size_t)world_size);
    double *row = malloc(sizeof(double) * (size_t)n);
    double *traffic = rank == 0 ? malloc(sizeof(double) * (size_t)n * (size_t)n) : NULL;
    if (!members || !in_world || !host_of || !role_of || !bytes || !row ||
        (rank == 0 && !traffic)) {
        rc = MPI_ERR_NO_MEM;
        goto done;
    }
    /* this rank's bytes to each member of comm, from the program's view */
    MPI_Group group, world_group;
    PMPI_Comm_group(comm, &group);
    PMPI_Comm_group(tdm_world, &world_group);
    for (int i = 0; i < n; i++)
        members[i] = i;
    PMPI_Group_translate_ranks(group, n, members, world_group, in_world);
    PMPI_Group_free(&group);
    PMPI_Group_free(&world_group);
    if ((rc = tandem_monitor_read(TANDEM_MONITOR_ALL, NULL, bytes, NULL)) != MPI_SUCCESS)
        goto done;
    for (int i = 0; i < n; i++)
        row[i] = in_world[i] == MPI_UNDEFINED || i == rank ? 0 : (double)bytes[in_world[i]];
    if ((rc = PMPI_Gather(row, n, MPI_DOUBLE, traffic, n, MPI_DOUBLE, 0, comm)) != MPI_SUCCESS ||
        (rc = hosts_of(comm, rank, host_of)) != MPI_SUCCESS)
        goto done;
    if (rank == 0) {
        for (int i = 0; i < n; i++) /* both directions */
            for (int j = 0; j < i; j++) {
                double both = traffic[(size_t)i * n + j] + traffic[(size_t)j * n + i];
                traffic[(size_t)i * n + j] = traffic[(size_t)j * n + i] = both;
            }
        if (tdm_place_greedy(n, traffic, host_of, role_of) != 0)
            rc = MPI_ERR_NO_MEM;
    }
    int ok = rc == MPI_SUCCESS;
    PMPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (!ok) {
        rc = MPI_ERR_NO_MEM;
        goto done;
    }
    if ((rc = PMPI_Scatter(role_of, 1, MPI_INT, &role, 1, MPI_INT, 0, comm)) != MPI_SUCCESS)
        goto done;
    /* the communicator constructor of Tandem's entry points, so that its
       collectives know the new communicator */
    rc = tdm_hook_Comm_split(TDM_LANG_C, comm, 0, role, newcomm);
done:
    free(members);
    free(in_world);
    free(host_of);
    free(role_of);
    free(bytes);
    free(row);
    free(traffic);
fn_exit:
    return rc;
}
