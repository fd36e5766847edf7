"""Monitoring through the tandem command: --monitor=DIR/NAME makes DIR, and
the report's heatmaps show their numbers in readable units."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from conftest import program_path
from tandem import report


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


def job_with(bytes_matrix: np.ndarray, messages: np.ndarray) -> report.Job:
    """A job whose only traffic is p2p_send: these bytes and messages."""
    size = len(bytes_matrix)
    nothing = np.zeros((size, size), dtype=np.int64)
    histogram = np.zeros((size, size, report.BINS), dtype=np.int64)
    traffic = {kind: report.Traffic(nothing, nothing, histogram) for kind in report.KINDS}
    traffic["p2p_send"] = report.Traffic(messages, bytes_matrix, histogram)
    return report.Job(Path("job.json"), size, "MPICH", traffic, [])


def panels(figure) -> dict[str, tuple[list[str], str]]:
    """Each heatmap's cell texts and its colour bar's label, by the heatmap's
    quantity (the start of its title)."""
    images = [ax for ax in figure.axes if ax.images]
    found = {}
    for ax in images:
        bar = ax.images[0].colorbar
        quantity = ax.get_title().split(":")[0]
        found[quantity] = ([t.get_text() for t in ax.texts], bar.ax.get_ylabel())
    return found


def test_a_small_jobs_heatmaps_show_each_cells_value_in_a_readable_unit():
    sizes = np.array([[0, 3 << 20, 0], [512 << 10, 0, 1536 << 10], [100, 0, 0]], dtype=np.int64)
    counts = np.array([[0, 3, 0], [1, 0, 2], [1, 0, 0]], dtype=np.int64)
    figure = report.heatmap_figure(job_with(sizes, counts), "p2p_send")
    byte_texts, byte_label = panels(figure)["bytes"]
    assert byte_label == "bytes, in MiB"
    assert byte_texts == ["0", "3", "0", "0.5", "0", "1.5", "<0.01", "0", "0"]
    count_texts, count_label = panels(figure)["messages"]
    assert count_label == "messages"
    assert count_texts == ["0", "3", "0", "1", "0", "2", "1", "0", "0"]


def test_a_large_jobs_heatmaps_leave_their_cells_bare():
    size = 17  # more cells than a figure can label legibly
    sizes = np.full((size, size), 2048, dtype=np.int64)
    figure = report.heatmap_figure(
        job_with(sizes, np.ones((size, size), dtype=np.int64)), "p2p_send"
    )
    byte_texts, byte_label = panels(figure)["bytes"]
    assert byte_texts == []
    assert byte_label == "bytes, in KiB"
