"""Medians over the rounds of run.sh's lines, per MPI and level.

python3 docs/perf/thread-level/summary.py < docs/perf/thread-level/levels.txt
"""

import statistics
import sys

LEVELS = [
    "single",
    "single-thread",
    "serialized",
    "serialized-lock",
    "multiple",
    "tandem-drive",
    "tandem-drive-before",
]
rows: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
for line in sys.stdin:
    parts = line.split()
    if len(parts) != 7:
        continue
    _, mpi, level, _, lat_med, lat_min, rate = parts
    rows.setdefault((mpi, level), []).append((float(lat_med), float(lat_min), float(rate)))

print("| MPI | level | latency 8 B, us (rounds) | rate, 1e6/s (rounds) |")
print("|---|---|---|---|")
for mpi in ("openmpi", "mpich"):
    for level in LEVELS:
        runs = rows.get((mpi, level))
        if not runs:
            continue
        lat = [r[0] for r in runs]
        rate = [r[2] / 1e6 for r in runs]
        print(
            f"| {mpi} | {level} | {statistics.median(lat):.3f} ({min(lat):.3f}-{max(lat):.3f}) "
            f"| {statistics.median(rate):.1f} ({min(rate):.1f}-{max(rate):.1f}) |"
        )
