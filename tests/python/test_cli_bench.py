"""What `tandem bench` shows: its tables label sizes with units, it prints
the table at the end and its progress on the way, and its results go to a
new directory of the current one unless --out names another."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT
from tandem import bench


def test_sizes_read_with_units():
    assert [bench.size_label(n) for n in (0, 8, 1000, 1024, 65536, 1536 << 10, 4 << 20)] == [
        "0 B",
        "8 B",
        "1000 B",
        "1 KiB",
        "64 KiB",
        "1.5 MiB",
        "4 MiB",
    ]
    assert [bench.figure(v) for v in (12345.6, 456.7, 45.67, 7.934, 0.01234)] == [
        "12346",
        "457",
        "45.7",
        "7.93",
        "0.0123",
    ]


def test_a_latency_table_of_small_messages_shows_their_bandwidth():
    """An 8-byte run's table read "bandwidth 0 MiB (MB/s) | 8"."""
    summary = [
        {"mpi": "MPICH", "transport": "shm", "config": "native", "test": "pingpong",
         "bytes": 8, "latency_us": 0.312, "bandwidth_mbs": 25.64},
        {"mpi": "MPICH", "transport": "shm", "config": "native", "test": "message_rate",
         "bytes": 8, "rate_per_s": 1.4e7},
    ]  # fmt: skip
    table = bench.latency_table(summary)
    assert "| MPICH | shm | latency 8 B (us) | 0.312 |" in table
    assert "| MPICH | shm | bandwidth 8 B (MB/s) | 25.6 |" in table


def test_every_table_labels_its_sizes_with_units():
    overlap = {
        "summary": [
            {"mpi": "MPICH", "transport": "shm", "config": "native", "variant": "both",
             "bytes": size, "availability": 0.5, "slowdown": 0.0, "transfer_s": 1e-3}
            for size in (512, 1536 << 10)
        ]
    }  # fmt: skip
    assert "| MPICH | shm | both | 512 B |" in bench.markdown_table(overlap, 0)
    assert "| MPICH | shm | both | 1.5 MiB |" in bench.markdown_table(overlap, 0)
    coll = [
        {"mpi": "MPICH", "transport": "shm", "collective": "ibcast", "bytes": 4096,
         "config": "native", "pure_s": 1e-4, "overlap": 12.0}
    ]  # fmt: skip
    assert "| MPICH | shm | ibcast | 4 KiB | native |" in bench.coll_table(coll)
    cost = [{"mpi": "MPICH", "config": "native", "bytes": 8, "send_ns": 50.0, "recv_ns": 60.0}]
    assert "| MPICH | 8 B | native |" in bench.monitor_table(cost, [])


def bench_in(cwd, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.run(
        [sys.executable, "-m", "tandem.cli", "bench", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
        check=False,
    )


QUICK_LATENCY = ["latency", "--mpi", "mpich", "--transports", "shm", "--sizes", "8"]
QUICK_LATENCY += ["--rounds", "1", "--trials", "1"]


def test_bench_prints_its_table_and_writes_a_new_directory_of_the_current_one(tmp_path):
    """It printed only the path of its JSON, written into the source tree
    (bench/results) whatever the directory it ran from."""
    result = bench_in(tmp_path, *QUICK_LATENCY)
    assert result.returncode == 0, result.stderr
    made = list(tmp_path.iterdir())
    assert len(made) == 1 and re.fullmatch(r"tandem-bench-latency-\d{8}-\d{6}", made[0].name)
    table = (made[0] / "latency.md").read_text()
    assert "| MPICH | shm | latency 8 B (us) |" in table
    assert result.stdout.startswith(table)
    assert result.stdout.endswith(f"\nresults: {made[0]}/latency.json and latency.md\n")
    assert not (ROOT / "bench" / "results" / "latency.json").exists()


def test_bench_tells_its_progress_and_the_time_left_after_each_launch(tmp_path):
    result = bench_in(tmp_path, *QUICK_LATENCY, "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    launches = len(bench.latency_configs())
    assert len(lines) == launches, result.stderr
    for done, line in enumerate(lines[:-1], 1):
        assert re.fullmatch(rf"tandem bench: {done}/{launches} launches, about \d+ s left", line)
    assert re.fullmatch(rf"tandem bench: {launches} launches in \d+ s", lines[-1])


def test_durations_read_as_people_say_them():
    assert [bench.duration(s) for s in (0.4, 59, 89, 90, 3599, 5400, 7265)] == [
        "0 s",
        "59 s",
        "89 s",
        "2 min",
        "60 min",
        "1 h 30 min",
        "2 h 01 min",
    ]


# One-sided benchmarks on MPICH over shared memory also run with a progress
# process serving the window (TANDEM_GHOSTS=1, one more process, no thread).
GHOSTS = "tandem-ghosts"


def test_bench_rma_measures_a_passive_target_and_checks_its_data(tmp_path):
    """One get of 64 KiB while the target computes 50 ms, and one while it
    waits, on MPICH over shared memory: native, Tandem's two strategies,
    a progress process and MPICH's own thread, every get's data checked by
    the program."""
    result = bench_in(
        tmp_path,
        "rma", "--mpi", "mpich", "--transports", "shm", "--sizes", "65536", "--work", "0.05",
        "--rounds", "1", "--trials", "1", "--out", str(tmp_path / "rma"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    doc = json.loads((tmp_path / "rma" / "rma.json").read_text())
    configs = {r["config"] for r in doc["records"]}
    assert configs == {"native", "tandem-drive", "tandem-proxy", "mpich-async-thread", GHOSTS}
    assert all(r["wrong_bytes"] == 0 and r["busy_s"] > 0 for r in doc["records"])
    assert (
        "| MPICH | shm | allocate | 64 KiB | native |" in (tmp_path / "rma" / "rma.md").read_text()
    )
    assert (tmp_path / "rma" / "rma_allocate.png").exists()


def test_bench_smb_measures_overhead_and_availability_and_checks_the_data(tmp_path):
    """SMB's overhead test on one-sided operations: a get and a put of 64 KiB
    on MPICH over shared memory, native against Tandem and MPICH's thread;
    the program checks every get's data and the target's window after the
    puts (wrong_bytes), and the work doubled at least once."""
    result = bench_in(
        tmp_path,
        "smb", "--mpi", "mpich", "--transports", "shm", "--sizes", "65536",
        "--rounds", "1", "--trials", "3", "--out", str(tmp_path / "smb"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    doc = json.loads((tmp_path / "smb" / "smb.json").read_text())
    assert {(r["config"], r["op"]) for r in doc["records"]} == {
        (config, op)
        for config in ("native", "tandem-drive", "tandem-proxy", "mpich-async-thread", GHOSTS)
        for op in ("get", "put")
    }
    for r in doc["records"]:
        assert r["wrong_bytes"] == 0 and r["sweeps"] >= 1 and r["base_s"] > 0
        expected = 1 - (r["iter_s"] - r["work_s"]) / r["base_s"]
        assert r["availability"] == pytest.approx(expected, abs=1e-4)
    table = (tmp_path / "smb" / "smb.md").read_text()
    assert "| MPICH | shm | get | 64 KiB | native |" in table
    assert (tmp_path / "smb" / "smb_get.png").exists() and (
        tmp_path / "smb" / "smb_put.png"
    ).exists()


def test_bench_heat_steps_both_modes_to_the_same_grid(tmp_path):
    """DART-MPI's heat conduction on 2 ranks of MPICH over shared memory,
    native against Tandem and MPICH's thread: the program's blocking and
    overlapped modes must end with bitwise the same grid in every launch,
    and every launch with the same sum over the world."""
    result = bench_in(
        tmp_path,
        "heat", "--mpi", "mpich", "--transports", "shm", "--ranks", "1,2", "--cells", "32768",
        "--steps", "4", "--rounds", "1", "--trials", "2", "--out", str(tmp_path / "heat"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    doc = json.loads((tmp_path / "heat" / "heat.json").read_text())
    assert doc["edge"] == 32
    configs = {r["config"] for r in doc["records"]}
    assert configs == {"native", "tandem-drive", "tandem-proxy", "mpich-async-thread", GHOSTS}
    assert all(r["agree"] and r["ranks"] == 2 for r in doc["records"])
    assert len({r["checksum"] for r in doc["records"]}) == 1
    table = (tmp_path / "heat" / "heat.md").read_text()
    assert "| MPICH | shm | 2 | native |" in table and "| 1.00x | yes |" in table
    assert (tmp_path / "heat" / "heat.png").exists()
    result = bench_in(tmp_path, "heat", "--ranks", "1")
    assert "--ranks 1: heat needs 2 ranks or more" in result.stderr


def test_bench_rma_names_a_bad_window_flavour_and_work(tmp_path):
    result = bench_in(tmp_path, "rma", "--windows", "allocate,shared")
    assert result.returncode != 0
    assert "--windows allocate,shared: 'shared' is not one of allocate, create" in result.stderr
    result = bench_in(tmp_path, "rma", "--work", "100")
    assert "--work 100: expected 0 to 60 seconds" in result.stderr
