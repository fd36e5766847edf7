"""A/B of two builds in one device call (bench/device.sh with DEVICE_AB):
each Tandem configuration against its NAME-ab twin, cell by cell.

    python3 docs/perf/device/watch/compare.py DIR

Prints, per size, the geometric mean over the cells of the new build's
median pure time (collectives) or transfer time (point-to-point) over the
-ab build's, how many cells were faster, and the range."""

import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def cells(path: Path, fields: tuple, value: str) -> dict:
    by = defaultdict(list)
    for r in json.loads(path.read_text())["records"]:
        by[tuple(r[f] for f in fields) + (r["config"],)].append(r[value])
    return by


def report(by: dict, configs: tuple, what: str) -> None:
    keys = sorted({k[:-1] for k in by})
    for size in sorted({k[-1] for k in keys}):
        for config in configs:
            ratios = [
                statistics.median(by[k + (config,)]) / statistics.median(by[k + (config + "-ab",)])
                for k in keys
                if k[-1] == size and k + (config,) in by and k + (config + "-ab",) in by
            ]
            if not ratios:
                continue
            mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
            faster = sum(r < 1 for r in ratios)
            print(
                f"{what} {size >> 10:>5} KiB {config:<20} new/ab geomean {mean:.3f}, "
                f"faster in {faster}/{len(ratios)}, {min(ratios):.2f}-{max(ratios):.2f}"
            )


directory = Path(sys.argv[1])
coll = directory / "coll.json"
if coll.exists():
    by = cells(coll, ("mpi", "transport", "ranks", "collective", "bytes"), "pure_s")
    report(by, ("tandem-coll", "tandem-coll-drive"), "pure time")
overlap = directory / "overlap.json"
if overlap.exists() and json.loads(overlap.read_text())["records"]:
    by = cells(overlap, ("mpi", "transport", "ranks", "variant", "bytes"), "transfer_s")
    report(by, ("tandem-proxy-yield", "tandem-drive-yield"), "transfer")
