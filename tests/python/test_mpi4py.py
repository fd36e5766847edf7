"""Tandem under mpi4py: the same Python program (mpi4py_exchange.py) run with
and without Tandem prints the same results, on 1, 2 and 4 ranks of each MPI,
with Tandem's progress thread and its collectives at work. mpi4py comes from
`make mpi4py` (build/mpi4py/<mpi>)."""

from __future__ import annotations

import re
import sys

import pytest
from conftest import FAMILIES, ROOT, launch, mpi4py_env, tandem_cli

SCRIPT = str(ROOT / "tests" / "python" / "mpi4py_exchange.py")

# (TANDEM_PROGRESS, TANDEM_COLL): the progress thread with the MPI's own
# collectives, the proxy strategy and Tandem's schedules, and the drive
# strategy with the schedules.
CONFIGURATIONS = [("drive", "native"), ("proxy", "tandem"), ("drive", "tandem")]


@pytest.mark.parametrize("nprocs", [1, 2, 4])
def test_mpi4py_program_gives_the_native_results(build, nprocs):
    python = mpi4py_env(build)
    native = launch(build, nprocs, [sys.executable, SCRIPT], env=python, with_tandem=False)
    assert native.returncode == 0, native.stderr
    assert native.stdout.count("cancelled: True") == nprocs, native.stdout
    assert "tandem active 1" not in native.stderr
    for progress, coll in CONFIGURATIONS:
        env = {
            **python,
            "TANDEM_PROGRESS": progress,
            "TANDEM_COLL": coll,
            "TANDEM_EAGER_LIMIT": "0",
            "TANDEM_VERBOSE": "2",
            "TANDEM_TRACE": "1",
        }
        result = launch(build, nprocs, [sys.executable, SCRIPT], env=env)
        where = f"{progress}, TANDEM_COLL={coll}, {nprocs} ranks"
        assert result.returncode == 0, f"{where}: {result.stderr[-3000:]}"
        assert result.stdout == native.stdout, where
        assert result.stderr.count("tandem active 1") == nprocs, where
        # mpi4py's calls went through Tandem (a source build against MPICH
        # calls the MPI-4 large-count variants, MPI_Ibcast_c and the like),
        # which ran its thread, proxied and ran the five collectives
        assert re.search(r"trace MPI_Ibcast(_c)? \(C\)", result.stderr), where
        assert len(re.findall(r"progress thread: \d+ polls", result.stderr)) == nprocs, where
        proxied = [int(n) for n in re.findall(r"(\d+) operations proxied", result.stderr)]
        if progress == "proxy":
            assert len(proxied) == nprocs and all(n > 0 for n in proxied), where
        collectives = re.findall(r"(\d+) collectives run", result.stderr)
        assert collectives == ["5" if coll == "tandem" else "0"] * nprocs, where


def test_tandem_run_starts_an_mpi4py_program_when_told_the_mpi(build):
    """docs/USAGE.md: an interpreter is not linked with an MPI, so
    `tandem run` needs --mpi to pick the build and the launcher."""
    option = FAMILIES[build.family]
    command = [
        "run",
        "-n",
        "2",
        "--progress",
        "proxy",
        "--mpi",
        option,
        "--",
        sys.executable,
        SCRIPT,
    ]
    result = tandem_cli(*command, env=mpi4py_env(build))
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("tandem active 1") == 2
    assert "1: ring: source 0 tag 7 count 1048576" in result.stdout
    unnamed = tandem_cli("run", "-n", "2", "--", sys.executable, SCRIPT)
    assert unnamed.returncode != 0
    assert "name the MPI with --mpi openmpi|mpich" in unnamed.stderr


TRANSPARENCY = str(ROOT / "tests" / "python" / "mpi4py_transparency.py")


@pytest.mark.parametrize("nprocs", [2, 3])
def test_mpi4py_one_sided_epochs_and_collective_orders_give_the_native_results(
    build, nprocs, tmp_path
):
    """Passive-target puts while the target waits in Tandem's barrier, a
    post/start/complete epoch tested after two of them, and blocking and
    nonblocking collectives in different orders (mpi4py_transparency.py):
    the native output with every strategy, Tandem's collectives and
    monitoring on (the settings under which a third-party suite hung)."""
    python = mpi4py_env(build)
    native = launch(build, nprocs, [sys.executable, TRANSPARENCY], env=python, with_tandem=False)
    assert native.returncode == 0, native.stderr
    assert "after two barriers" in native.stdout and "WRONG" not in native.stdout
    collectives = {"TANDEM_COLL": "tandem", "TANDEM_COLL_BLOCKING": "tandem"}
    for settings in (
        {"TANDEM_PROGRESS": "drive", **collectives, "TANDEM_MONITOR": "1"},
        {"TANDEM_PROGRESS": "proxy", **collectives},
        {"TANDEM_COLL_BLOCKING": "tandem"},
    ):
        env = {**python, **settings, "TANDEM_MONITOR_OUTPUT": str(tmp_path / "monitor")}
        result = launch(build, nprocs, [sys.executable, TRANSPARENCY], env=env)
        where = f"{settings}, {nprocs} ranks"
        assert result.returncode == 0, f"{where}: {result.stderr[-3000:]}"
        assert result.stdout == native.stdout, where
