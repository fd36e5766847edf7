/* The .prof writer on counters set by hand (no MPI call): Open MPI 4.1's
   layout of E and I lines, whose histogram goes on the E line (point-to-point
   and internal messages together) or, for a peer without E line, on the I
   line; then S, R and C lines, in that order, the C lines holding only the
   collectives the MPI library ran (Tandem's are the I lines' messages). */
#include <string.h>

#include "monitor/dump.h"
#include "monitor/monitor.h"
#include "unit.h"

enum { SIZE = 3 };

static uint64_t all[TDM_VIEW_KINDS * SIZE * TDM_FIELDS];

static void put(int kind, int peer, uint64_t bytes)
{
    uint64_t *c = all + ((size_t)kind * SIZE + (size_t)peer) * TDM_FIELDS;
    c[0] += 1;
    c[1] += bytes;
    c[2 + tdm_monitor_bin(bytes)] += 1;
}

/* "a,b,...": the 66 bins with 'ones' set at the given bins. */
static void bins(char *out, size_t size, int first, int second)
{
    out[0] = '\0';
    for (int bin = 0; bin < TDM_BINS; bin++) {
        int n = (bin == first) + (bin == second);
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%d%s", n, bin < TDM_BINS - 1 ? "," : "");
    }
}

int main(void)
{
    EXPECT(tdm_monitor_bin(0) == 0 && tdm_monitor_bin(1) == 1 && tdm_monitor_bin(2) == 2);
    EXPECT(tdm_monitor_bin(3) == 2 && tdm_monitor_bin(1024) == 11 && tdm_monitor_bin(1023) == 10);
    EXPECT(tdm_monitor_bin(UINT64_MAX) == 64);

    put(TANDEM_MONITOR_P2P_SEND, 1, 100);    /* peer 1: E and I */
    put(TANDEM_MONITOR_COLL_INTERNAL, 1, 8); /* bin 4 */
    put(TANDEM_MONITOR_COLL_INTERNAL, 2, 0); /* peer 2: I only */
    put(TANDEM_MONITOR_OSC_PUT, 2, 12);
    put(TANDEM_MONITOR_OSC_GET, 1, 400);
    put(TANDEM_MONITOR_COLL, 1, 40); /* the MPI library ran it: a C line */
    put(TDM_COLL_NATIVE, 1, 40);
    put(TANDEM_MONITOR_COLL, 2, 8);        /* Tandem ran it: its messages are the I line */
    put(TANDEM_MONITOR_P2P_RECV, 1, 100);  /* no line: the job file has it */
    put(TANDEM_MONITOR_IO_WRITE, 0, 4096); /* no line either */

    char text[8192] = {0};
    FILE *f = tmpfile();
    tdm_monitor_write_prof(f, 0, SIZE, all);
    rewind(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';

    char e_bins[512], i_bins[512], expected[8192];
    bins(e_bins, sizeof e_bins, 7, 4); /* 100 bytes: bin 7; the internal 8 bytes: bin 4 */
    bins(i_bins, sizeof i_bins, 0, -1);
    snprintf(expected, sizeof expected,
             "# POINT TO POINT\n"
             "E\t0\t1\t100 bytes\t1 msgs sent\t%s\n"
             "I\t0\t1\t8 bytes\t1 msgs sent\n"
             "I\t0\t2\t0 bytes\t1 msgs sent\t%s\n"
             "# OSC\n"
             "S\t0\t2\t12 bytes\t1 msgs sent\n"
             "R\t0\t1\t400 bytes\t1 msgs sent\n"
             "# COLLECTIVES\n"
             "C\t0\t1\t40 bytes\t1 msgs sent\n",
             e_bins, i_bins);
    EXPECT(strcmp(text, expected) == 0);
    if (strcmp(text, expected) != 0)
        printf("got:\n%s\nexpected:\n%s\n", text, expected);
    UNIT_REPORT();
    return failures != 0;
}
