#!/usr/bin/env python3
"""The demonstration of `make demo`: the overlap of an MPI_Isend with computation,
with and without Tandem, for each MPI built, over TCP on loopback.

Trials alternate between the two configurations; the medians are printed.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from tandem.builds import default_build_root, load_builds
from tandem.launch import launch_command, launcher_environment

TCP = {
    "Open MPI": (["--mca", "pml", "ob1", "--mca", "btl", "self,tcp"], {}),
    "MPICH": ([], {"UCX_TLS": "self,tcp", "MPIR_CVAR_NOLOCAL": "1"}),
}


def one_run(build, with_tandem: bool, size: int) -> dict:
    args, env = TCP.get(build.family, ([], {}))
    program = [str(build.directory / "tandem-overlap-demo"), str(size), "5"]
    command = launch_command(build, 2, program, with_tandem, env, args)
    out = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=launcher_environment(build),
        timeout=120,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    size = int(os.environ.get("DEMO_BYTES", str(4 << 20)))
    rounds = int(os.environ.get("DEMO_ROUNDS", "3"))
    builds = [b for b in load_builds(default_build_root()) if not b.sanitize]
    if not builds:
        print("demo: no build found; run `make` first", file=sys.stderr)
        return 1
    cores = os.cpu_count()
    print(f"Overlap of a {size >> 20} MiB MPI_Isend with computation, 2 ranks on {cores} cores,")
    print("TCP over loopback; availability = share of the transfer hidden behind the work.")
    for build in builds:
        results = {False: [], True: []}
        for _ in range(rounds):  # interleaved: without, with, without, with, ...
            for with_tandem in (False, True):
                results[with_tandem].append(one_run(build, with_tandem, size)["availability"])
        native = statistics.median(results[False])
        tandem = statistics.median(results[True])
        print(
            f"  {build.family:9s} without Tandem {native:6.1%}   with Tandem {tandem:6.1%}"
            f"   gain {100 * (tandem - native):+5.1f} points"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
