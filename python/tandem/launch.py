"""Building launcher command lines that preload libtandem on every rank."""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass

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
    output is what it printed until then)."""

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool


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
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        return Outcome(None, out, err, True)
