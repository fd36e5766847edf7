"""Building launcher command lines that preload libtandem on every rank."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .builds import Build


def rank_environment(build: Build, with_tandem: bool, env: dict[str, str]) -> dict[str, str]:
    """The variables every rank must get (LD_PRELOAD and the user's -e NAME=VALUE)."""
    result = dict(env)
    if with_tandem:
        preload = [str(build.library)]
        if result.get("LD_PRELOAD"):
            preload.append(result["LD_PRELOAD"])
        result["LD_PRELOAD"] = ":".join(preload)
    return result


def launch_command(
    build: Build,
    nprocs: int,
    program: list[str],
    with_tandem: bool = True,
    env: dict[str, str] | None = None,
    launcher_args: list[str] | None = None,
) -> list[str]:
    """The command that starts 'program' on 'nprocs' ranks with the build's launcher.

    Variables go to the ranks only (Open MPI -x, MPICH -genv), never to the
    launcher itself, so the launcher does not load libtandem.
    """
    ranks_env = rank_environment(build, with_tandem, env or {})
    command = [build.launcher]
    if build.family == "Open MPI":
        command += ["--oversubscribe", "-n", str(nprocs)]
        for name, value in ranks_env.items():
            command += ["-x", f"{name}={value}"]
    else:
        command += ["-n", str(nprocs)]
        for name, value in ranks_env.items():
            command += ["-genv", name, value]
    command += list(launcher_args or [])
    return command + list(program)


def launcher_environment(build: Build) -> dict[str, str]:
    """The launcher's own environment: Open MPI refuses to run as root without consent."""
    env = dict(os.environ)
    if build.family == "Open MPI" and os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


@dataclass
class Outcome:
    """What a launched command did: its exit status and output, and whether it
    had to be killed after 'timeout' seconds (then returncode is None and the
    output is what it printed until then). 'stacks': on a timeout, the
    threads' call stacks of every process of the command, where gdb is
    installed, else empty."""

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    stacks: str = ""

    @property
    def where_killed(self) -> str:
        """The call stacks as the end of a problem's line, or ""."""
        return f"; call stacks when killed:\n{self.stacks}" if self.stacks else ""


def group_members(pgid: int) -> list[int]:
    """The processes of process group 'pgid'."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid:
            members.append(int(entry.name))
    return sorted(members)


def call_stacks(pgid: int, frames: int = 20) -> str:
    """Every thread's innermost 'frames' frames, for each process of group
    'pgid' (a hung launch: where it hangs), or "" without gdb."""
    if shutil.which("gdb") is None:
        return ""
    reports = []
    for pid in group_members(pgid):
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
            result = subprocess.run(
                ["gdb", "-p", str(pid), "-batch", "-ex", f"thread apply all bt {frames}"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        lines = [line for line in result.stdout.splitlines() if line.startswith(("Thread ", "#"))]
        reports.append(f"process {pid} ({name}):\n" + "\n".join(lines))
    return "\n".join(reports)


def run_launch(command: list[str], env: dict[str, str], timeout: float, cwd=None) -> Outcome:
    """Run a launcher command in its own process group; on timeout kill the whole
    group, so that no rank keeps spinning after its launcher is gone."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=timeout)
        return Outcome(process.returncode, out, err, False)
    except subprocess.TimeoutExpired:
        stacks = call_stacks(process.pid)
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        return Outcome(None, out, err, True, stacks)
