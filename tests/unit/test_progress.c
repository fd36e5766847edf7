/*
 * The progress engine and the request tracker without MPI: a fake drive
 * function counts polls. Checks that the thread sleeps while nothing is
 * counted, polls while something is, goes back to sleep when the work is done,
 * and that several application threads can track and complete requests at
 * once (run under ThreadSanitizer by `make tsan`). Then the event policy:
 * news on the process's sockets ends the thread's wait, once per piece of
 * news, including on a socket opened after it began to wait, found once a
 * listening socket reported a connection; while an application thread waits
 * for a proxy it polls without sleeping. Last, an application thread
 * asleep in a proxy wait moves a thread that gets no turns off the CPU where
 * it polled last (tdm_progress_unstick), and where a thread on another
 * rank's CPU would take half of it, a thread with work runs on the CPU
 * where its application posted it. The checks wait for what must
 * happen with long deadlines, so a loaded machine (ctest -j) fails none.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/affinity.h"
#include "core/config.h"
#include "unit.h"
#include "core/progress.h"
#include "core/request.h"

static atomic_long drives;

static void fake_drive(void *context)
{
    (void)context;
    atomic_fetch_add(&drives, 1);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A distinct fake request handle per number (never passed to MPI). */
static MPI_Request fake(uintptr_t n)
{
    MPI_Request r;
    memset(&r, 0, sizeof r);
    uintptr_t v = 0x1000 + n * 16;
    memcpy(&r, &v, sizeof r < sizeof v ? sizeof r : sizeof v);
    return r;
}

enum { THREADS = 4, PER_THREAD = 2000 };

static void *app_thread(void *arg)
{
    uintptr_t base = (uintptr_t)arg * PER_THREAD;
    for (uintptr_t i = 0; i < PER_THREAD; i++)
        tdm_request_started(fake(base + i), 1 << 20);
    for (uintptr_t i = 0; i < PER_THREAD; i++)
        tdm_request_completed(fake(base + i));
    return NULL;
}

/* Whether counter() reaches 'target' within 'ms' (a generous deadline: a
   loaded machine delays a wake-up, it does not invent one). */
static int reaches(long (*counter)(void), long target, int ms)
{
    for (int waited = 0; waited < ms; waited += 5) {
        if (counter() >= target)
            return 1;
        sleep_ms(5);
    }
    return counter() >= target;
}

static long polls(void)
{
    return atomic_load(&drives);
}

/* Whether the polls stop: no poll for 50 ms at a stretch, within 'ms'. A
   loaded machine may delay the thread's last polls past any fixed sleep, so
   the check waits for the quiet stretch instead of expecting it at once. */
static int falls_quiet(int ms)
{
    long last = polls();
    for (int waited = 0, still = 0; waited < ms; waited += 5) {
        sleep_ms(5);
        long now = polls();
        still = now == last ? still + 5 : 0;
        last = now;
        if (still >= 50)
            return 1;
    }
    return 0;
}

/* How many of this process's threads other than the calling one have a
   slice of 'ns' nanoseconds (se.slice in /proc/self/task/TID/sched); *mine:
   the calling thread's, or -1 where the kernel shows none (before 6.6).
   Other threads than the progress thread may run (ThreadSanitizer's own). */
static int others_with_slice(long ns, long *mine)
{
    int found = 0;
    *mine = -1;
    char self[32];
    snprintf(self, sizeof self, "%ld", (long)syscall(SYS_gettid));
    DIR *tasks = opendir("/proc/self/task");
    for (struct dirent *t; tasks && (t = readdir(tasks));) {
        if (t->d_name[0] == '.')
            continue;
        char path[300], line[256];
        snprintf(path, sizeof path, "/proc/self/task/%s/sched", t->d_name);
        FILE *f = fopen(path, "r");
        long slice;
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "se.slice : %ld", &slice) == 1) {
                if (strcmp(t->d_name, self) == 0)
                    *mine = slice;
                else
                    found += slice == ns;
            }
        if (f)
            fclose(f);
    }
    if (tasks)
        closedir(tasks);
    return found;
}

static void check_event_policy(void)
{
    int pair[2];
    EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;
    EXPECT(listener >= 0 && bind(listener, (struct sockaddr *)&address, sizeof address) == 0 &&
           listen(listener, 4) == 0 &&
           getsockname(listener, (struct sockaddr *)&address, &length) == 0);

    /* The timer alone: pauses double from 1 us up to 1 s. Registering a
       socket reports its state once (the pair is writable); after that no
       socket has news, so no wait ends on one. */
    EXPECT(tdm_progress_engine_start(fake_drive, NULL, TDM_POLL_EVENT, 1000000, -1) == 0);
    tdm_request_started(fake(6), 1 << 20);
    sleep_ms(300);
    long wakes = tdm_progress_socket_wakes();
    sleep_ms(300);
    EXPECT(polls() > 0 && tdm_progress_socket_wakes() == wakes);

    /* A byte on a socket of the process ends the wait, and the thread polls. */
    char byte = 'x';
    EXPECT(write(pair[0], &byte, 1) == 1);
    EXPECT(reaches(tdm_progress_socket_wakes, wakes + 1, 5000));
    /* The byte stays unread: a level-triggered watch would report it at
       every wait, and the thread would poll without a pause; edge-triggered,
       it is reported once. */
    sleep_ms(300);
    EXPECT(tdm_progress_socket_wakes() == wakes + 1);

    /* A socket opened now is unknown to the thread until a listening socket
       reports a connection; from then on it is watched too. (A quiet wait
       of the longest pause also rescans, so this passes with either; the
       connection's report is checked first.) */
    int late[2];
    EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, late) == 0);
    int client = socket(AF_INET, SOCK_STREAM, 0);
    wakes = tdm_progress_socket_wakes();
    EXPECT(connect(client, (struct sockaddr *)&address, sizeof address) == 0);
    EXPECT(reaches(tdm_progress_socket_wakes, wakes + 1, 5000));
    sleep_ms(50); /* past the poll that follows the report, and its rescan */
    wakes = tdm_progress_socket_wakes();
    EXPECT(write(late[0], &byte, 1) == 1);
    EXPECT(reaches(tdm_progress_socket_wakes, wakes + 1, 5000));

    /* An application thread waiting for a proxy: once its current wait is
       over (at most the longest pause, 1 s here), the thread polls and
       yields instead of sleeping. 200 polls would take minutes on the
       timer, and take milliseconds yielding even on a loaded machine. */
    atomic_fetch_add(&tdm_progress_waiters, 1);
    EXPECT(reaches(polls, polls() + 200, 10000));
    atomic_fetch_sub(&tdm_progress_waiters, 1);
    /* Back on the timer once the waiter left: from 1 us doubling to 1 s,
       about 21 polls in 2 s, fewer when the machine is loaded. */
    sleep_ms(100);
    long before = polls();
    sleep_ms(2000);
    EXPECT(polls() - before < 40);

    tdm_request_completed(fake(6));
    tdm_progress_engine_stop();
    int fds[] = {pair[0], pair[1], late[0], late[1], listener, client};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        close(fds[i]);
}

static void sleepy_drive(void *context)
{
    (void)context;
    atomic_fetch_add(&drives, 1);
    sleep_ms(2); /* a poll that hardly uses the CPU: a thread without turns */
}

static void pin_self(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* Whether the calling thread may run on CPUs 0 and 1: '*before' its
   affinity (to restore), '*two' those two CPUs. Says what is not checked
   ('what') if not. */
static int cpus_0_and_1(cpu_set_t *before, cpu_set_t *two, const char *what)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2 ||
        pthread_getaffinity_np(pthread_self(), sizeof *before, before) != 0 ||
        !CPU_ISSET(0, before) || !CPU_ISSET(1, before)) {
        printf("fewer than 2 CPUs: %s not checked\n", what);
        return 0;
    }
    CPU_ZERO(two);
    CPU_SET(0, two);
    CPU_SET(1, two);
    return 1;
}

/* An application thread asleep in a proxy wait that finds the thread without
   turns moves it off the CPU where it polled last, unless that is its own.
   Until moved, the thread may poll on either CPU, so the caller goes to the
   other one than where it last polled until a look catches it there. */
static void check_unstick(void)
{
    cpu_set_t before, two;
    if (!cpus_0_and_1(&before, &two, "tdm_progress_unstick"))
        return;
    tdm_affinity_set_node_cpus(&two, 2, 0);
    EXPECT(tdm_progress_engine_start(sleepy_drive, NULL, TDM_POLL_YIELD, 20, -1) == 0);
    tdm_progress_share_node(1); /* node mates over a network: waiters look */
    EXPECT(tdm_progress_follows_lent_cpus() && tdm_progress_near_lenders());
    atomic_fetch_add(&tdm_progress_sleepers, 1); /* as a waiter asleep in a proxy wait */
    tdm_request_started(fake(9), 1 << 20);
    EXPECT(reaches(polls, polls() + 2, 2000));
    double ran = tdm_progress_thread_seconds();
    sleep_ms(50);
    EXPECT(ran >= 0 && tdm_progress_thread_seconds() - ran < 0.025); /* without turns */
    int mine = -1;
    for (int look = 0; look < 100 && tdm_progress_unstuck() == 0; look++) {
        int where = tdm_progress_polled_cpu();
        EXPECT(where == 0 || where == 1);
        mine = 1 - where;
        pin_self(mine);
        tdm_progress_unstick(); /* moves it unless it went to 'mine' meanwhile */
    }
    EXPECT(tdm_progress_unstuck() == 1);
    EXPECT(reaches(polls, polls() + 2, 2000));
    EXPECT(tdm_progress_polled_cpu() == mine); /* off the other CPU, it can only be here */
    for (int look = 0; look < 5; look++) {
        tdm_progress_unstick(); /* it polls on the caller's CPU: stays */
        sleep_ms(3);
    }
    EXPECT(tdm_progress_unstuck() == 1 && tdm_progress_polled_cpu() == mine);
    tdm_request_completed(fake(9));
    atomic_fetch_sub(&tdm_progress_sleepers, 1);
    tdm_progress_engine_stop();
    tdm_affinity_forget();
    pthread_setaffinity_np(pthread_self(), sizeof before, &before);
}

/* How many of this process's threads other than the calling one may run on
   exactly the CPUs 'list' (Cpus_allowed_list in /proc/self/task/TID/status,
   such as "1" or "0-1"). */
static int others_allowed(const char *list)
{
    int found = 0;
    char self[32];
    snprintf(self, sizeof self, "%ld", (long)syscall(SYS_gettid));
    DIR *tasks = opendir("/proc/self/task");
    for (struct dirent *t; tasks && (t = readdir(tasks));) {
        if (t->d_name[0] == '.' || strcmp(t->d_name, self) == 0)
            continue;
        char path[300], line[256], allowed[128];
        snprintf(path, sizeof path, "/proc/self/task/%s/status", t->d_name);
        FILE *f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "Cpus_allowed_list: %127s", allowed) == 1)
                found += strcmp(allowed, list) == 0;
        if (f)
            fclose(f);
    }
    if (tasks)
        closedir(tasks);
    return found;
}

/* Whether the thread polls on 'cpu' (and only there) within 'ms'. */
static int polls_on(int cpu, int ms)
{
    for (int waited = 0; waited < ms; waited += 5) {
        long before = polls();
        if (reaches(polls, before + 2, ms) && tdm_progress_polled_cpu() == cpu)
            return 1;
        sleep_ms(5);
    }
    return 0;
}

/* Print each other thread's name and CPUs, for a check that failed. */
static void show_threads(void)
{
    DIR *tasks = opendir("/proc/self/task");
    for (struct dirent *t; tasks && (t = readdir(tasks));) {
        if (t->d_name[0] == '.')
            continue;
        char path[300], line[256];
        snprintf(path, sizeof path, "/proc/self/task/%s/status", t->d_name);
        FILE *f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f))
            if (strncmp(line, "Name:", 5) == 0 || strncmp(line, "Cpus_allowed_list:", 18) == 0)
                fprintf(stderr, "  task %s %s", t->d_name, line);
        if (f)
            fclose(f);
    }
    if (tasks)
        closedir(tasks);
}

/* Whether the progress thread is back on the node's CPUs (neither CPU 0
   nor 1 alone) within 'ms': it moves back on its way to sleep, which a
   loaded machine (a ThreadSanitizer build beside other jobs) can delay past
   the 50 ms falls_quiet waits for. On failure, the threads' CPUs are
   printed. */
static int shares_again(int ms)
{
    for (int waited = 0; waited < ms; waited += 5) {
        if (others_allowed("0") + others_allowed("1") == 0)
            return 1;
        sleep_ms(5);
    }
    if (others_allowed("0") + others_allowed("1") == 0)
        return 1;
    fprintf(stderr, "still on one CPU after %d ms (polls %ld):\n", ms, polls());
    show_threads();
    return 0;
}

/* On a node with no CPU to spare (two CPUs, two ranks) whose ranks are in
   sessions apart, a thread with work runs beside the computation on the CPU
   where the application counted it last, and follows it; back to the
   node's CPUs once the work is done. Not where the ranks share a session,
   nor where the node has a CPU to spare. */
static void check_beside(void)
{
    cpu_set_t before, two;
    if (!cpus_0_and_1(&before, &two, "the thread beside its rank"))
        return;
    for (int round = 0; round < 3; round++) {
        int beside = round == 0;
        /* round 1: one session; round 2: one rank, two CPUs */
        tdm_affinity_set_node_cpus(&two, round == 2 ? 1 : 2, round != 1);
        EXPECT(tdm_progress_engine_start(fake_drive, NULL, TDM_POLL_YIELD, 20, -1) == 0);
        tdm_progress_share_node(0);
        for (int step = 0; step < 3; step++) {
            int cpu = step % 2 ? 0 : 1;
            pin_self(cpu);
            tdm_request_started(fake(10), 1 << 20);
            if (beside) {
                EXPECT(polls_on(cpu, 5000));
                EXPECT(others_allowed(cpu ? "1" : "0") == 1);
            } else {
                EXPECT(reaches(polls, polls() + 2, 5000));
                EXPECT(others_allowed("0-1") >= 1 &&
                       others_allowed("0") + others_allowed("1") == 0);
            }
            tdm_request_completed(fake(10));
            EXPECT(falls_quiet(2000));
        }
        /* the work done, it shares the node's CPUs again */
        EXPECT(shares_again(20000));
        if (beside) {
            /* ... also where the work ends at any moment of its loop: work
               that completed between its check for idleness and its sleep
               once left it asleep beside its rank (fresh-clone CI, under
               ThreadSanitizer) */
            for (int burst = 0; burst < 2000; burst++) {
                tdm_request_started(fake(10), 1 << 20);
                for (volatile int spin = burst % 97 * 10; spin > 0; spin--)
                    ;
                tdm_request_completed(fake(10));
                if (burst % 50 == 0)
                    sleep_ms(1); /* asleep, or on its way there */
            }
            EXPECT(falls_quiet(2000));
            EXPECT(shares_again(20000));
        }
        tdm_progress_engine_stop();
        tdm_affinity_forget();
    }
    pthread_setaffinity_np(pthread_self(), sizeof before, &before);
}

/* A waiter may keep its CPU busy before it yields only where each rank of
   the node has a CPU of its own, and only where that is known. */
static void check_core_each(void)
{
    cpu_set_t two;
    CPU_ZERO(&two);
    CPU_SET(0, &two);
    CPU_SET(1, &two);
    tdm_affinity_forget();
    EXPECT(!tdm_affinity_core_each()); /* not known */
    for (int ranks = 1; ranks <= 3; ranks++) {
        tdm_affinity_set_node_cpus(&two, ranks, 0);
        EXPECT(tdm_affinity_core_each() == (ranks <= 2));
    }
    tdm_affinity_forget();
    EXPECT(!tdm_affinity_core_each());
}

/* A thread serving windows polls without pause only on a core no rank
   computes on: a CPU outside the ranks' own, or ranks free to run on twice
   as many CPUs as there are ranks. */
static void check_spare_for(void)
{
    cpu_set_t four;
    CPU_ZERO(&four);
    for (int c = 0; c < 4; c++)
        CPU_SET(c, &four);
    tdm_affinity_forget();
    EXPECT(!tdm_affinity_spare_for(-1) && !tdm_affinity_spare_for(5)); /* not known */
    tdm_affinity_set_node_cpus(&four, 2, 0);
    EXPECT(tdm_affinity_spare_for(-1)); /* 2 ranks free on 4 CPUs */
    EXPECT(tdm_affinity_spare_for(5));  /* a CPU no rank runs on */
    EXPECT(!tdm_affinity_spare_for(1)); /* a rank's CPU */
    tdm_affinity_set_node_cpus(&four, 3, 0);
    EXPECT(!tdm_affinity_spare_for(-1)); /* 3 ranks on 4 CPUs */
    tdm_affinity_forget();
}

/* The waits lend a rank's core (TANDEM_WAIT=auto) only where the thread has
   none of its own: not pinned, and the ranks' CPUs are too few to leave one
   free per rank (the 2-core machine), never beside unbound ranks on a large
   host (8 ranks on 16 CPUs). */
static void check_thread_has_core(void)
{
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    for (int c = 0; c < 16; c++)
        CPU_SET(c, &cpus);
    tdm_affinity_forget();
    EXPECT(tdm_affinity_thread_has_core(3));   /* pinned */
    EXPECT(!tdm_affinity_thread_has_core(-1)); /* not known */
    tdm_affinity_set_node_cpus(&cpus, 8, 0);
    EXPECT(tdm_affinity_thread_has_core(-1)); /* 8 unbound ranks, 16 CPUs */
    tdm_affinity_set_node_cpus(&cpus, 14, 0);
    EXPECT(!tdm_affinity_thread_has_core(-1)); /* 14 ranks, 16 CPUs */
    CPU_ZERO(&cpus);
    CPU_SET(0, &cpus);
    CPU_SET(1, &cpus);
    tdm_affinity_set_node_cpus(&cpus, 2, 0);
    EXPECT(!tdm_affinity_thread_has_core(-1)); /* 2 ranks, 2 CPUs */
    tdm_affinity_forget();
}

/* TANDEM_PROGRESS=auto on one host takes a progress thread only where
   each rank leaves a CPU for it beside its computation's. */
static void check_room_for_threads(void)
{
    EXPECT(tdm_affinity_room_for_threads(8, 16, NULL));
    EXPECT(tdm_affinity_room_for_threads(2, 4, NULL));
    EXPECT(!tdm_affinity_room_for_threads(2, 2, NULL));   /* the 2-core machine */
    EXPECT(!tdm_affinity_room_for_threads(14, 16, NULL)); /* every core a rank */
    EXPECT(!tdm_affinity_room_for_threads(8, 16, "4"));   /* hybrid: 4 threads each */
    EXPECT(tdm_affinity_room_for_threads(3, 16, "4,2"));  /* 3 x (4 + 1) = 15 */
    EXPECT(tdm_affinity_room_for_threads(8, 16, "1"));
    EXPECT(tdm_affinity_room_for_threads(8, 16, "dynamic")); /* no number: one each */
    EXPECT(!tdm_affinity_room_for_threads(8, 0, NULL));      /* CPUs unknown */
    EXPECT(tdm_affinity_launch_cpus() >= 1);
}

int main(void)
{
    char *env[] = {NULL};
    tdm_config_parse(tdm_config_table, TDM_CFG_COUNT, env, tdm_config, NULL, NULL);
    tdm_eager_limit = 4096; /* what tdm_progress_start sets from TANDEM_EAGER_LIMIT */
    EXPECT(tdm_progress_engine_start(fake_drive, NULL, TDM_POLL_SLEEP, 20, -1) == 0);

    /* Nothing counted: the thread sleeps. */
    sleep_ms(50);
    EXPECT(atomic_load(&drives) == 0);

    /* It asked for slices of 100 us;
       where the kernel shows slices, it has them, and this thread keeps its
       own. */
    EXPECT(tdm_progress_slice_us() == 100);
    long mine;
    int sliced = others_with_slice(100000, &mine);
    if (mine >= 0)
        EXPECT(sliced == 1 && mine != 100000);
    else
        printf("no se.slice in /proc: the kernel's slices are not checked\n");

    /* Small operations stay below the eager limit and wake nothing. */
    tdm_request_started(fake(1), 4096);
    sleep_ms(20);
    EXPECT(tdm_progress_outstanding() == 0 && atomic_load(&drives) == 0);

    /* A large one wakes the thread, which polls until it completes. */
    tdm_request_started(fake(2), 1 << 20);
    EXPECT(tdm_progress_outstanding() == 1);
    EXPECT(reaches(polls, 1, 2000));
    tdm_request_completed(fake(2));
    EXPECT(tdm_progress_outstanding() == 0 && tdm_request_known() == 0);
    EXPECT(falls_quiet(2000)); /* asleep again */

    /* Persistent requests: counted while started, known until freed. */
    tdm_request_persistent(fake(3), 1 << 20);
    tdm_request_persistent(fake(4), 16);
    EXPECT(tdm_progress_outstanding() == 0 && tdm_request_known() == 2);
    tdm_request_start_persistent(fake(3));
    tdm_request_start_persistent(fake(4));
    EXPECT(tdm_progress_outstanding() == 1);
    tdm_request_completed(fake(3));
    EXPECT(tdm_progress_outstanding() == 0 && tdm_request_known() == 2);
    tdm_request_start_persistent(fake(3));
    tdm_request_freed(fake(3));
    tdm_request_freed(fake(4));
    EXPECT(tdm_progress_outstanding() == 0 && tdm_request_known() == 0);

    /* Several application threads at once, 8000 requests through the table. */
    pthread_t threads[THREADS];
    for (uintptr_t t = 0; t < THREADS; t++)
        pthread_create(&threads[t], NULL, app_thread, (void *)(t + 1));
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    EXPECT(tdm_progress_outstanding() == 0 && tdm_request_known() == 0);

    /* The application inside a blocking call: the thread does not poll. */
    tdm_request_started(fake(5), 1 << 20);
    tdm_progress_blocking_enter();
    EXPECT(falls_quiet(2000));
    tdm_progress_blocking_leave();
    tdm_request_completed(fake(5));

    /* A schedule that an application thread moves itself in a wait: the
       thread sleeps while it does, and polls again once it leaves with the
       schedule still outstanding. */
    tdm_progress_work_begin();
    atomic_fetch_add(&tdm_progress_own_work, 1);
    atomic_fetch_add(&tdm_progress_drivers, 1);
    EXPECT(falls_quiet(2000));
    /* ... but not while other work is outstanding, which only it moves */
    tdm_request_started(fake(7), 1 << 20);
    EXPECT(reaches(polls, polls() + 1, 2000));
    tdm_request_completed(fake(7));
    EXPECT(falls_quiet(2000));
    tdm_progress_driver_leaves();
    EXPECT(reaches(polls, polls() + 1, 2000));
    atomic_fetch_sub(&tdm_progress_own_work, 1);
    tdm_progress_work_end();

    /* Work counted from zero without a wake-up (a small collective, left to
       the application's calls): the next work counted wakes the thread. */
    EXPECT(falls_quiet(2000));
    EXPECT(tdm_progress_work_count() == 1);
    tdm_progress_work_unwoken();
    EXPECT(falls_quiet(2000)); /* nobody woke it */
    tdm_request_started(fake(8), 1 << 20);
    EXPECT(reaches(polls, polls() + 1, 2000));
    tdm_request_completed(fake(8));
    tdm_progress_work_end();

    tdm_progress_engine_stop();
    printf("%d polls in all\n", (int)atomic_load(&drives));
    check_event_policy();
    check_unstick();
    check_beside();
    check_core_each();
    check_spare_for();
    check_thread_has_core();
    check_room_for_threads();
    UNIT_REPORT();
    return failures ? 1 : 0;
}
