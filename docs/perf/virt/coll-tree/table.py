"""The medians of run.sh's rounds as a Markdown table (us per call):
    python3 docs/perf/virt/coll-tree/table.py docs/perf/virt/coll-tree/coll.json"""

import json
import statistics
import sys
from collections import defaultdict

times = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    times[(r["mpi"], r["build"], r["v"], r["collective"])].append(r["us"])
collectives = ["barrier", "bcast", "reduce", "allreduce", "allgather", "gather", "scatter"]
print("| MPI | ranks | build | " + " | ".join(collectives) + " |")
print("|---|---|---|" + "---|" * len(collectives))
for mpi in ("mpich", "openmpi"):
    for build, v in [("real", 1), ("old", 1), ("new", 1), ("old", 8), ("new", 8), ("old", 32), ("new", 32)]:
        cells = []
        for c in collectives:
            got = times.get((mpi, build, v, c))
            cells.append(f"{statistics.median(got):.1f} ({min(got):.1f}-{max(got):.1f})" if got else "-")
        label = {"real": "processes", "old": "linear", "new": "trees"}[build]
        print(f"| {mpi} | 2 x {v} | {label} | " + " | ".join(cells) + " |")
