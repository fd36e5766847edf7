"""tandem doctor: the findings of a real check of each build, with advice."""

from __future__ import annotations

import os

import pytest
from conftest import FAMILIES, tandem_cli
from tandem.doctor import btl_without_shared_memory


def test_doctor_reports_thread_level_cores_transport_and_the_auto_decision(build):
    option = FAMILIES[build.family]
    result = tandem_cli("doctor", "--mpi", option)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"{option}: Tandem for {build.family}" in out
    assert "thread level: MPI_THREAD_MULTIPLE granted" in out
    cores = len(os.sched_getaffinity(0))
    assert f"cores: {cores} cores for 2 ranks" in out
    assert "between ranks of a host: the MPI library's shared memory" in out
    # the library's own decision, from a launch of 2 ranks on this host
    decision = "proxy" if cores >= 4 else "off"  # a spare core per rank, or none
    assert f"TANDEM_PROGRESS=auto on 2 ranks: {decision}: all 2 ranks run on this host" in out
    # Open MPI over its own transports here (ob1): its windows are its own
    served = {
        "mpich": "they serve MPI_Win_allocate windows",
        "openmpi": "Open MPI's own windows, not theirs (point-to-point component ob1)",
    }
    assert f"one-sided, progress processes (--ghosts): {served[option]}" in out
    assert out.count("    -> ") == 5  # one line of advice per finding


def test_doctor_says_that_waits_sleep_where_ranks_outnumber_the_cores(build):
    cores = len(os.sched_getaffinity(0))
    if cores > 3:
        pytest.skip("needs more ranks than cores: 4 ranks on at most 3 cores")
    result = tandem_cli("doctor", "--mpi", FAMILIES[build.family], "-n", "4")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"cores: {cores} cores for 4 ranks: more ranks than cores" in out
    assert "waits on 4 ranks: sleep between their polls: all 4 ranks run on this host" in out
    assert out.count("    -> ") == 6


def test_doctor_says_that_progress_processes_serve_open_mpi_on_ucx():
    """Open MPI on UCX (pml ucx, as a cluster's InfiniBand selects it): the
    progress processes serve its windows, which the probe tells from the
    point-to-point component Open MPI selected."""
    ucx = {"OMPI_MCA_pml": "ucx", "OMPI_MCA_pml_ucx_tls": "any", "OMPI_MCA_pml_ucx_devices": "any"}
    result = tandem_cli("doctor", "--mpi", "openmpi", env=ucx)
    assert result.returncode == 0, result.stderr
    served = "they serve MPI_Win_allocate windows (Open MPI on UCX: osc/ucx)"
    assert f"one-sided, progress processes (--ghosts): {served}" in result.stdout
    assert "--ghosts 1 for one-sided targets that compute" in result.stdout


def test_doctor_names_sockets_between_node_mates_and_spare_cores(build):
    option = FAMILIES[build.family]
    variable = {"openmpi": "OMPI_MCA_btl", "mpich": "MPIR_CVAR_NOLOCAL"}[option]
    value = {"openmpi": "self,tcp", "mpich": "1"}[option]
    result = tandem_cli("doctor", "--mpi", option, "-n", "1", env={variable: value})
    assert result.returncode == 0, result.stderr
    assert f"between ranks of a host: sockets ({variable}={value})" in result.stdout
    if len(os.sched_getaffinity(0)) >= 2:
        assert "a spare core per rank" in result.stdout


@pytest.mark.parametrize(
    ("value", "without"),
    [("self,tcp", True), ("self,vader,tcp", False), ("^vader", True), ("^tcp", False)],
)
def test_open_mpi_btl_lists_are_read_both_ways(value, without):
    assert btl_without_shared_memory(value) is without
