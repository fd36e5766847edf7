"""The medians of run.sh's rounds as a Markdown table (us per call, the
range of the rounds in brackets), alltoallv and alltoall side by side:
    python3 docs/perf/virt/alltoallv-by-process/table.py docs/perf/virt/alltoallv-by-process/a2av.json"""

import json
import statistics
import sys
from collections import defaultdict

times = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    times[(r["collective"], r["mpi"], r["build"], r["v"], r["block"])].append(r["us"])
blocks = sorted({k[4] for k in times})
LABEL = {"real": "processes", "old": "before", "new": "by process"}
for collective in ("alltoallv", "alltoall"):
    print(f"\n{collective}, us per call\n")
    print("| MPI | ranks | build | " + " | ".join(f"{8 * b} B blocks" for b in blocks) + " |")
    print("|---|---|---|" + "---|" * len(blocks))
    for mpi in ("mpich", "openmpi"):
        for build, v in [("real", 1), ("old", 4), ("new", 4), ("old", 16), ("new", 16)]:
            cells = []
            for b in blocks:
                got = times.get((collective, mpi, build, v, b))
                cells.append(
                    f"{statistics.median(got):.1f} ({min(got):.1f}-{max(got):.1f})" if got else "-"
                )
            print(f"| {mpi} | 2 x {v} | {LABEL[build]} | " + " | ".join(cells) + " |")
