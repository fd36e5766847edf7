"""The medians of run.sh's rounds as a Markdown table (us per alltoall):
    python3 docs/perf/virt/alltoall-by-process/table.py docs/perf/virt/alltoall-by-process/a2a.json"""

import json
import statistics
import sys
from collections import defaultdict

times = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    times[(r["mpi"], r["build"], r["v"], r["block"])].append(r["us"])
blocks = sorted({k[3] for k in times})
print("| MPI | ranks | build | " + " | ".join(f"{8 * b} B blocks" for b in blocks) + " |")
print("|---|---|---|" + "---|" * len(blocks))
for mpi in ("mpich", "openmpi"):
    for build, v in [("real", 1), ("old", 4), ("new", 4), ("old", 16), ("new", 16)]:
        cells = []
        for b in blocks:
            got = times.get((mpi, build, v, b))
            cells.append(f"{statistics.median(got):.1f} ({min(got):.1f}-{max(got):.1f})" if got else "-")
        label = {"real": "processes", "old": "a message per pair of ranks", "new": "by process"}[build]
        print(f"| {mpi} | 2 x {v} | {label} | " + " | ".join(cells) + " |")
