#!/usr/bin/env python3
"""What the simulated hosts cost (docs/HOSTS.md): the ping-pong of
bench/pingpong.c between 2 ranks on 2 unshaped simulated hosts against the
same between 2 ranks of one host over plain loopback TCP, both without
Tandem, launched as tandem bench launches its transports 'hosts' and 'tcp'
and interleaved run by run (the order alternating each round), since on a
shared machine runs minutes apart differ more than the two paths do. Root.

  sudo .venv/bin/python bench/hosts_cost.py [--rounds 9] [--trials 5] \\
      [--sizes 8,4194304] [--out docs/perf/hosts]

Writes hosts_cost.json (every run, the medians over the rounds, the
ratios of each round's two runs, uptime before and after) and hosts_cost.md
(the table: medians with the range over rounds) in --out, and prints the table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from tandem import bench  # noqa: E402
from tandem.builds import load_builds  # noqa: E402
from tandem.hosts import Hosts  # noqa: E402

NATIVE = bench.Config("native", False)
TRANSPORTS = ("tcp", "hosts")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def table(summary: list[dict]) -> str:
    lines = [
        "| MPI | size | measure | loopback TCP | hosts | hosts / TCP, same round |",
        "|---|---|---|---|---|---|",
    ]
    for s in summary:
        # Latency for small messages, bandwidth for large ones (at 8 B the
        # bandwidth rounds to 0).
        large = s["bytes"] >= 65536
        for name, unit in [("bandwidth_mbs", "MB/s") if large else ("latency_us", "one-way us")]:
            tcp, hosts = s["tcp"][name], s["hosts"][name]
            cells = [
                f"{bench.figure(v['median'])} ({bench.figure(v['min'])}-{bench.figure(v['max'])})"
                for v in (tcp, hosts)
            ]
            ratio = s["hosts_over_tcp"][name]
            paired = (
                f"{ratio['median']:.2f} ({ratio['min']:.2f}-{ratio['max']:.2f})" if ratio else "-"
            )
            lines.append(
                f"| {s['mpi']} | {bench.size_label(s['bytes'])} | {unit} | "
                f"{cells[0]} | {cells[1]} | {paired} |"
            )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--trials", type=int, default=5, help="batches per size in one run")
    parser.add_argument("--sizes", default="8,4194304")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--out", default="docs/perf/hosts")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("hosts_cost.py: the simulated hosts need root", file=sys.stderr)
        return 1
    builds = [b for b in load_builds(ROOT / "build") if not b.sanitize]
    records, problems = [], []
    before = uptime()
    with Hosts(2, None) as net:
        bench.hosts_network = net
        try:
            for round_index in range(args.rounds):
                order = TRANSPORTS if round_index % 2 == 0 else TRANSPORTS[::-1]
                for build in builds:
                    for transport in order:
                        program = [
                            str(build.directory / "tandem-bench-pingpong"),
                            args.sizes,
                            str(args.trials),
                            "0",  # no message rate
                        ]
                        found, problem = bench.run_records(
                            build, 2, program, transport, NATIVE, args.timeout
                        )
                        if problem:  # MPICH alone may hang in MPI_Finalize over TCP
                            problems.append(problem)
                        records += bench.labelled(found, build, transport, NATIVE, round_index)
                        print(
                            f"round {round_index + 1}/{args.rounds} {build.family} {transport}: "
                            + ", ".join(f"{r['bytes']} B {r['latency_us']} us" for r in found),
                            file=sys.stderr,
                        )
        finally:
            bench.hosts_network = None
    after = uptime()
    summary = []
    for build in builds:
        for size in map(int, args.sizes.split(",")):
            entry = {"mpi": build.family, "bytes": size}
            for transport in TRANSPORTS:
                rs = [
                    r
                    for r in records
                    if r["mpi"] == build.family
                    and r["transport"] == transport
                    and r["bytes"] == size
                ]
                entry[transport] = {
                    name: {
                        "median": statistics.median(r[name] for r in rs),
                        "min": min(r[name] for r in rs),
                        "max": max(r[name] for r in rs),
                        "runs": len(rs),
                    }
                    for name in ("latency_us", "bandwidth_mbs")
                }
            # The ratio of each round's two runs, a minute apart at most:
            # steadier than the ratio of the medians when the load changes.
            pairs = {
                (r["round"], r["transport"]): r
                for r in records
                if r["mpi"] == build.family and r["bytes"] == size
            }
            rounds = [
                k for k in range(args.rounds) if (k, "tcp") in pairs and (k, "hosts") in pairs
            ]
            entry["hosts_over_tcp"] = {}
            for name in ("latency_us", "bandwidth_mbs"):
                ratios = [
                    pairs[(k, "hosts")][name] / pairs[(k, "tcp")][name]
                    for k in rounds
                    if pairs[(k, "tcp")][name] > 0
                ]
                entry["hosts_over_tcp"][name] = (
                    {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)}
                    if ratios
                    else None
                )
            summary.append(entry)
    result = bench.document(
        "hosts_cost", args.rounds, args.trials, problems, records, summary,
        uptime_before=before, uptime_after=after,
    )  # fmt: skip
    text = table(summary)
    bench.save(Path(args.out), result, text)
    print(f"uptime before: {before}\nuptime after:  {after}\n\n{text}", end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
