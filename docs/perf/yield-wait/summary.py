"""Medians per cell of the lines coll-ab.sh or p2p-ab.sh print (standard input):
round mpi transport what config MiB value value [value...]."""
import collections
import statistics
import sys

cells = collections.defaultdict(list)
for line in sys.stdin:
    f = line.split()
    if len(f) >= 9 and f[6] == "MiB":  # older lines (p2p.txt) name the unit
        del f[6]
    if len(f) >= 8:
        cells[tuple(f[1:4]) + (f[5],)].append((f[4], [float(v) for v in f[6:]]))
for key in sorted(cells):
    row = []
    for config in ("native", "old", "new"):
        got = [values for c, values in cells[key] if c == config]
        if got:
            medians = (statistics.median(v[i] for v in got) for i in range(len(got[0])))
            row.append("%s %s (%d)" % (config, " / ".join("%g" % m for m in medians), len(got)))
    print("%s %s %s %s MiB: " % key + " | ".join(row))
