"""Building launcher command lines that preload libtandem on every rank."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .builds import Build
from .mapping import Placement, hydra_binding, hydra_configfile, hydra_machinefile, rankfile


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
    nprocs: int | None,
    program: list[str],
    with_tandem: bool = True,
    env: dict[str, str] | None = None,
    launcher_args: list[str] | None = None,
) -> list[str]:
    """The command that starts 'program' on 'nprocs' ranks with the build's launcher.

    Variables go to the ranks only (Open MPI -x, MPICH -genv), never to the
    launcher itself, so the launcher does not load libtandem. 'nprocs' None
    leaves -n out: Hydra's -configfile among 'launcher_args' says it per line.
    """
    ranks_env = rank_environment(build, with_tandem, env or {})
    count = [] if nprocs is None else ["-n", str(nprocs)]
    command = [build.launcher]
    if build.family == "Open MPI":
        command += ["--oversubscribe", *count]
        for name, value in ranks_env.items():
            command += ["-x", f"{name}={value}"]
    else:
        command += count
        for name, value in ranks_env.items():
            command += ["-genv", name, value]
    command += list(launcher_args or [])
    return command + list(program)


def placement_arguments(
    build: Build, placement: Placement, program: list[str], directory: Path
) -> tuple[list[str], list[str]]:
    """The launcher's arguments and the program's words that start each rank
    where 'placement' says (docs/PLACEMENT.md), its files written into
    'directory': Open MPI's --rankfile; Hydra's machinefile (-f) with
    -bind-to user:LIST, or where no single list binds every rank, the
    machinefile with a -configfile of one line per rank that binds it
    through taskset (the program's words then go into that file, and the
    command has none).

    The hosts are the placement's own names; with_hosts() gives it the
    MPI's host list or simulated hosts first."""
    if build.family == "Open MPI":
        path = directory / "rankfile"
        path.write_text(rankfile(placement))
        return ["--rankfile", str(path)], program
    binding = hydra_binding(placement)
    if binding is not None:
        path = directory / "machinefile"
        path.write_text(hydra_machinefile(placement))
        return ["-f", str(path), "-bind-to", binding], program
    hosts = directory / "machinefile"
    hosts.write_text(hydra_machinefile(placement))
    path = directory / "configfile"
    path.write_text(hydra_configfile(placement, program))
    return ["-f", str(hosts), "-configfile", str(path)], []


def launcher_variables(build: Build) -> dict[str, str]:
    """The variables tandem adds to the launcher's environment, where they are
    not set already: Open MPI refuses to run as root without consent."""
    added = {}
    if build.family == "Open MPI" and os.geteuid() == 0:
        for name in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
            if name not in os.environ:
                added[name] = "1"
    return added


def own_session_directory() -> None:
    """Give Open MPI's launches from this process (and its children) a
    directory of their own for their session files (orte_tmpdir_base),
    removed when this process ends, unless one is set already. Open MPI 4.1.4
    launches beside each other share /tmp/ompi.HOST.UID, which one of them
    may remove while another makes it: that one fails in orte_init with "A
    call to mkdir was unable to create the desired directory ... File
    exists" (a fresh-clone CI run lost 2 of 431 tests so). For programs that
    launch many jobs beside others: the test runners."""
    if "OMPI_MCA_orte_tmpdir_base" in os.environ:
        return
    import atexit
    import tempfile

    directory = tempfile.mkdtemp(prefix="tandem-ompi-")
    atexit.register(shutil.rmtree, directory, True)
    os.environ["OMPI_MCA_orte_tmpdir_base"] = directory  # noqa: SIM112 (Open MPI spells it so)


def launcher_environment(build: Build) -> dict[str, str]:
    """The launcher's own environment: this one and launcher_variables."""
    return {**os.environ, **launcher_variables(build)}


def started_by(environ: dict[str, str]) -> tuple[str, str] | None:
    """The MPI family whose launcher started this process and the variable
    that tells, holding the process's rank; None when no launcher did.
    Open MPI's mpirun sets OMPI_COMM_WORLD_RANK, MPICH's mpiexec (Hydra)
    PMI_RANK; so does Slurm's srun, which starts programs of either MPI."""
    if "OMPI_COMM_WORLD_RANK" in environ:
        return "Open MPI", "OMPI_COMM_WORLD_RANK"
    if "PMI_RANK" in environ and "SLURM_STEP_ID" not in environ:
        return "MPICH", "PMI_RANK"
    return None


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


# The signals that end a job. tandem passes them on to the launcher and waits
# for it, instead of ending at once and leaving the launcher and its ranks
# running: the ranks run in process groups of their own (both MPIs), and only
# their launcher ends them.
ENDING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stopped(Exception):
    """A signal stopped the command; a shell gives such a command the exit
    status 128 + the signal's number."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


@contextlib.contextmanager
def ending_signals_stop():
    """While in use (a with block, in the main thread), SIGTERM and SIGHUP
    raise Stopped where they arrive, as SIGINT raises KeyboardInterrupt, so
    that the with blocks and finally clauses around undo what they made (the
    hosts of --hosts). A SignalRelay inside handles them its own way while
    it is in use."""

    def stop(signum: int, frame) -> None:
        raise Stopped(signum)

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class SignalRelay:
    """While in use (a with block, in the main thread), the ending signals do
    not end tandem; those in 'passed' go on to the launcher given to
    attach(). Enter the block before starting the launcher: attach() passes
    on what came while it started."""

    def __init__(self, passed: tuple[int, ...] = ENDING_SIGNALS):
        self.passed = passed
        self.received: list[int] = []  # every ending signal received, in order
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> SignalRelay:
        self.previous = {s: signal.signal(s, self.receive) for s in ENDING_SIGNALS}
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)

    def receive(self, signum: int, frame) -> None:
        self.received.append(signum)
        if signum in self.passed and self.process is not None:
            self.process.send_signal(signum)  # nothing if it ended meanwhile

    def attach(self, process: subprocess.Popen) -> None:
        self.process = process
        for signum in self.received:
            if signum in self.passed:
                process.send_signal(signum)


def shares_a_terminal() -> bool:
    """Whether tandem reads a terminal as its foreground job. The launcher
    then stays in tandem's process group, the terminal's foreground, or it
    could not read the terminal for rank 0 (Open MPI's mpirun reads it only
    as the foreground job); it then gets the terminal's SIGINT (Ctrl-C) and
    SIGHUP itself, and the shell's `kill %1` too."""
    try:
        return os.tcgetpgrp(0) == os.getpgrp()
    except OSError:  # standard input is no terminal, or closed
        return False


def shell_status(returncode: int) -> int:
    """A Popen return code as a shell reports it: 128 + N for signal N."""
    return 128 - returncode if returncode < 0 else returncode


def run_in_foreground(command: list[str], env: dict[str, str]) -> int:
    """Run a launcher command with tandem's standard streams; returns its exit
    status as a shell reports it. An ending signal to tandem reaches the
    launcher once.

    Without a terminal (scripts, timeout, batch systems) the launcher runs in
    a session of its own and gets every ending signal from tandem alone. In
    a terminal, where the terminal signals the launcher too, tandem passes on
    only SIGTERM, which comes from `kill PID` to tandem alone (a SIGINT or
    SIGHUP sent so is not passed on: tandem keeps waiting for its launcher).

    A launcher that reports success after such a signal is given 128 + the
    signal instead: its program did not run to its end (MPICH's mpiexec
    exits with 0 once it has ended its ranks on SIGINT or SIGTERM)."""
    shared = shares_a_terminal()
    with SignalRelay((signal.SIGTERM,) if shared else ENDING_SIGNALS) as relay:
        process = subprocess.Popen(command, env=env, start_new_session=not shared)
        relay.attach(process)
        returncode = process.wait()
    if relay.received:
        return shell_status(returncode) or 128 + relay.received[0]
    return shell_status(returncode)


def run_launch(command: list[str], env: dict[str, str], timeout: float, cwd=None) -> Outcome:
    """Run a launcher command in its own process group; on timeout kill the whole
    group, so that no rank keeps spinning after its launcher is gone. An
    ending signal to tandem is passed on to the launcher, and once it has
    ended, raises Stopped."""
    with SignalRelay() as relay:
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        relay.attach(process)
        try:
            out, err = process.communicate(timeout=timeout)
            outcome = Outcome(process.returncode, out, err, False)
        except subprocess.TimeoutExpired:
            stacks = call_stacks(process.pid)
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            outcome = Outcome(None, out, err, True, stacks)
    if relay.received:
        raise Stopped(relay.received[0])
    return outcome
