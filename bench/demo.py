#!/usr/bin/env python3
"""The demonstration of `make demo`: the overlap of an MPI_Isend with computation,
with and without Tandem, for each MPI built, over TCP on a loopback shaped to
2 Gbit/s (a network namespace with a token bucket; needs root) or, failing that,
over plain loopback.

Trials alternate between the two configurations; the medians are printed.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from tandem.bench import NETNS, shaped_network
from tandem.builds import default_build_root, load_builds
from tandem.launch import Stopped, launch_command, launcher_environment, run_launch


def network() -> tuple[list[str], str]:
    """The shaped network when it can be set up (root), else plain loopback TCP."""
    try:
        shaped_network("2gbit")
        return ["ip", "netns", "exec", NETNS], "TCP on a loopback shaped to 2 Gbit/s"
    except Exception:  # not root, or no ip/tc: the plain loopback still runs
        return [], "TCP over plain loopback (as root, a loopback shaped to 2 Gbit/s)"


TCP = {
    "Open MPI": (["--mca", "pml", "ob1", "--mca", "btl", "self,tcp"], {}),
    "MPICH": ([], {"UCX_TLS": "self,tcp", "MPIR_CVAR_NOLOCAL": "1"}),
}


STRATEGIES = (None, "drive", "proxy")  # None: without Tandem
RANKS = 2  # the demo's ranks, each computing on a core of its own when it can
# Points of availability between the runs of one configuration above which the
# machine disturbed them too much for their median to mean anything.
SPREAD_LIMIT = 30


def one_run(build, strategy: str | None, size: int, prefix: list[str]) -> tuple[dict, bool]:
    """One run: its result, and whether it hung in MPI_Finalize (the result is
    printed before; MPICH 4.0.2 over UCX's TCP transport hangs there at times,
    with or without Tandem)."""
    args, env = TCP.get(build.family, ([], {}))
    with_tandem = strategy is not None
    env = dict(env, TANDEM_PROGRESS=strategy or "off")
    program = [str(build.directory / "tandem-overlap-demo"), str(size), "5"]
    if prefix:  # the shaped network: only its loopback exists in the namespace
        if build.family == "Open MPI":
            args = [*args, "--mca", "btl_tcp_if_include", "lo", "--mca", "oob_tcp_if_include", "lo"]
        else:
            env["UCX_NET_DEVICES"] = "lo"
    command = prefix + launch_command(build, 2, program, with_tandem, env, args)
    outcome = run_launch(command, launcher_environment(build), timeout=60)
    lines = [line for line in outcome.stdout.splitlines() if line.startswith("{")]
    if not lines or outcome.returncode not in (0, None):
        raise SystemExit(f"demo: {' '.join(command)} failed:\n{outcome.stderr[-2000:]}")
    return json.loads(lines[-1]), outcome.timed_out


def too_busy(load_before: float, load_after: float, cores: int, spread: float) -> list[str]:
    """Why the machine was too busy for the demo's numbers to mean much, if it
    was: other work on the cores its ranks need (the 1-minute load average
    before, and after less the demo's own ranks), or runs of one
    configuration far apart."""
    reasons = []
    others = max(load_before, load_after - RANKS)
    if others > cores - RANKS + 0.5:
        reasons.append(f"a load of {others:.2f} besides the demo on {cores} cores")
    if spread > SPREAD_LIMIT:
        reasons.append(f"runs of one configuration {spread:.0f} points apart")
    return reasons


def main() -> int:
    load_before = os.getloadavg()[0]
    size = int(os.environ.get("DEMO_BYTES", str(4 << 20)))
    rounds = int(os.environ.get("DEMO_ROUNDS", "3"))
    builds = [b for b in load_builds(default_build_root()) if not b.sanitize]
    if not builds:
        print("demo: no build found; run `make` first", file=sys.stderr)
        return 1
    cores = os.cpu_count()
    prefix, where = network()
    print(f"Overlap of a {size >> 20} MiB MPI_Isend with computation, 2 ranks on {cores} cores,")
    print(f"{where}; availability = share of the transfer hidden")
    print("behind the work, medians of interleaved runs, without Tandem and with")
    print("TANDEM_PROGRESS=drive or proxy.")
    widest = 0.0  # the largest spread of one configuration's runs, in points
    for build in builds:
        results = {strategy: [] for strategy in STRATEGIES}
        hung = 0
        for _ in range(rounds):  # interleaved: without, drive, proxy, without, ...
            for strategy in STRATEGIES:
                result, stuck = one_run(build, strategy, size, prefix)
                results[strategy].append(result["availability"])
                hung += stuck
        native, drive, proxy = (statistics.median(results[s]) for s in STRATEGIES)
        print(
            f"  {build.family:9s} without Tandem {native:6.1%}   drive {drive:6.1%}"
            f"   proxy {proxy:6.1%}   best gain {100 * (max(drive, proxy) - native):+5.1f} points"
        )
        spreads = [100 * (max(results[s]) - min(results[s])) for s in STRATEGIES]
        widest = max(widest, *spreads)
        print(
            "            spread of its runs: without {:.1f}, drive {:.1f}, proxy {:.1f} points".format(
                *spreads
            )
        )
        if hung:
            print(f"  ({hung} of its runs hung in MPI_Finalize after printing, and were killed)")
    load_after = os.getloadavg()[0]
    print(
        f"Load average {load_before:.2f} before, {load_after:.2f} after "
        f"(with the demo's {RANKS} ranks), on {cores} cores."
    )
    reasons = too_busy(load_before, load_after, cores, widest)
    if reasons:
        print(
            f"The machine was too busy for these numbers to mean much ({'; '.join(reasons)}); "
            "run it again when the machine is idle."
        )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Stopped as stop:  # a signal, passed on to the run under way
        print(f"demo: {stop}", file=sys.stderr)
        sys.exit(128 + stop.signum)
    except KeyboardInterrupt:  # Ctrl-C between two runs
        sys.exit(128 + signal.SIGINT)
