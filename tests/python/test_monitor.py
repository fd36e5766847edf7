"""Monitoring files: Tandem's .prof lines against Open MPI's own monitoring, the
job file's matrices, profile2mat, and how the files are written."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, build_for, mpi4py_env, program_path, tandem_cli
from tandem import report
from tandem.launch import launch_command, launcher_environment

OPEN_MPI_MONITORING = [
    "--mca",
    "pml_monitoring_enable",
    "2",
    "--mca",
    "pml_monitoring_enable_output",
    "3",
]
PERSISTENT_BYTES = 300 * 8  # one start of the persistent send of monitor_traffic


def run(build, nprocs, args, cwd, env=None, with_tandem=True, launcher_args=None):
    command = launch_command(build, nprocs, args, with_tandem, env or {}, launcher_args)
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=launcher_environment(build),
        timeout=120,
        cwd=cwd,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result


def monitored(build, nprocs, mode, directory: Path, **env):
    """Run monitor_traffic under Tandem's monitoring; returns the PREFIX."""
    prefix = directory / "tandem"
    program = [program_path(build, "test_monitor_traffic"), mode]
    env = {"TANDEM_MONITOR": "1", "TANDEM_MONITOR_OUTPUT": str(prefix), **env}
    run(build, nprocs, program, directory, env)
    return prefix


def open_mpi_monitored(nprocs, mode, directory: Path):
    """The same program under Open MPI 4.1's own monitoring, without Tandem."""
    build = build_for("openmpi")
    prefix = directory / "ompi"
    program = [program_path(build, "test_monitor_traffic"), mode]
    extra = OPEN_MPI_MONITORING + ["--mca", "pml_monitoring_filename", str(prefix)]
    run(build, nprocs, program, directory, with_tandem=False, launcher_args=extra)
    return prefix


def lines(prefix: Path, rank: int, tag: str) -> list[str]:
    text = Path(f"{prefix}.{rank}.prof").read_text()
    return [line for line in text.splitlines() if line.split("\t")[0] == tag]


def fields(line: str) -> tuple[int, int, int, int]:
    """(rank, peer, bytes, messages) of an E/I/S/R/C line."""
    parts = line.split("\t")
    return int(parts[1]), int(parts[2]), int(parts[3].split()[0]), int(parts[4].split()[0])


@pytest.mark.parametrize("nprocs", [1, 2, 4])
def test_point_to_point_lines_are_open_mpis(tmp_path, nprocs):
    """User point-to-point traffic only: every E line, histogram included, is
    the one Open MPI's pml monitoring writes."""
    build = build_for("openmpi")
    ours = monitored(build, nprocs, "p2p", tmp_path)
    theirs = open_mpi_monitored(nprocs, "p2p", tmp_path)
    for rank in range(nprocs):
        assert lines(ours, rank, "E") == lines(theirs, rank, "E")
        assert lines(ours, rank, "E"), "no traffic recorded"


@pytest.mark.parametrize("nprocs", [2, 4])
def test_every_kind_against_open_mpi_with_the_documented_differences(tmp_path, nprocs):
    """With collectives, persistent sends and one-sided traffic, the lines
    differ from Open MPI's exactly as docs/MONITORING.md says: Tandem also
    counts persistent sends, Open MPI's E histograms include its collectives'
    internal messages, and Open MPI counts a 0-byte 'sent' message per get."""
    build = build_for("openmpi")
    ours = monitored(build, nprocs, "all", tmp_path)
    theirs = open_mpi_monitored(nprocs, "all", tmp_path)
    for rank in range(nprocs):
        right, left = (rank + 1) % nprocs, (rank - 1) % nprocs
        # One persistent send started twice on the world ring (to the right)
        # and on the reversed ring (to the left in world ranks).
        persistent = {right: 0, left: 0}
        persistent[right] += 2
        persistent[left] += 2
        expected = {}
        for line in lines(theirs, rank, "E"):
            _, peer, size, count = fields(line)
            extra = persistent.get(peer, 0)
            expected[peer] = (size + extra * PERSISTENT_BYTES, count + extra)
        got = {fields(line)[1]: fields(line)[2:] for line in lines(ours, rank, "E")}
        assert got == expected
        assert [fields(line) for line in lines(ours, rank, "R")] == [
            fields(line) for line in lines(theirs, rank, "R")
        ]
        # Open MPI's S lines also count each get as a 0-byte message.
        gets = {fields(line)[1]: fields(line)[3] for line in lines(theirs, rank, "R")}
        theirs_puts = []
        for line in lines(theirs, rank, "S"):
            me, peer, size, count = fields(line)
            if count > gets.get(peer, 0):
                theirs_puts.append((me, peer, size, count - gets.get(peer, 0)))
        assert [fields(line) for line in lines(ours, rank, "S")] == theirs_puts


@pytest.mark.parametrize("family", ["openmpi", "mpich"])
def test_job_file_holds_every_matrix(tmp_path, family):
    build = build_for(family)
    nprocs = 4
    prefix = monitored(build, nprocs, "all", tmp_path, TANDEM_PROGRESS="proxy")
    job = json.loads(Path(f"{prefix}.json").read_text())
    assert job["format"] == "tandem-monitor" and job["world_size"] == nprocs
    ranks = job["ranks"]
    counters = [r["counters"] for r in ranks]

    def matrix(kind, field="bytes"):
        return [[c[kind][field][j] for j in range(nprocs)] for c in counters]

    # Every message sent was received once: the receive matrix is the
    # transposed send matrix, in messages and bytes.
    for field in ("messages", "bytes"):
        sent, received = matrix("p2p_send", field), matrix("p2p_recv", field)
        assert sent == [list(row) for row in zip(*received)]
    for rank in range(nprocs):
        right, left = (rank + 1) % nprocs, (rank - 1) % nprocs
        hist = counters[rank]["p2p_send"]["histogram"][right]
        assert sum(hist) == counters[rank]["p2p_send"]["messages"][right]
        assert hist[21] == 2  # the two 1 MiB messages: bin 21 holds [2^20, 2^21)
        assert counters[rank]["osc_put"]["bytes"][right] == 12
        assert counters[rank]["osc_get"]["bytes"][left] == 400
        io = {kind: counters[rank][kind]["bytes"] for kind in ("io_read", "io_write")}
        assert io["io_write"][rank] == 1000 + 24 * 4 and io["io_read"][rank] == 500
        assert sum(io["io_write"]) == io["io_write"][rank]
        assert ranks[rank]["host"] == socket.gethostname()  # MPI_Get_processor_name
        world = next(c for c in ranks[rank]["communicators"] if c["name"] == "MPI_COMM_WORLD")
        assert world["procs"] == list(range(nprocs))
        assert world["all_to_all"]["operations"] == 2  # alltoall, barrier
        assert world["one_to_all"] == (
            {"operations": 1, "bytes": 20 * (nprocs - 1)}
            if rank == 0
            else {"operations": 0, "bytes": 0}
        )
        assert world["all_to_one"]["operations"] == (1 if rank == nprocs - 1 else 0)


@pytest.mark.skipif(shutil.which("profile2mat") is None, reason="Open MPI's profile2mat")
def test_profile2mat_reads_the_files_unchanged(tmp_path):
    build = build_for("openmpi")
    ours = monitored(build, 2, "p2p", tmp_path)
    theirs = open_mpi_monitored(2, "p2p", tmp_path)
    for prefix in (ours, theirs):
        result = subprocess.run(
            ["profile2mat", f"{prefix}.0.prof"], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stderr
    for suffix in ("size_external", "msg_external", "size_all"):
        assert (
            Path(f"{ours}.0_{suffix}.mat").read_text()
            == Path(f"{theirs}.0_{suffix}.mat").read_text()
        )


def test_fortran_traffic_is_counted(build, tmp_path):
    program = program_path(build, "test_f_usempi")
    prefix = tmp_path / "f"
    run(
        build, 2, [program], tmp_path, {"TANDEM_MONITOR": "1", "TANDEM_MONITOR_OUTPUT": str(prefix)}
    )
    job = json.loads(Path(f"{prefix}.json").read_text())
    sends = sum(sum(r["counters"]["p2p_send"]["messages"]) for r in job["ranks"])
    receives = sum(sum(r["counters"]["p2p_recv"]["messages"]) for r in job["ranks"])
    collectives = sum(sum(r["counters"]["coll"]["messages"]) for r in job["ranks"])
    assert sends > 0 and sends == receives and collectives > 0


def test_default_prefix_never_overwrites(build, tmp_path):
    existing = tmp_path / "tandem-monitor.json"
    existing.write_text("the user's own file\n")
    program = [program_path(build, "test_monitor_traffic"), "p2p"]
    result = run(build, 2, program, tmp_path, {"TANDEM_MONITOR": "1", "TANDEM_VERBOSE": "1"})
    assert existing.read_text() == "the user's own file\n"
    assert (tmp_path / "tandem-monitor-1.json").exists()
    assert (tmp_path / "tandem-monitor-1.1.prof").exists()
    assert "monitoring written to" in result.stderr and "tandem-monitor-1.json" in result.stderr


def test_unwritable_prefix_is_reported_and_the_run_succeeds(build, tmp_path):
    program = [program_path(build, "test_monitor_traffic"), "p2p"]
    env = {"TANDEM_MONITOR": "1", "TANDEM_MONITOR_OUTPUT": "/nonexistent/dir/run"}
    result = run(build, 2, program, tmp_path, env)
    assert "cannot write /nonexistent/dir/run.0.prof: No such file or directory" in result.stderr
    assert "TANDEM_MONITOR_OUTPUT=PREFIX must name a writable place" in result.stderr


def test_nothing_is_written_without_monitoring(build, tmp_path):
    program = [program_path(build, "test_monitor_traffic"), "p2p"]
    run(build, 2, program, tmp_path)
    assert not list(tmp_path.iterdir())


def test_run_monitor_reports_in_one_step(tmp_path):
    build = build_for("mpich")
    program = program_path(build, "test_monitor_traffic")
    prefix = tmp_path / "job"
    result = tandem_cli("run", "-n", "2", f"--monitor={prefix}", "--", program, "all")
    assert result.returncode == 0, result.stderr
    assert "p2p_send" in result.stdout and "top pairs" in result.stdout
    for name in ("job.json", "job.0.prof", "job_p2p_send_heatmap.png", "job_all_bytes.mat"):
        assert (tmp_path / name).exists(), name
    matrix = (tmp_path / "job_p2p_send_bytes.mat").read_text().splitlines()
    assert len(matrix) == 2 and all(len(row.split()) == 2 for row in matrix)


def test_internal_messages_of_tandems_collectives(build, tmp_path):
    """With TANDEM_COLL=tandem, the messages of Tandem's own schedules are the
    coll_internal kind (I lines). On 2 ranks, test_coll_nonblocking sends, in
    MPI_COMM_WORLD (the sub-communicators have one rank: no message):
      12  ibcasts (2 roots x 6), 1 message each
      232 reductions: 5 counts x (9 int iallreduce x 2 + 8 int ireduce x 1 +
          9 double iallreduce x 2) + MINLOC and MAXLOC iallreduce x 2
          (recursive doubling, on 2 ranks at every size) + the 5
          non-commutative ireduces: rank 1 to rank 0, and back where rank 1
          is the root (3 of them)
      36  gather/scatter/allgather/alltoall: 4 counts x (1+1+1+2+2+2)
      8   iscan and iexscan with 3 operations (rank 0 to rank 1), igatherv and
          iscatterv (1 each)
      10  in place: iscan and iexscan with 3 operations (1 each), ialltoallv
          and ialltoallw (2 each)
      34  the matrix product, 5 counts: iallreduce (2), ireduce (1, and 1
          back where rank 1 is the root: 2 of them), iscan (1),
          ireduce_scatter_block (to rank 0, then its block back: 2); one
          ireduce_scatter (2)
      18  2 iallgatherv, ialltoallv, ialltoallw, ialltoall in place, 2
          ireduce_scatter and 2 ireduce_scatter_block, 2 messages each
      1   the ibcast around the blocking collectives (these stay native)
      2   the ibarrier, 666 the ibcasts of the many-in-flight loop
    Blocks a rank sends itself are local copies, not counted."""
    program = [program_path(build, "test_coll_nonblocking")]
    prefix = tmp_path / "coll"
    env = {
        "TANDEM_MONITOR": "1",
        "TANDEM_MONITOR_OUTPUT": str(prefix),
        "TANDEM_COLL": "tandem",
        "TANDEM_COLL_SHM": "0",  # the shared-memory path sends no message
        "TANDEM_PROGRESS": "proxy",
    }
    run(build, 2, program, tmp_path, env)
    job = json.loads(Path(f"{prefix}.json").read_text())
    internal = [r["counters"]["coll_internal"]["messages"] for r in job["ranks"]]
    assert sum(map(sum, internal)) == 12 + 232 + 36 + 8 + 10 + 34 + 18 + 1 + 2 + 666
    assert internal[0][0] == internal[1][1] == 0  # never to oneself
    for rank in range(2):
        assert [fields(line)[3] for line in lines(prefix, rank, "I")] == [internal[rank][1 - rank]]


def test_shared_memory_collectives_are_recorded_as_their_readers(build, tmp_path):
    """On the shared-memory path nothing is sent, yet monitoring records what
    each rank wrote for another to read. test_coll_any_call, 2 ranks, 300
    steps of a 12000-byte ibcast (root: rank step % 2, read by the other),
    a 12000-byte iallreduce (each rank's segment read by the other) and an
    ibarrier (no data): each rank records 150 + 300 messages to the other."""
    program = [program_path(build, "test_coll_any_call")]
    prefix = tmp_path / "shm"
    env = {
        "TANDEM_MONITOR": "1",
        "TANDEM_MONITOR_OUTPUT": str(prefix),
        "TANDEM_COLL": "tandem",
        "TANDEM_PROGRESS": "proxy",
    }
    run(build, 2, program, tmp_path, env)
    job = json.loads(Path(f"{prefix}.json").read_text())
    counters = [r["counters"]["coll_internal"] for r in job["ranks"]]
    assert [c["messages"] for c in counters] == [[0, 450], [450, 0]]
    assert [c["bytes"] for c in counters] == [[0, 450 * 12000], [450 * 12000, 0]]


@pytest.mark.parametrize("coll", ["native", "tandem"])
def test_only_the_programs_communicators_are_listed(build, tmp_path, coll):
    """Tandem's own communicators (the duplicates its schedules post on) never
    appear: monitor_traffic makes one communicator besides MPI_COMM_WORLD, the
    reversed one, and calls an allreduce on it; in the .prof D lines and in the
    job file each rank lists these two, whoever ran the collectives."""
    env = {"TANDEM_COLL": coll, "TANDEM_COLL_BLOCKING": coll, "TANDEM_PROGRESS": "proxy"}
    prefix = monitored(build, 2, "all", tmp_path, **env)
    job = json.loads(Path(f"{prefix}.json").read_text())
    for rank, entry in enumerate(job["ranks"]):
        listed = [(c["name"], c["procs"]) for c in entry["communicators"]]
        assert listed == [("MPI_COMM_WORLD", [0, 1]), ("MPI COMMUNICATOR 1", [1, 0])]
        assert entry["communicators"][1]["all_to_all"] == {"operations": 1, "bytes": 16}
        assert [line.split("\t")[1] for line in lines(prefix, rank, "D")] == [
            "MPI_COMM_WORLD",
            "MPI COMMUNICATOR 1",
        ]


def test_mpi4py_matched_receives_are_recorded(build, tmp_path):
    """mpi4py receives a pickled object through a matched probe (MPI_Mprobe or
    MPI_Improbe, then MPI_Mrecv or MPI_Imrecv), and so do its pkl5 helpers for
    each buffer: the receive matrix is the transposed send matrix, in
    messages and bytes, on MPI_COMM_WORLD and on a communicator whose ranks
    run backwards (tests/python/mpi4py_matched.py)."""
    prefix = tmp_path / "py"
    env = {
        **mpi4py_env(build),
        "TANDEM_MONITOR": "1",
        "TANDEM_MONITOR_OUTPUT": str(prefix),
    }
    script = str(ROOT / "tests" / "python" / "mpi4py_matched.py")
    result = run(build, 2, [sys.executable, script], tmp_path, env)
    assert "mpi4py_matched: done" in result.stdout
    counters = [r["counters"] for r in json.loads(Path(f"{prefix}.json").read_text())["ranks"]]
    for field in ("messages", "bytes"):
        sent = [c["p2p_send"][field] for c in counters]
        received = [c["p2p_recv"][field] for c in counters]
        assert sent == [list(row) for row in zip(*received)], field
    # rank 0 sends rank 1 two pickles, a pkl5 header, pickle and two buffers,
    # over each communicator, and three pickles on either.
    assert counters[0]["p2p_send"]["messages"] == [0, 2 * (3 + 2 * 4)]


def test_all_counts_each_byte_once_whoever_runs_the_collectives(build, tmp_path):
    """The all kind (docs/MONITORING.md) is p2p_send, osc_put and osc_get,
    and each collective once: its logical volume (coll) where the MPI library
    ran it, the messages of Tandem's schedule (coll_internal) where Tandem
    did. monitor_traffic's collectives are blocking ones: with
    TANDEM_COLL_BLOCKING=tandem Tandem runs them all. Switching changes all
    by the collectives' part only; the .prof lines that profile2mat sums into
    its size_all (E, I, S, R, C) and the report's all matrix agree."""
    nprocs, jobs = 4, {}
    for coll in ("native", "tandem"):
        env = {"TANDEM_COLL": coll, "TANDEM_COLL_BLOCKING": coll, "TANDEM_PROGRESS": "proxy"}
        (tmp_path / coll).mkdir()
        prefix = monitored(build, nprocs, "all", tmp_path / coll, **env)
        counters = [r["counters"] for r in json.loads(Path(f"{prefix}.json").read_text())["ranks"]]
        jobs[coll] = counters
        part = "coll" if coll == "native" else "coll_internal"
        assert sum(sum(c[part]["messages"]) for c in counters) > 0, coll
        for rank, c in enumerate(counters):
            for field in ("messages", "bytes"):
                parts = [c[kind][field] for kind in ("p2p_send", "osc_put", "osc_get", part)]
                assert c["all"][field] == [sum(column) for column in zip(*parts)], (coll, field)
            hists = [c[kind]["histogram"] for kind in ("p2p_send", "osc_put", "osc_get", part)]
            for peer in range(nprocs):
                assert c["all"]["histogram"][peer] == [
                    sum(h[peer][b] for h in hists) for b in range(66)
                ]
            prof = [0] * nprocs
            for tag in ("E", "I", "S", "R", "C"):
                for line in lines(prefix, rank, tag):
                    prof[fields(line)[1]] += fields(line)[2]
            assert prof == c["all"]["bytes"], coll
        matrix = report.load(prefix).all_bytes().tolist()
        assert matrix == [c["all"]["bytes"] for c in counters]
    native, tandem = jobs["native"], jobs["tandem"]
    for rank in range(nprocs):
        assert native[rank]["coll"] == tandem[rank]["coll"]  # the logical volume: the same
        for peer in range(nprocs):
            assert (
                native[rank]["all"]["bytes"][peer] - native[rank]["coll"]["bytes"][peer]
                == tandem[rank]["all"]["bytes"][peer] - tandem[rank]["coll_internal"]["bytes"][peer]
            )
