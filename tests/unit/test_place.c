/* The greedy grouping of tandem_place_comm (monitor/place.c) on matrices
   set by hand: pairs that exchange much end on one host, an empty matrix
   keeps every slot's role, hosts of unequal sizes and interleaved slots. */
#include "monitor/place.h"

#include <string.h>

#include "tandem.h"
#include "unit.h"
#include "wrappers/gen_hooks.h"

/* tandem_place_comm's calls, which this test does not make */
int tandem_monitor_read(int kind, unsigned long long *messages, unsigned long long *bytes,
                        unsigned long long *histogram)
{
    (void)kind, (void)messages, (void)bytes, (void)histogram;
    return MPI_ERR_OTHER;
}
int tdm_hook_Comm_split(int lang, MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    (void)lang, (void)comm, (void)color, (void)key, (void)newcomm;
    return MPI_ERR_OTHER;
}

enum { N = 8 };

static void pair(double *t, int a, int b, double bytes)
{
    t[a * N + b] = t[b * N + a] = bytes;
}

/* Whether roles a and b landed on one host. */
static int together(const int *role_of, const int *host_of, int a, int b)
{
    int host_a = -1, host_b = -2;
    for (int s = 0; s < N; s++) {
        if (role_of[s] == a)
            host_a = host_of[s];
        if (role_of[s] == b)
            host_b = host_of[s];
    }
    return host_a == host_b;
}

/* Every role once. */
static int permutation(const int *role_of)
{
    int seen[N] = {0};
    for (int s = 0; s < N; s++) {
        if (role_of[s] < 0 || role_of[s] >= N || seen[role_of[s]])
            return 0;
        seen[role_of[s]] = 1;
    }
    return 1;
}

int main(void)
{
    double t[N * N];
    int role_of[N];
    int two_hosts[N] = {0, 0, 0, 0, 4, 4, 4, 4};

    /* nothing counted: every slot keeps its role */
    memset(t, 0, sizeof t);
    EXPECT(tdm_place_greedy(N, t, two_hosts, role_of) == 0);
    for (int s = 0; s < N; s++)
        EXPECT(role_of[s] == s);

    /* pairs half a world apart (0-4, 1-5, 2-6, 3-7), as a block launch puts
       them on different hosts, land on one host each */
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            t[i * N + j] = i == j ? 0 : 1024;
    for (int r = 0; r < 4; r++)
        pair(t, r, r + 4, 1 << 20);
    EXPECT(tdm_place_greedy(N, t, two_hosts, role_of) == 0);
    EXPECT(permutation(role_of));
    for (int r = 0; r < 4; r++)
        EXPECT(together(role_of, two_hosts, r, r + 4));

    /* hosts of 2, 2 and 4 slots, interleaved (slots 0 and 3 on host 0, ...) */
    int uneven[N] = {0, 1, 1, 0, 4, 4, 4, 4};
    EXPECT(tdm_place_greedy(N, t, uneven, role_of) == 0);
    EXPECT(permutation(role_of));
    for (int r = 0; r < 4; r++)
        EXPECT(together(role_of, uneven, r, r + 4));
    EXPECT(role_of[0] < role_of[3]); /* a host's slots take its roles in order */

    /* one host: the roles stay in order, whatever the traffic */
    int one_host[N] = {0, 0, 0, 0, 0, 0, 0, 0};
    EXPECT(tdm_place_greedy(N, t, one_host, role_of) == 0);
    for (int s = 0; s < N; s++)
        EXPECT(role_of[s] == s);

    UNIT_REPORT();
    return failures ? 1 : 0;
}
