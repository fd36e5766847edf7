/*
 * The event policy's wait (netwait.h). Every socket of the process is
 * registered edge-triggered for input and output: an edge is a new segment,
 * a connection, or send space freed after the MPI library found its socket
 * full, which are the moments a poll moves data. Level-triggered watching
 * would wake the thread for as long as a socket stays writable, or for data
 * another thread of the MPI library (Open MPI's runtime) reads in its own
 * time. Closed sockets leave the set by themselves (epoll forgets a file
 * when its last descriptor closes).
 */
#include "core/netwait.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LISTENER (UINT64_C(1) << 32)

static int epfd = -1;
static struct timespec scanned; /* when the last scan began */

static long ms_since(const struct timespec *then)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    return (long)(now.tv_sec - then->tv_sec) * 1000 + (now.tv_nsec - then->tv_nsec) / 1000000;
}

int tdm_netwait_open(void)
{
    epfd = epoll_create1(EPOLL_CLOEXEC);
    scanned = (struct timespec){0, 0};
    return epfd < 0 ? -1 : 0;
}

int tdm_netwait_scan(int min_age_ms)
{
    if (min_age_ms > 0 && scanned.tv_sec != 0 && ms_since(&scanned) < min_age_ms)
        return -1;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &scanned);
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        return 0;
    int watched = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        char *end;
        long fd = strtol(entry->d_name, &end, 10);
        struct stat st;
        if (*end != '\0' || end == entry->d_name || fd == epfd || fd == dirfd(dir) ||
            fstat((int)fd, &st) != 0 || !S_ISSOCK(st.st_mode))
            continue;
        int listening = 0;
        socklen_t len = sizeof listening;
        getsockopt((int)fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET,
                                 .data.u64 = (uint64_t)fd | (listening ? LISTENER : 0)};
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, (int)fd, &ev) == 0 || errno == EEXIST)
            watched++;
    }
    closedir(dir);
    return watched;
}

int tdm_netwait(int us)
{
    struct epoll_event events[16];
    struct timespec timeout = {us / 1000000, (long)(us % 1000000) * 1000};
    int n = epoll_pwait2(epfd, events, 16, &timeout, NULL);
    int news = 0;
    for (int i = 0; i < n; i++)
        news |= events[i].data.u64 & LISTENER ? 3 : 1;
    return news;
}

void tdm_netwait_close(void)
{
    if (epfd >= 0)
        close(epfd);
    epfd = -1;
}
