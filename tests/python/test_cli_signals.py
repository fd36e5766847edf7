"""Signals to the tandem command end the whole job: the launcher gets
SIGTERM, SIGINT and SIGHUP once and ends its ranks, tandem waits for it and
exits with its status, and no rank keeps running after tandem is gone (they
used to be re-parented to PID 1 and run on). Ctrl-C prints no traceback."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from conftest import ROOT

SLEEPER = r"""
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Marks MARK.<rank> once MPI_Init returned, then sleeps for a minute; with
   "read", rank 0 instead prints the line it reads from its standard input. */
int main(int argc, char **argv)
{
    int rank;
    char path[4096], line[100] = "";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(path, sizeof path, "%s.%d", argv[1], rank);
    fclose(fopen(path, "w"));
    if (argc > 2 && strcmp(argv[2], "read") == 0) {
        if (rank == 0 && fgets(line, sizeof line, stdin))
            printf("read: %s", line);
    } else {
        for (int second = 0; second < 60; second++)
            sleep(1);
    }
    MPI_Finalize();
    return 0;
}
"""


def sleeper(build, directory: Path) -> Path:
    """The sleeping MPI program, compiled for the build's MPI."""
    source = directory / "sleeper.c"
    source.write_text(SLEEPER)
    compiler = "mpicc.openmpi" if build.family == "Open MPI" else "mpicc.mpich"
    program = directory / "sleeper"
    subprocess.run([compiler, str(source), "-o", str(program)], check=True)
    return program


def living() -> dict[int, int]:
    """Every process that has not ended, with its parent (a process that
    ended but was not yet reaped, a zombie, is left out)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        state, parent = stat[stat.rindex(")") + 2 :].split()[:2]
        if state != "Z":
            parents[int(entry.name)] = int(parent)
    return parents


def descendants(pid: int) -> set[int]:
    """The processes started by 'pid', and by them, and so on."""
    parents = living()
    found, added = set(), {pid}
    while added:
        found |= added
        added = {child for child, parent in parents.items() if parent in added} - found
    return found - {pid}


def running(program: Path) -> list[int]:
    """The processes executing 'program'."""
    pids = []
    for pid in living():
        try:
            if os.readlink(f"/proc/{pid}/exe") == str(program):
                pids.append(pid)
        except OSError:
            continue
    return pids


def wait_until(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not after {seconds} s"
        time.sleep(0.05)


def start_tandem(args: list[str], cwd: Path, **popen) -> subprocess.Popen:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.Popen([sys.executable, "-m", "tandem.cli", *args], env=env, cwd=cwd, **popen)


def end_everything(tandem: subprocess.Popen, started: set[int]) -> None:
    """After a failure: kill what the test started, so that nothing runs on."""
    for pid in started & set(living()):
        os.kill(pid, signal.SIGKILL)
    if tandem.poll() is None:
        tandem.kill()
        tandem.wait()


def ranks_started(directory: Path, nprocs: int) -> bool:
    return len(list(directory.glob("started.*"))) == nprocs


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_to_tandem_run_ends_the_launcher_and_every_rank(build, tmp_path, signum):
    """What `kill`, `timeout` and batch systems do: a signal to tandem's
    process alone, tandem running without a terminal."""
    program = sleeper(build, tmp_path)
    errors = tmp_path / "stderr"
    with errors.open("w") as stderr:
        tandem = start_tandem(
            ["run", "-n", "2", "--", str(program), str(tmp_path / "started")],
            tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    job = set()
    try:
        wait_until(lambda: ranks_started(tmp_path, 2), 60, "both ranks in MPI_Init")
        job = descendants(tandem.pid)
        assert len(running(program)) == 2
        tandem.send_signal(signum)
        status = tandem.wait(timeout=10)
        wait_until(lambda: not job & set(living()), 5, "the launcher and the ranks ending")
    finally:
        end_everything(tandem, job)
    assert not running(program)
    assert status != 0
    assert "Traceback" not in errors.read_text()


class Terminal:
    """A new terminal whose session a shell leads, as in a terminal window:
    the shell runs tandem in the foreground, writes its exit status into a
    file and stays (a session whose leader exits hangs up, and the hang-up
    would end the launcher whatever tandem did). The test types at
    'controller'."""

    def __init__(self, args: list[str], directory: Path, **popen):
        self.controller, terminal = os.openpty()
        self.status_file = directory / "status"
        script = f'trap : INT; "$@"; echo $? > {self.status_file}; exec sleep 600'
        tandem = [sys.executable, "-m", "tandem.cli", *args]

        def take_the_terminal():  # a session of its own, the terminal's foreground
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # stdin: the terminal

        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        self.shell = subprocess.Popen(
            ["sh", "-c", script, "sh", *tandem],
            cwd=directory,
            env=env,
            stdin=terminal,
            preexec_fn=take_the_terminal,
            **popen,
        )
        os.close(terminal)
        wait_until(lambda: self.children(), 30, "tandem started by the shell")
        self.tandem = self.children()[0]

    def children(self) -> list[int]:
        return [pid for pid, parent in living().items() if parent == self.shell.pid]

    def status(self, seconds: float) -> int:
        """tandem's exit status, once it has ended."""
        wait_until(
            lambda: self.status_file.read_text() if self.status_file.exists() else "",
            seconds,
            "tandem ending",
        )
        return int(self.status_file.read_text())

    def close(self, started: set[int]) -> None:
        """Kill what is left of the test: the shell, and after a failure tandem and its job."""
        for pid in (started | {self.tandem}) & set(living()):
            os.kill(pid, signal.SIGKILL)
        self.shell.kill()
        self.shell.wait()
        os.close(self.controller)


@pytest.mark.parametrize("how", ["ctrl-c", "kill"])
def test_a_signal_in_a_terminal_ends_every_rank_without_a_traceback(build, tmp_path, how):
    """tandem in the foreground of a terminal keeps the launcher in its
    process group: Ctrl-C at the terminal reaches both, and a SIGTERM to
    tandem alone (kill PID from elsewhere) is passed on."""
    program = sleeper(build, tmp_path)
    errors = tmp_path / "stderr"
    with errors.open("w") as stderr:
        terminal = Terminal(
            ["run", "-n", "2", "--", str(program), str(tmp_path / "started")],
            tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    job = set()
    try:
        wait_until(lambda: ranks_started(tmp_path, 2), 60, "both ranks in MPI_Init")
        job = descendants(terminal.tandem)
        if how == "ctrl-c":
            os.write(terminal.controller, b"\x03")
        else:
            os.kill(terminal.tandem, signal.SIGTERM)
        status = terminal.status(10)
        wait_until(lambda: not job & set(living()), 5, "the launcher and the ranks ending")
    finally:
        terminal.close(job)
    assert not running(program)
    assert status != 0
    assert "Traceback" not in errors.read_text()


def test_rank_0_reads_the_terminal_as_under_mpirun(build, tmp_path):
    """Why the launcher stays in tandem's process group in a terminal: in a
    session of its own, Open MPI's mpirun would not read the terminal, and
    rank 0 would wait for ever."""
    program = sleeper(build, tmp_path)
    output = tmp_path / "stdout"
    with output.open("w") as stdout:
        terminal = Terminal(
            ["run", "-n", "2", "--", str(program), str(tmp_path / "started"), "read"],
            tmp_path,
            stdout=stdout,
            stderr=subprocess.DEVNULL,
        )
    job = set()
    try:
        wait_until(lambda: ranks_started(tmp_path, 2), 60, "both ranks in MPI_Init")
        job = descendants(terminal.tandem)
        os.write(terminal.controller, b"typed at the terminal\n")
        status = terminal.status(20)
    finally:
        terminal.close(job)
    assert status == 0
    assert output.read_text() == "read: typed at the terminal\n"


def test_a_signal_to_tandem_bench_ends_its_launch(build, tmp_path):
    """tandem bench stops at the signal: the launch under way ends with its
    ranks, no further one starts, and the exit status says which signal."""
    benchmark = build.directory / "tandem-bench-overlap"
    errors = tmp_path / "stderr"
    with errors.open("w") as stderr:
        tandem = start_tandem(
            ["bench", "overlap", "--mpi", build.option, "--transports", "shm"]
            + ["--sizes", "4194304", "--rounds", "1", "--trials", "1000", "--out", str(tmp_path)],
            ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    job = set()
    try:

        def ranks_running():
            job.update(descendants(tandem.pid))
            return len([pid for pid in running(benchmark) if pid in job]) == 2

        wait_until(ranks_running, 60, "two ranks of the benchmark")
        time.sleep(1)  # into the benchmark's loop
        job.update(descendants(tandem.pid))
        tandem.send_signal(signal.SIGTERM)
        status = tandem.wait(timeout=10)
        wait_until(lambda: not job & set(living()), 5, "the launcher and the ranks ending")
    finally:
        end_everything(tandem, job)
    assert status == 128 + signal.SIGTERM
    text = errors.read_text()
    assert "Traceback" not in text
    assert "tandem: stopped by SIGTERM" in text
