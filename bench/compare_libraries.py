#!/usr/bin/env python3
"""Time monitor_cost (a monitored send and receive, in ns) under two builds of
libtandem, interleaved round by round: e.g. the commit before monitoring
existed against the current one with monitoring off.

  bench/compare_libraries.py --mpi openmpi --label before=/tmp/old/build/openmpi/libtandem.so \
      --label after=build/openmpi/libtandem.so [--rounds 7] [--bytes 8]

Prints a Markdown table of medians (over 5 trials per run, then over rounds).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(mpi: str, library: str, size: int) -> tuple[float, float]:
    program = str(ROOT / "build" / mpi / "tandem-bench-monitor-cost")
    if mpi == "openmpi":
        command = ["mpirun.openmpi", "-n", "1", "-x", f"LD_PRELOAD={library}"]
    else:
        command = ["mpiexec.mpich", "-n", "1", "-genv", "LD_PRELOAD", library]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = subprocess.run(
        command + [program, str(size), "5"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=True,
    ).stdout
    records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return (
        statistics.median(r["send_ns"] for r in records),
        statistics.median(r["recv_ns"] for r in records),
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpi", action="append", choices=["openmpi", "mpich"], required=True)
    parser.add_argument("--label", action="append", required=True, metavar="NAME=LIBRARY")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--bytes", type=int, default=8)
    args = parser.parse_args()
    labels = [tuple(item.split("=", 1)) for item in args.label]
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(args.rounds):
        for mpi in args.mpi:
            for name, library in labels:
                library = library.replace("{mpi}", mpi)
                results.setdefault((mpi, name), []).append(run(mpi, library, args.bytes))
    print("| MPI | library | send (ns) | receive (ns) | rounds |")
    print("|---|---|---|---|---|")
    for (mpi, name), values in results.items():
        send = statistics.median(s for s, _ in values)
        recv = statistics.median(r for _, r in values)
        print(f"| {mpi} | {name} | {send:.1f} | {recv:.1f} | {len(values)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
