#!/usr/bin/env python3
"""Run a plain MPI program as N processes of the real MPI and the same program
built with `tandem cc` as one process of N virtual ranks; require both to exit
0 and print the same.

  virt_compare.py --build DIR --ranks N [--hosts H] [--cores C]
                  [--reference-build DIR] REFERENCE VIRTUAL [ARGS]
  virt_compare.py --build DIR --ranks N --fails REGEX [--fails REGEX ...]
                  [--env NAME=VALUE ...] VIRTUAL [ARGS]
  virt_compare.py --build DIR --ranks N --prints REGEX [...] VIRTUAL [ARGS]

N = H x C x V: the virtual run has H processes (default 1) of C cores
(TANDEM_VIRT_CORES) of N / (H C) ranks each (TANDEM_VIRT_RANKS). With --fails, only the virtual program runs: it
must exit with a nonzero status and print a line matching each REGEX on
stderr (a deadlock, a stack overflow, a bad setting). With --prints, only
the virtual program runs too: it must exit 0 and print a line matching each
REGEX on stdout (what no run of the real MPI's shows alike).
--reference-build runs the reference under another build's MPI (where the
virtual build's own MPI cannot run it: MPICH 4.0.2's mpi_f08 fails a
reduction on a non-contiguous array section).
"""

from __future__ import annotations

import argparse
import difflib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from compare import sanitizer_settings
from tandem.builds import load_build
from tandem.launch import launch_command, launcher_environment, own_session_directory

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


def expect(build, program, env, patterns, processes, succeed: bool) -> int:
    """Run the virtual program alone: it must exit 0 (succeed) or not, and
    print a line matching each pattern on stdout (succeed) or stderr."""
    command, result = run(build, processes, program, env)
    text = result.stdout if succeed else result.stderr
    missing = [p for p in patterns if not re.search(p, text, re.MULTILINE)]
    if (result.returncode == 0) != succeed or missing:
        print(f"exit status {result.returncode}: {' '.join(command)}")
        print(result.stdout + result.stderr)
        for pattern in missing:
            print(f"no line on {'stdout' if succeed else 'stderr'} matches {pattern!r}")
        return 1
    print(text, end="")
    ended = "ended well, printing" if succeed else "failed, saying"
    print(f"passed: the run {ended} {len(patterns)} expected things")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True, type=Path)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--cores", type=int, default=1)
    parser.add_argument("--hosts", type=int, default=1)
    parser.add_argument("--fails", action="append", default=[], metavar="REGEX")
    parser.add_argument("--prints", action="append", default=[], metavar="REGEX")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--reference-build", type=Path, help="run the reference under this build")
    parser.add_argument("programs", nargs="+", help="REFERENCE VIRTUAL [ARGS], or VIRTUAL [ARGS]")
    args = parser.parse_args()
    own_session_directory()
    per_process = args.cores * args.hosts
    if args.ranks % per_process:
        parser.error("--ranks must be a multiple of --hosts times --cores")
    build = load_build(args.build)
    per_core = args.ranks // per_process
    env = {"TANDEM_VIRT_CORES": str(args.cores), "TANDEM_VIRT_RANKS": str(per_core)}
    env.update(pair.split("=", 1) for pair in args.env)
    env.update(sanitizer_settings(build))
    if args.fails:
        return expect(build, args.programs, env, args.fails, args.hosts, succeed=False)
    if args.prints:
        return expect(build, args.programs, env, args.prints, args.hosts, succeed=True)
    if len(args.programs) < 2:
        parser.error("give the reference program and the virtual one")
    args.reference, args.virtual, args.args = args.programs[0], args.programs[1], args.programs[2:]
    reference_build = load_build(args.reference_build) if args.reference_build else build
    outcomes = [
        run(
            reference_build,
            args.ranks,
            [args.reference, *args.args],
            {k: v for k, v in env.items() if "SAN" in k},
        ),
        run(build, args.hosts, [args.virtual, *args.args], env),
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
        f"passed: {args.ranks} processes and {args.hosts} x {args.cores} x {per_core} virtual ranks"
        " (processes x cores x ranks per core)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
