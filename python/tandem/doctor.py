"""tandem doctor: what a user's setup gives Tandem, in a few seconds, with one
line of advice per finding. For each build (or the one of --mpi): the MPI
library and the thread level it grants, the cores against the ranks, how the
MPI library moves messages between the ranks of a host, what the default
TANDEM_PROGRESS=auto decides for a launch of N ranks (the library's own
decision, read from a real launch with TANDEM_VERBOSE=1), and whether
progress processes (--ghosts) would serve one-sided windows."""

from __future__ import annotations

import os
import re
import subprocess

from .builds import Build
from .launch import launch_command, launcher_environment


def btl_without_shared_memory(value: str) -> bool:
    """Whether Open MPI's btl list ("self,tcp", or "^vader" to exclude)
    leaves node mates without its shared memory (vader, or sm)."""
    names = value.lstrip("^").split(",")
    shared = any(name in ("vader", "sm") for name in names)
    return shared if value.startswith("^") else not shared


# What the MPI libraries read to keep node mates off shared memory.
SOCKETS_BETWEEN_MATES = {
    "Open MPI": ("OMPI_MCA_btl", btl_without_shared_memory),
    "MPICH": ("MPIR_CVAR_NOLOCAL", lambda value: value.strip() not in ("", "0")),
}


def finding(subject: str, state: str, advice: str) -> str:
    return f"  {subject}: {state}\n    -> {advice}"


def probe(build: Build) -> tuple[str, str, str | None]:
    """The MPI library's version, the thread level it grants and Open MPI's
    point-to-point component (None elsewhere), from the build's probe run as
    a singleton."""
    if build.probe is None:
        return "unknown", "unknown", None
    result = subprocess.run(
        [str(build.probe)],
        capture_output=True,
        text=True,
        env=launcher_environment(build),
        timeout=60,
        check=False,
    )
    version = re.search(r"MPI version: (.*)", result.stdout)
    level = re.search(r"thread level granted: (\S+)", result.stdout)
    pml = re.search(r"point-to-point component: (\S+)", result.stdout)
    return (
        version.group(1) if version else "unknown",
        level.group(1) if level else "unknown",
        pml.group(1) if pml else None,
    )


def one_sided(build: Build, pml: str | None) -> str:
    """Whether progress processes (TANDEM_GHOSTS) serve this MPI's
    MPI_Win_allocate windows (src/impl/*.c's tdm_impl_windows_unserved), as
    a finding."""
    subject = "one-sided, progress processes (--ghosts)"
    if build.family == "MPICH":
        state = "they serve MPI_Win_allocate windows"
        advice = (
            "--ghosts 1 lets one-sided operations complete while their target computes "
            "(docs/ONESIDED.md)"
        )
    elif build.family == "Open MPI" and pml == "ucx":
        state = "they serve MPI_Win_allocate windows (Open MPI on UCX: osc/ucx)"
        advice = (
            "--ghosts 1 for one-sided targets that compute: a progress process per host hid "
            "86-121% of SMB's gets and puts on 16 cores, Tandem's thread -193 to +34% "
            "(docs/ONESIDED.md); Tandem sets UCX_USE_MT_MUTEX=y unless you do"
        )
    elif build.family == "Open MPI":
        state = f"Open MPI's own windows, not theirs (point-to-point component {pml or 'unknown'})"
        advice = (
            "on one host Open MPI's windows need no help; across hosts Open MPI makes windows "
            "only on UCX (OMPI_MCA_pml=ucx), where progress processes serve them"
        )
    else:
        state = "they serve MPI_Win_allocate windows where the MPI library's windows allow it"
        advice = "docs/ONESIDED.md says which MPI libraries were tested"
    return finding(subject, state, advice)


def auto_decision(build: Build, nprocs: int) -> tuple[str, str | None]:
    """What TANDEM_PROGRESS=auto decides on rank 0 of a launch of 'nprocs'
    ranks of the probe, with Tandem preloaded, and why its waits sleep
    between their polls (None where they spin, as without Tandem)."""
    if build.probe is None:
        return "unknown (no probe in the build)", None
    command = launch_command(build, nprocs, [str(build.probe)], env={"TANDEM_VERBOSE": "1"})
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=launcher_environment(build),
        timeout=120,
        check=False,
    )
    found = re.search(r"TANDEM_PROGRESS=auto: (.*)", result.stderr)
    naps = re.search(r"waits sleep between their polls \([^)]*\): (.*)", result.stderr)
    if found:
        return found.group(1), naps.group(1) if naps else None
    return f"unknown (the launch said: {result.stderr.strip()[-200:] or 'nothing'})", None


def examine(build: Build, nprocs: int) -> list[str]:
    """The findings for one build, each with its advice."""
    lines = [f"{build.directory.name}: Tandem for {build.family} ({build.library})"]
    version, level, pml = probe(build)
    lines.append(f"  MPI library: {version}")
    if level == "MPI_THREAD_MULTIPLE":
        lines.append(
            finding(
                "thread level",
                "MPI_THREAD_MULTIPLE granted",
                "Tandem can run its progress thread beside the program",
            )
        )
    else:
        lines.append(
            finding(
                "thread level",
                f"{level} granted",
                "Tandem runs without threads here (as TANDEM_PROGRESS=off); rebuild the MPI "
                "library with thread support for background progress",
            )
        )
    cores = len(os.sched_getaffinity(0))
    spare = cores - nprocs
    if spare >= nprocs:
        state = f"{cores} cores for {nprocs} ranks: a spare core per rank"
        advice = (
            "on one host the default runs proxy, a progress thread on a spare core per rank "
            "(docs/AUTO.md); OMP_NUM_THREADS counts against the spare cores"
        )
    elif spare > 0:
        state = f"{cores} cores for {nprocs} ranks: {spare} spare"
        advice = "fewer spare cores than ranks: the progress threads share cores with the ranks"
    elif spare < 0:
        state = f"{cores} cores for {nprocs} ranks: more ranks than cores"
        advice = (
            "the ranks take turns on the cores: a wait that spins holds one that another rank "
            "needs, so on one host the default's waits sleep instead (docs/AUTO.md)"
        )
    else:
        state = f"{cores} cores for {nprocs} ranks: no spare core"
        advice = (
            "a progress thread shares its rank's core; on one host it measured no gain "
            "(docs/AUTO.md), across hosts it hides network transfers"
        )
    lines.append(finding("cores", state, advice))
    variable, sockets = SOCKETS_BETWEEN_MATES.get(build.family, (None, None))
    value = os.environ.get(variable, "") if variable else ""
    if variable and value and sockets(value):
        lines.append(
            finding(
                "between ranks of a host",
                f"sockets ({variable}={value})",
                "loopback TCP is a copy by the kernel, not a network: unset it unless you "
                "model a network on purpose",
            )
        )
    else:
        lines.append(
            finding(
                "between ranks of a host",
                "the MPI library's shared memory",
                "nothing to move in the background there: the MPI library copies the message",
            )
        )
    decision, naps = auto_decision(build, nprocs)
    if decision.startswith(("drive", "proxy")):
        advice = "the default runs a progress thread here; TANDEM_PROGRESS=off turns it off"
    elif decision.startswith("off"):
        advice = (
            "the default runs no thread here; TANDEM_PROGRESS=drive forces one (see "
            "docs/AUTO.md for what it measured)"
        )
    else:
        advice = "run a program with TANDEM_VERBOSE=1 to see the decision"
    lines.append(finding(f"TANDEM_PROGRESS=auto on {nprocs} ranks", decision, advice))
    if naps:
        lines.append(
            finding(
                f"waits on {nprocs} ranks",
                f"sleep between their polls: {naps}",
                "TANDEM_WAIT=spin keeps them spinning inside the MPI library, as without Tandem",
            )
        )
    lines.append(one_sided(build, pml))
    return lines


def doctor(builds: list[Build], nprocs: int) -> str:
    report = []
    for build in builds:
        report.extend(examine(build, nprocs))
    return "\n".join(report)
