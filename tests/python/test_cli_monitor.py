"""Monitoring through the tandem command: --monitor=DIR/NAME makes DIR, and
the report's heatmaps show their numbers in readable units."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import program_path


def tandem_in(cwd, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.run(
        [sys.executable, "-m", "tandem.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def test_run_monitor_makes_the_directory_of_its_prefix(build, tmp_path):
    program = program_path(build, "test_monitor_traffic")
    result = tandem_in(tmp_path, "run", "-n", "2", "--monitor=out/day1/job", program, "p2p")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "day1" / "job.json").is_file()
    assert f"{tmp_path}/out/day1/job_summary.txt" in result.stdout


def test_exec_monitor_makes_the_directory_of_its_prefix(tmp_path):
    script = tmp_path / "show.sh"
    script.write_text('#!/bin/sh\necho "$TANDEM_MONITOR_OUTPUT"\n')
    script.chmod(0o755)
    result = tandem_in(tmp_path, "exec", "--mpi", "mpich", "--monitor=out/job", str(script))
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{tmp_path}/out/job\n"
    assert (tmp_path / "out").is_dir()


def test_a_prefix_under_a_file_is_an_error(tmp_path):
    (tmp_path / "out").write_text("a file, not a directory\n")
    result = tandem_in(tmp_path, "exec", "--mpi", "mpich", "--monitor=out/job", "/bin/true")
    assert result.returncode == 2
    assert f"--monitor=out/job: cannot make the directory {tmp_path}/out" in result.stderr
