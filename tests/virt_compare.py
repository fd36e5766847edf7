#!/usr/bin/env python3
"""Run a plain MPI program as N processes of the real MPI and the same program
built with `tandem cc` as one process of N virtual ranks; require both to exit
0 and print the same.

  virt_compare.py --build DIR --ranks N [--cores C] REFERENCE VIRTUAL [ARGS]

N = C x V: the virtual run has C cores (TANDEM_VIRT_CORES) of N / C ranks
each (TANDEM_VIRT_RANKS).
"""

from __future__ import annotations

import argparse
import difflib
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from tandem.builds import load_build
from tandem.launch import launch_command, launcher_environment

TIMEOUT = 120


def run(build, nprocs, program, env):
    command = launch_command(build, nprocs, program, with_tandem=False, env=env)
    with tempfile.TemporaryDirectory(prefix="tandem-virt-test-") as cwd:
        result = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=launcher_environment(build),
            timeout=TIMEOUT,
            cwd=cwd,
            check=False,
        )
    return command, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True, type=Path)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--cores", type=int, default=1)
    parser.add_argument("reference")
    parser.add_argument("virtual")
    parser.add_argument("args", nargs="*")
    args = parser.parse_args()
    if args.ranks % args.cores:
        parser.error("--ranks must be a multiple of --cores")
    build = load_build(args.build)
    env = {"TANDEM_VIRT_CORES": str(args.cores), "TANDEM_VIRT_RANKS": str(args.ranks // args.cores)}
    outcomes = [
        run(build, args.ranks, [args.reference, *args.args], {}),
        run(build, 1, [args.virtual, *args.args], env),
    ]
    failed = False
    for command, result in outcomes:
        if result.returncode != 0:
            print(f"exit status {result.returncode}: {' '.join(command)}")
            print(result.stdout + result.stderr)
            failed = True
    (_, real), (_, virtual) = outcomes
    if real.stdout != virtual.stdout:
        print("the outputs differ (real MPI ranks, then virtual ranks):")
        diff = difflib.unified_diff(
            real.stdout.splitlines(), virtual.stdout.splitlines(), "real", "virtual", lineterm=""
        )
        print("\n".join(diff))
        failed = True
    if failed:
        return 1
    print(virtual.stdout, end="")
    print(
        f"passed: {args.ranks} processes and {args.cores} x {args.ranks // args.cores} virtual ranks"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
