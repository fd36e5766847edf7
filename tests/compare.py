#!/usr/bin/env python3
"""Run an MPI test program with and without Tandem and require identical output.

  compare.py --build DIR -n NP [--trace NAME ...] [--expect REGEX ...] [--env NAME=VALUE ...]
             [--transport shm|tcp] [--reference-transport shm|tcp] -- PROGRAM ARGS

Both runs must exit 0 and print the same stdout; the run with Tandem must print
no Tandem warning. --without-tandem-fails REASON names an expected failure of
the MPI library alone (printed with the result): the run without Tandem is
skipped, and the program's own checks (it exits 1 when one fails) decide. With --trace, a third run sets TANDEM_TRACE=1 and requires a
trace line for every NAME ("MPI_Isend (Fortran)"), which proves that the calls
went through Tandem's entry points and not around them. The run without
Tandem is made once per build for every test that shares its program,
arguments, ranks and settings (TANDEM_* variables aside: reference_run). With --expect, a run
with TANDEM_VERBOSE=2 must print a line matching each REGEX on stderr (what
Tandem reports of its own work at MPI_Finalize). --transport tcp makes the MPI
library carry every message over loopback TCP, as the benchmarks' tcp rows do;
--reference-transport gives the run without Tandem a transport of its own (by
default the same), for a program whose output does not depend on it where the
MPI library alone cannot be trusted on the other (MPICH 4.0.2 over UCX's TCP
hangs in MPI_Finalize now and then, which Tandem prevents: docs/KNOWN_ISSUES.md).
"""

from __future__ import annotations

import argparse
import difflib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from tandem.bench import transport_settings
from tandem.builds import load_build
from tandem.launch import launch_command, launcher_environment, own_session_directory

TIMEOUT = 180


def run(build, nprocs, program, with_tandem, env, launcher_args=()):
    """One launch in a directory of its own: tests that write files (MPI-IO)
    must not meet the files of tests running beside them."""
    with tempfile.TemporaryDirectory(prefix="tandem-test-") as cwd:
        return run_in(build, nprocs, program, with_tandem, env, cwd, launcher_args)


def run_in(build, nprocs, program, with_tandem, env, cwd, launcher_args=()):
    command = launch_command(
        build, nprocs, program, with_tandem=with_tandem, env=env, launcher_args=list(launcher_args)
    )
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


def reference_key(build, nprocs, program, env, launcher_args) -> str | None:
    """What the run without Tandem depends on: the MPI and the build, the
    program (its path, size and time) and its arguments, the launcher's
    arguments and the ranks' variables but for TANDEM_* ones, which only
    Tandem reads, unless the program itself names them (a getenv of one
    leaves its name among the program's strings). None for a program that
    is not a file to read."""
    try:
        path = Path(shutil.which(program[0]) or program[0]).resolve()
        status = path.stat()
        image = path.read_bytes()
    except OSError:
        return None
    named = {
        name: value
        for name, value in env.items()
        if not name.startswith("TANDEM_") or name.encode() in image
    }
    words = [
        str(build.directory.resolve()),
        str(nprocs),
        str(path),
        str(status.st_size),
        str(status.st_mtime_ns),
    ]
    words += program[1:] + ["--"] + list(launcher_args) + ["--"]
    words += [f"{name}={value}" for name, value in sorted(named.items())]
    return hashlib.sha256("\0".join(words).encode()).hexdigest()[:32]


def reference_run(build, nprocs, program, env, launcher_args):
    """The run without Tandem, made once per ctest run for all the tests
    that share its key (reference_key): the same program under the drive,
    proxy, monitoring and ghost variants needs one reference, not one each.
    Only a run that exited 0 is kept (written whole, then renamed). A test
    that misses while another makes the run (ctest -j starts a program's
    variants side by side) waits for it on the key's lock instead of making
    it a second time beside it; where that one failed, it makes its own."""
    key = reference_key(build, nprocs, program, env, launcher_args)
    if key is None:
        return run(build, nprocs, program, False, env, launcher_args)[1]
    store = build.directory / "compare-references"
    file = store / f"{key}.json"
    kept = read_reference(file)
    if kept is not None:
        return kept
    store.mkdir(exist_ok=True)
    with open(store / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        kept = read_reference(file)
        if kept is not None:
            return kept
        command, result = run(build, nprocs, program, False, env, launcher_args)
        if result.returncode == 0:
            record = {"command": command, "stdout": result.stdout, "stderr": result.stderr}
            with tempfile.NamedTemporaryFile("w", dir=store, delete=False, suffix=".tmp") as out:
                json.dump(record, out)
            os.replace(out.name, file)
    return result


def read_reference(file: Path) -> subprocess.CompletedProcess | None:
    """The kept run without Tandem, or None where there is none."""
    try:
        kept = json.loads(file.read_text())
        return subprocess.CompletedProcess(kept["command"], 0, kept["stdout"], kept["stderr"])
    except (OSError, ValueError, KeyError):
        return None


def sanitizer_settings(build) -> dict[str, str]:
    """Rank variables for a sanitizer build."""
    if "thread" in build.sanitize:
        # The MPI library is not instrumented: tests/tsan.supp names the reports
        # that lie wholly inside it. Any other report fails the run.
        suppressions = Path(__file__).resolve().parent / "tsan.supp"
        return {
            "TSAN_OPTIONS": f"halt_on_error=1 report_signal_unsafe=0 suppressions={suppressions}"
        }
    if build.sanitize:
        # The programs and libtandem are instrumented; the MPI library is not
        # and keeps memory until exit, so leaks are not Tandem's to report.
        return {
            "ASAN_OPTIONS": "detect_leaks=0:verify_asan_link_order=0",
            "UBSAN_OPTIONS": "print_stacktrace=1",
        }
    return {}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True, type=Path)
    parser.add_argument("-n", type=int, default=1)
    parser.add_argument("--trace", action="append", default=[])
    parser.add_argument("--expect", action="append", default=[], metavar="REGEX")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--transport", choices=["shm", "tcp"], default="shm")
    parser.add_argument("--reference-transport", choices=["shm", "tcp"])
    parser.add_argument("--without-tandem-fails", metavar="REASON")
    parser.add_argument("--ghosts", type=int, default=0, metavar="G")
    parser.add_argument("program", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    own_session_directory()
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    build = load_build(args.build)
    if build is None:
        print(f"compare: no libtandem in {args.build}", file=sys.stderr)
        return 1
    launcher_args, env = transport_settings(build, args.transport)
    reference_args, reference_env = transport_settings(
        build, args.reference_transport or args.transport
    )
    for variables in (env, reference_env):
        variables.update(pair.split("=", 1) for pair in args.env)
        variables.update(sanitizer_settings(build))
    if args.ghosts:  # the run with Tandem has G more processes, which the program must not see
        env["TANDEM_GHOSTS"] = str(args.ghosts)

    failed = False
    native = None
    if args.without_tandem_fails:
        print(f"not run without Tandem, expected to fail: {args.without_tandem_fails}")
    else:
        native = reference_run(build, args.n, program, reference_env, reference_args)
    tandem_n = args.n + args.ghosts
    command, tandem = run(build, tandem_n, program, True, env, launcher_args)
    print("$", " ".join(command))
    for name, result in (("without Tandem", native), ("with Tandem", tandem)):
        if result is not None and result.returncode != 0:
            print(f"FAIL: {name} exited {result.returncode}\n{result.stdout}\n{result.stderr}")
            failed = True
    if native is not None and native.stdout != tandem.stdout:
        print("FAIL: the output differs (- without Tandem, + with Tandem)")
        sys.stdout.writelines(
            difflib.unified_diff(native.stdout.splitlines(True), tandem.stdout.splitlines(True))
        )
        failed = True
    if "tandem" in tandem.stderr.lower():
        print(f"FAIL: Tandem printed on stderr:\n{tandem.stderr}")
        failed = True
    if args.trace:
        _, traced = run(build, tandem_n, program, True, dict(env, TANDEM_TRACE="1"), launcher_args)
        for name in args.trace:
            if f"trace {name}" not in traced.stderr:
                print(f"FAIL: no trace line for {name}; stderr was:\n{traced.stderr[-3000:]}")
                failed = True
    if args.expect:
        _, verbose = run(
            build, tandem_n, program, True, dict(env, TANDEM_VERBOSE="2"), launcher_args
        )
        for pattern in args.expect:
            if not re.search(pattern, verbose.stderr):
                print(f"FAIL: nothing matches {pattern!r}; stderr was:\n{verbose.stderr[-3000:]}")
                failed = True
    print(tandem.stdout)
    verdict = "its own checks" if native is None else "identical output with and without Tandem"
    print("FAILED" if failed else f"passed: {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
