/*
 * Pinning of the progress thread. "auto" looks for a CPU that no rank of the
 * node is bound to (Open MPI binds ranks to cores by default, and a progress
 * thread that inherits its rank's core only steals from the computation);
 * without such a spare CPU the thread shares the rank's CPUs, as it always
 * does with "share" (spare CPUs kept for something else). Wherever it runs,
 * the thread asks for short time slices (progress.c).
 */
#include "core/affinity.h"

#include <ctype.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/log.h"
#include "core/node.h"
#include "core/runtime.h"

/* The first version of the kernel's struct sched_attr (sched_setattr(2)):
   glibc 2.36 has neither the call nor the structure, and the kernel's header
   clashes with <sched.h>. */
struct sched_attr_v0 {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
};
enum { RESET_ON_FORK_FLAG = 0x01 }; /* SCHED_FLAG_RESET_ON_FORK */

int tdm_affinity_slice_self(int us)
{
    struct sched_attr_v0 attr;
    memset(&attr, 0, sizeof attr);
    if (syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) != 0 ||
        attr.sched_policy != SCHED_OTHER)
        return -1;
    attr.size = sizeof attr;
    attr.sched_flags &= RESET_ON_FORK_FLAG;
    attr.sched_runtime = (uint64_t)us * 1000;
    return syscall(SYS_sched_setattr, 0, &attr, 0) == 0 ? 0 : -1;
}

int tdm_affinity_pin(pthread_t thread, int cpu)
{
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return -1;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(thread, sizeof set, &set) == 0 ? 0 : -1;
}

/* Parse "2,3" or "2_3" into cpus[]; returns the count, or -1 if malformed. */
static int parse_list(const char *spec, int *cpus, int max)
{
    int n = 0;
    const char *p = spec;
    while (*p) {
        if (!isdigit((unsigned char)*p) || n == max)
            return -1;
        char *end;
        long v = strtol(p, &end, 10);
        if (v >= CPU_SETSIZE)
            return -1;
        cpus[n++] = (int)v;
        p = end;
        if (*p == ',' || *p == '_')
            p++;
        else if (*p)
            return -1;
    }
    return n;
}

/* The CPUs the ranks of this node are bound to, all together (known once
   spare_cpu ran). */
static cpu_set_t node_cpus;
static int node_cpus_known;
static int node_apart;     /* see tdm_affinity_ranks_apart */
static int node_core_each; /* see tdm_affinity_core_each */
static int node_ranks;     /* the node's ranks, with node_cpus */

/* Whether the kernel shares a CPU between sessions before their tasks
   (autogroup scheduling, kernel.sched_autogroup_enabled). */
static int autogroups(void)
{
    FILE *f = fopen("/proc/sys/kernel/sched_autogroup_enabled", "r");
    int on = 0;
    if (f && fscanf(f, "%d", &on) != 1)
        on = 0;
    if (f)
        fclose(f);
    return on;
}

/* A CPU of the node that no local rank is bound to, spread over local ranks
   (with 'take_spare' 0, none: the thread shares the ranks' CPUs). */
static int spare_cpu(MPI_Comm node, int local_rank, int local_size, int take_spare, int *cpu)
{
    /* what each rank tells the others */
    struct rank_place {
        cpu_set_t cpus;
        pid_t session;
    } mine, *all = malloc(sizeof mine * (size_t)local_size);
    if (!all)
        return MPI_ERR_NO_MEM;
    memset(&mine, 0, sizeof mine);
    sched_getaffinity(0, sizeof mine.cpus, &mine.cpus);
    mine.session = getsid(0);
    int rc =
        PMPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, node);
    if (rc == MPI_SUCCESS) {
        cpu_set_t bound;
        CPU_ZERO(&bound);
        int sessions_apart = 0;
        for (int i = 0; i < local_size; i++) {
            CPU_OR(&bound, &bound, &all[i].cpus);
            sessions_apart |= all[i].session != mine.session;
        }
        tdm_affinity_set_node_cpus(&bound, local_size, sessions_apart && autogroups());
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        int spare[CPU_SETSIZE], nspare = 0;
        for (int c = 0; c < online && c < CPU_SETSIZE; c++)
            if (!CPU_ISSET(c, &bound))
                spare[nspare++] = c;
        *cpu = take_spare && nspare > 0 ? spare[local_rank % nspare] : -1;
    }
    free(all);
    return rc;
}

void tdm_affinity_set_node_cpus(const cpu_set_t *cpus, int ranks, int sessions_apart)
{
    node_cpus = *cpus;
    node_cpus_known = 1;
    node_ranks = ranks;
    node_apart = sessions_apart && CPU_COUNT(cpus) <= ranks;
    node_core_each = CPU_COUNT(cpus) >= ranks;
}

int tdm_affinity_ranks_apart(void)
{
    return node_cpus_known && node_apart;
}

int tdm_affinity_core_each(void)
{
    return node_cpus_known && node_core_each;
}

int tdm_affinity_spare_for(int cpu)
{
    if (!node_cpus_known)
        return 0;
    if (cpu >= 0)
        return !CPU_ISSET(cpu, &node_cpus);
    return CPU_COUNT(&node_cpus) >= 2 * node_ranks;
}

int tdm_affinity_launch_cpus(void)
{
    cpu_set_t mine, parent;
    int own = sched_getaffinity(0, sizeof mine, &mine) == 0 ? CPU_COUNT(&mine) : 0;
    int above = sched_getaffinity(getppid(), sizeof parent, &parent) == 0 ? CPU_COUNT(&parent) : 0;
    return own > above ? own : above;
}

int tdm_affinity_room_for_threads(int ranks, int cpus, const char *omp_threads)
{
    long each = 1;
    if (omp_threads && isdigit((unsigned char)*omp_threads)) {
        each = strtol(omp_threads, NULL, 10);
        if (each < 1)
            each = 1;
    }
    return ranks > 0 && cpus > 0 && (long)ranks * (each + 1) <= cpus;
}

int tdm_affinity_thread_has_core(int cpu)
{
    return cpu >= 0 || tdm_affinity_spare_for(-1);
}

int tdm_affinity_share_node(pthread_t thread)
{
    if (!node_cpus_known)
        return -1;
    return pthread_setaffinity_np(thread, sizeof node_cpus, &node_cpus) == 0 ? 0 : -1;
}

int tdm_affinity_share_node_except(pthread_t thread, int cpu)
{
    if (!node_cpus_known || cpu < 0 || cpu >= CPU_SETSIZE)
        return -1;
    cpu_set_t set = node_cpus;
    CPU_CLR(cpu, &set);
    if (CPU_COUNT(&set) == 0)
        return -1;
    return pthread_setaffinity_np(thread, sizeof set, &set) == 0 ? 0 : -1;
}

int tdm_affinity_host_cpus(MPI_Comm host)
{
    cpu_set_t mine, *all;
    int size = 0;
    PMPI_Comm_size(host, &size);
    CPU_ZERO(&mine);
    sched_getaffinity(0, sizeof mine, &mine);
    if (size < 1 || !(all = malloc(sizeof mine * (size_t)size)))
        return -1;
    int cpus = -1;
    if (PMPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, host) ==
        MPI_SUCCESS) {
        cpu_set_t bound;
        CPU_ZERO(&bound);
        for (int i = 0; i < size; i++)
            CPU_OR(&bound, &bound, &all[i]);
        cpus = CPU_COUNT(&bound);
    }
    free(all);
    return cpus;
}

void tdm_affinity_forget(void)
{
    node_cpus_known = 0;
}

int tdm_affinity_choose(const char *spec, int *cpu)
{
    *cpu = -1;
    MPI_Comm node = tdm_node_comm();
    if (strcmp(spec, "none") == 0 || node == MPI_COMM_NULL)
        return MPI_SUCCESS;
    int local_rank, local_size;
    PMPI_Comm_rank(node, &local_rank);
    PMPI_Comm_size(node, &local_size);
    if (strcmp(spec, "share") == 0)
        return spare_cpu(node, local_rank, local_size, 0, cpu);
    int cpus[CPU_SETSIZE];
    int n = strcmp(spec, "auto") == 0 ? 0 : parse_list(spec, cpus, CPU_SETSIZE);
    if (n > 0) {
        *cpu = cpus[local_rank % n];
        return MPI_SUCCESS;
    }
    if (n < 0 && tdm_world_rank == 0)
        tdm_log_warn("TANDEM_PROGRESS_CPUS=%s is not valid: expected auto, share, none, or a "
                     "list of CPU numbers such as 2,3 or 2_3; using auto",
                     spec);
    return spare_cpu(node, local_rank, local_size, 1, cpu);
}
