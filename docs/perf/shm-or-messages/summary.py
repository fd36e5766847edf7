#!/usr/bin/env python3
"""Medians over rounds (and the rounds' range) of ab.sh's lines, in us:
   python3 docs/perf/shm-or-messages/summary.py FILE..."""

import collections
import fileinput
import statistics

times = collections.defaultdict(list)
configs: list[str] = []
for line in fileinput.input():
    _, mpi, coll, size, cfg, pure_us, _ = line.split()
    times[(mpi, coll, int(size), cfg)].append(float(pure_us))
    if cfg not in configs:
        configs.append(cfg)
print("| MPI, ranks | collective | bytes | " + " | ".join(configs) + " |")
print("|---" * (3 + len(configs)) + "|")
for key in sorted({k[:3] for k in times}):
    cells = []
    for cfg in configs:
        t = times.get(key + (cfg,))
        cells.append(f"{statistics.median(t):.1f} ({min(t):.0f}-{max(t):.0f})" if t else "-")
    print(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(cells) + " |")
