#!/bin/bash
# The scheduler's view of one overlap trial (root; tracefs). Builds a copy of
# bench/overlap.c that writes "R<rank> compute|wait|done" to trace_marker,
# runs it under the given configuration with sched_switch/wakeup/migrate
# traced, and prints trial K (default 6) as lines: time, CPU, event.
#   bash docs/perf/stuck/trace-trial.sh VARIANT SIZE [K]   (Open MPI, shm, proxy, yield)
#   LAUNCH_ARGS="--mca pml ob1 --mca btl self,tcp" bash docs/perf/stuck/trace-trial.sh both 1048576
# tracefs is mounted under /tmp/tracefs: `ip netns exec` hides /sys's mounts.
set -e
here=$(cd "$(dirname "$0")/../../.." && pwd)
variant=$1 size=$2 trial=${3:-6}
T=/tmp/tracefs
mkdir -p $T
mountpoint -q $T || mount -t tracefs nodev $T
python3 - "$here/bench/overlap.c" /tmp/overlap-marked.c <<'PY'
import sys
s = open(sys.argv[1]).read()
s = s.replace('#include "stats.h"', '''#include "stats.h"
#include <fcntl.h>
#include <unistd.h>
static void mark(const char *what, int rank)
{
    static int fd = -1;
    char b[64];
    if (fd < 0)
        fd = open("/tmp/tracefs/trace_marker", O_WRONLY);
    int n = snprintf(b, sizeof b, "R%d %s\\n", rank, what);
    if (write(fd, b, (size_t)n) < 0) {
    }
}''')
s = s.replace("    w0 = MPI_Wtime();\n", "    w0 = MPI_Wtime();\n    if (sweeps)\n        mark(\"compute\", rank);\n")
s = s.replace("    w1 = MPI_Wtime();\n", "    w1 = MPI_Wtime();\n    if (sweeps)\n        mark(\"wait\", rank);\n")
s = s.replace("    *inflight = w1 - w0;", "    if (sweeps)\n        mark(\"done\", rank);\n    *inflight = w1 - w0;")
open(sys.argv[2], "w").write(s)
PY
mpicc.openmpi -O2 -I"$here/bench" /tmp/overlap-marked.c -o /tmp/overlap-marked
echo 0 > $T/tracing_on; echo > $T/trace; echo 30000 > $T/buffer_size_kb; echo 0 > $T/events/enable
for e in sched_switch sched_wakeup sched_migrate_task; do echo 1 > $T/events/sched/$e/enable; done
echo 1 > $T/tracing_on
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi -np 2 --oversubscribe \
    $LAUNCH_ARGS -x LD_PRELOAD="$here/build/openmpi/libtandem.so" \
    -x TANDEM_PROGRESS=${PROGRESS:-proxy} -x TANDEM_POLL=${POLL:-yield} \
    /tmp/overlap-marked "$variant" "$size" 11
echo 0 > $T/tracing_on
computing=R1
[ "$variant" = isend_recv ] && computing=R0
python3 - $T/trace "$trial" $computing <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
rank = sys.argv[3]
first = [i for i, l in enumerate(lines) if f"{rank} compute" in l][int(sys.argv[2])]
for number, l in enumerate(lines[first - 10 :], first - 10):
    m = re.search(r"\[(\d+)\].*?(\d+\.\d+): (\w+): (.*)", l)
    if not m:
        continue
    cpu, ts, event, rest = m.groups()
    if event == "tracing_mark_write":
        print(ts, cpu, "MARK", rest.strip())
    elif event == "sched_switch":
        a = re.search(r"prev_pid=(\d+).*prev_state=(\S+) ==> next_comm=\S+ next_pid=(\d+)", rest)
        print(ts, cpu, "switch", a.group(1), a.group(2), "->", a.group(3))
    elif event == "sched_wakeup":
        a = re.search(r"pid=(\d+).*target_cpu=(\d+)", rest)
        print(ts, cpu, "wakeup", a.group(1), "on", a.group(2))
    else:
        print(ts, cpu, event, rest[:80])
    if number > first and f"{rank} done" in l:
        break
PY
