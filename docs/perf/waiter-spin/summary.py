"""Medians and ranges per cell of the A/B runs in this folder: reads
pure64-*.txt (coll64-ab/ab.sh: round collective config us overlap) or
loop-*.txt (loop-ab.sh: round mpi ranks collective bytes config us)."""

import statistics
import sys
from collections import defaultdict

for name in sys.argv[1:]:
    cells = defaultdict(list)
    with open(name) as f:
        lines = f.read().splitlines()
    for line in lines:
        fields = line.split()
        if len(fields) == 5:  # coll64-ab/ab.sh
            _, coll, config, us, _ = fields
            key = (coll,)
        elif len(fields) == 7:  # loop-ab.sh
            _, mpi, ranks, coll, size, config, us = fields
            key = (mpi, f"{ranks} ranks", coll, f"{size} B")
        else:
            continue
        if us != "NA":
            cells[key, config].append(float(us))
    print(name)
    for key in sorted({k for k, _ in cells}):
        row = []
        for config in ("native", "multiple", "before", "after"):
            times = cells.get((key, config))
            if times:
                row.append(
                    f"{config} {statistics.median(times):7.2f} ({min(times):.2f}-{max(times):.2f})"
                )
        print("  " + " ".join(key), " | ".join(row))
