"""Medians per cell of the lines coll-ab.sh, p2p-ab.sh or lent-pull/cfg-ab.sh
print (standard input): round mpi transport what config MiB value value
[value...]. One column per configuration: native, old, new first, then any
other in the order it first appears."""

import collections
import statistics
import sys

cells = collections.defaultdict(list)
configs = ["native", "old", "new"]
for line in sys.stdin:
    f = line.split()
    if len(f) >= 9 and f[6] == "MiB":  # older lines (p2p.txt) name the unit
        del f[6]
    if len(f) >= 8:
        cells[tuple(f[1:4]) + (f[5],)].append((f[4], [float(v) for v in f[6:]]))
        if f[4] not in configs:
            configs.append(f[4])
for key in sorted(cells):
    row = []
    for config in configs:
        got = [values for c, values in cells[key] if c == config]
        if got:
            medians = (statistics.median(v[i] for v in got) for i in range(len(got[0])))
            row.append(f"{config} {' / '.join(f'{m:g}' for m in medians)} ({len(got)})")
    mpi, transport, what, mib = key
    print(f"{mpi} {transport} {what} {mib} MiB: " + " | ".join(row))
