/*
 * What this machine offers the MPI libraries and Tandem, tried without MPI:
 * CPUs and affinity, shared memory between processes (POSIX and System V),
 * single-copy reads of another process's memory (CMA, as Open MPI's vader
 * and UCX's cma use it), the scheduler's time slice (sched_setattr, as
 * Tandem's progress thread asks for one) and epoll_pwait2 (TANDEM_POLL=event).
 * A sandbox such as gVisor may refuse or emulate some of these; each check
 * says "ok" or the error it met. One JSON object on stdout.
 *
 *   tandem-node-probe
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { SHARED_BYTES = 16 << 20 }; /* a shared segment as large as an MPI's */

/* "ok", or the error of the call that failed ('what' names it). */
static const char *outcome(int ok, const char *what, char *text, size_t room)
{
    if (ok)
        return "ok";
    snprintf(text, room, "%s: %s", what, strerror(errno));
    return text;
}

/* A child, a copy of this process (its memory at the same addresses), that
   waits for a byte on fds[0]; the parent keeps fds[1]. */
static pid_t waiting_child(int fds[2])
{
    if (pipe(fds) != 0)
        return -1;
    pid_t child = fork();
    if (child == 0) {
        char byte;
        close(fds[1]);
        _exit(read(fds[0], &byte, 1) == 1 ? 0 : 1);
    }
    close(fds[0]);
    return child;
}

static void release(pid_t child, int fd)
{
    if (write(fd, "x", 1) < 0)
        kill(child, SIGKILL);
    close(fd);
    waitpid(child, NULL, 0);
}

/* process_vm_readv of a buffer of a child, at the same address (fork). */
static const char *cma(char *text, size_t room)
{
    static char pattern[64] = "tandem cross-memory attach";
    int fds[2];
    pid_t child = waiting_child(fds);
    if (child < 0)
        return outcome(0, "fork", text, room);
    char got[64] = "";
    struct iovec local = {got, sizeof got}, remote = {pattern, sizeof pattern};
    ssize_t n = process_vm_readv(child, &local, 1, &remote, 1, 0);
    int saved = errno;
    release(child, fds[1]);
    errno = saved;
    if (n == (ssize_t)sizeof got && strcmp(got, pattern) != 0) {
        snprintf(text, room, "process_vm_readv: read other bytes");
        return text;
    }
    return outcome(n == (ssize_t)sizeof got, "process_vm_readv", text, room);
}

/* A POSIX shared segment written by a child, read by the parent. */
static const char *posix_shm(char *text, size_t room)
{
    char name[64];
    snprintf(name, sizeof name, "/tandem-node-probe-%d", (int)getpid());
    int fd = shm_open(name, O_CREAT | O_RDWR | O_EXCL, 0600);
    if (fd < 0)
        return outcome(0, "shm_open", text, room);
    shm_unlink(name);
    int ok = ftruncate(fd, SHARED_BYTES) == 0;
    char *p = ok ? mmap(NULL, SHARED_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : NULL;
    const char *what = ok ? "mmap" : "ftruncate";
    close(fd);
    if (!ok || p == MAP_FAILED)
        return outcome(0, what, text, room);
    pid_t child = fork();
    if (child == 0) {
        memset(p, 7, SHARED_BYTES); /* every page, as a message would */
        _exit(0);
    }
    waitpid(child, NULL, 0);
    ok = p[0] == 7 && p[SHARED_BYTES - 1] == 7;
    munmap(p, SHARED_BYTES);
    if (!ok) {
        snprintf(text, room, "the child's writes did not reach the parent");
        return text;
    }
    return "ok";
}

/* A System V segment, as UCX's sysv transport uses. */
static const char *sysv_shm(char *text, size_t room)
{
    int id = shmget(IPC_PRIVATE, SHARED_BYTES, IPC_CREAT | 0600);
    if (id < 0)
        return outcome(0, "shmget", text, room);
    char *p = shmat(id, NULL, 0);
    shmctl(id, IPC_RMID, NULL);
    if (p == (void *)-1)
        return outcome(0, "shmat", text, room);
    pid_t child = fork();
    if (child == 0) {
        p[0] = 9;
        _exit(0);
    }
    waitpid(child, NULL, 0);
    int ok = p[0] == 9;
    shmdt(p);
    if (!ok) {
        snprintf(text, room, "the child's write did not reach the parent");
        return text;
    }
    return "ok";
}

/* For each CPU of the affinity mask: whether pinning to it is accepted, and
   whether the thread then runs there. */
static void affinity(int *allowed, int *accepted, int *landed)
{
    cpu_set_t mine, one;
    *allowed = *accepted = *landed = 0;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        return;
    *allowed = CPU_COUNT(&mine);
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &mine))
            continue;
        CPU_ZERO(&one);
        CPU_SET(c, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0)
            continue;
        (*accepted)++;
        sched_yield();
        *landed += sched_getcpu() == c;
    }
    sched_setaffinity(0, sizeof mine, &mine);
}

/* The first version of the kernel's struct sched_attr (as src/core/affinity.c). */
struct sched_attr_v0 {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
};

static const char *time_slice(char *text, size_t room)
{
    struct sched_attr_v0 attr;
    memset(&attr, 0, sizeof attr);
    if (syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) != 0)
        return outcome(0, "sched_getattr", text, room);
    attr.size = sizeof attr;
    attr.sched_flags = 0;
    attr.sched_runtime = 100 * 1000;
    return outcome(syscall(SYS_sched_setattr, 0, &attr, 0) == 0, "sched_setattr", text, room);
}

static const char *epoll_wait2(char *text, size_t room)
{
    int fd = epoll_create1(0);
    if (fd < 0)
        return outcome(0, "epoll_create1", text, room);
    struct epoll_event ev;
    struct timespec timeout = {0, 1000};
    int n = (int)syscall(SYS_epoll_pwait2, fd, &ev, 1, &timeout, NULL, (size_t)8);
    int saved = errno;
    close(fd);
    errno = saved;
    return outcome(n >= 0, "epoll_pwait2", text, room);
}

static long read_long(const char *path)
{
    long v = -1;
    FILE *f = fopen(path, "r");
    if (f && fscanf(f, "%ld", &v) != 1)
        v = -1;
    if (f)
        fclose(f);
    return v;
}

int main(void)
{
    char e1[160], e2[160], e3[160], e4[160], e5[160];
    int allowed, accepted, landed;
    affinity(&allowed, &accepted, &landed);
    struct statvfs shm;
    double shm_mib =
        statvfs("/dev/shm", &shm) == 0 ? (double)shm.f_bavail * shm.f_frsize / 1048576 : -1;
    struct timespec res = {0, 0};
    clock_getres(CLOCK_MONOTONIC, &res);
    printf("{\"cpus_online\": %ld, \"cpus_configured\": %ld, \"cpus_allowed\": %d, "
           "\"affinity_accepted\": %d, \"affinity_landed\": %d, \"cma\": \"%s\", "
           "\"posix_shm\": \"%s\", \"sysv_shm\": \"%s\", \"dev_shm_free_mib\": %.0f, "
           "\"time_slice\": \"%s\", \"epoll_pwait2\": \"%s\", \"ptrace_scope\": %ld, "
           "\"autogroup\": %ld, \"clock_resolution_ns\": %ld}\n",
           sysconf(_SC_NPROCESSORS_ONLN), sysconf(_SC_NPROCESSORS_CONF), allowed, accepted, landed,
           cma(e1, sizeof e1), posix_shm(e2, sizeof e2), sysv_shm(e3, sizeof e3), shm_mib,
           time_slice(e4, sizeof e4), epoll_wait2(e5, sizeof e5),
           read_long("/proc/sys/kernel/yama/ptrace_scope"),
           read_long("/proc/sys/kernel/sched_autogroup_enabled"), (long)res.tv_nsec);
    return 0;
}
