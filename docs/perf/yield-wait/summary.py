"""Medians per cell of the lines coll-ab.sh or p2p-ab.sh print (standard input):
round mpi transport what config MiB value value."""
import collections
import statistics
import sys

cells = collections.defaultdict(list)
for line in sys.stdin:
    f = line.split()
    if len(f) == 9 and f[6] == "MiB":  # p2p-ab.sh's lines name the unit
        del f[6]
    if len(f) == 8:
        cells[tuple(f[1:4]) + (f[5],)].append((f[4], float(f[6]), float(f[7])))
for key in sorted(cells):
    row = []
    for config in ("native", "old", "new"):
        got = [(a, b) for c, a, b in cells[key] if c == config]
        if got:
            row.append("%s %g / %g (%d)" % (config, statistics.median(a for a, _ in got),
                                            statistics.median(b for _, b in got), len(got)))
    print("%s %s %s %s MiB: " % key + " | ".join(row))
