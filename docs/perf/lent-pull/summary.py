"""Medians per cell of the lines cfg-ab.sh prints (standard input): one
column per configuration, in the order they first appear, each
availability% / slowdown% / transfer alone in ms (runs)."""

import collections
import statistics
import sys

cells = collections.defaultdict(lambda: collections.defaultdict(list))
configs = []
for line in sys.stdin:
    f = line.split()
    if len(f) < 9:
        continue
    if f[4] not in configs:
        configs.append(f[4])
    cells[(f[1], f[2], f[3], f[5])][f[4]].append([float(v) for v in f[6:9]])
for key in sorted(cells):
    row = []
    for config in configs:
        got = cells[key].get(config)
        if got:
            medians = " / ".join(f"{statistics.median(v[i] for v in got):g}" for i in range(3))
            row.append(f"{config} {medians} ({len(got)})")
    mpi, transport, variant, mib = key
    print(f"{mpi} {transport} {variant} {mib} MiB: " + " | ".join(row))
