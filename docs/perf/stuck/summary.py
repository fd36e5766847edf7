"""Totals per cell of the lines stalls.sh prints (standard input): transfers,
how many took over 1 ms, the median of the runs' medians and the longest."""

import collections
import statistics
import sys

cells = collections.defaultdict(list)
for line in sys.stdin:
    f = line.split()
    if len(f) == 9:
        cells[tuple(f[1:4])].append((int(f[5]), int(f[6]), float(f[7]), float(f[8])))
for (mpi, variant, config), runs in sorted(cells.items()):
    slow = sum(r[1] for r in runs)
    median = statistics.median(r[2] for r in runs)
    longest = max(r[3] for r in runs)
    print(
        f"{mpi} {variant} {config}: {len(runs)} runs, {sum(r[0] for r in runs)} transfers, "
        f"{slow} over 1 ms, median {median:.3f} ms, longest {longest:.1f} ms"
    )
