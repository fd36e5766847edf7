"""tandem report: the job file of TANDEM_MONITOR=1 read, checked and reported,
on job files the tests write themselves (no MPI run needed)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import ROOT, build_for, program_path, tandem_cli
from tandem import report
from tandem.builds import TandemError
from tandem.cli import MONITOR_PREFIX, build_parser, parse_arguments

N = 4


def empty_job(size: int = N) -> dict:
    """A job file with every kind present and no traffic at all."""

    def counters():
        return {
            "messages": [0] * size,
            "bytes": [0] * size,
            "histogram": [[0] * report.BINS for _ in range(size)],
        }

    def world(rank):
        patterns = {p: {"operations": 0, "bytes": 0} for p in report.PATTERNS}
        return {"name": "MPI_COMM_WORLD", "procs": list(range(size)), **patterns}

    return {
        "format": "tandem-monitor",
        "version": 2,
        "world_size": size,
        "mpi": "Open MPI",
        "kinds": list(report.KINDS),
        "ranks": [
            {
                "rank": rank,
                "counters": {kind: counters() for kind in report.KINDS},
                "communicators": [world(rank)],
            }
            for rank in range(size)
        ],
    }


def record(
    job: dict, kind: str, rank: int, peer: int, sizes: list[int], by_tandem: bool = False
) -> None:
    """Rank 'rank' records messages of 'sizes' bytes with 'peer', and adds them
    to the all kind as the library does: a collective's logical volume (coll)
    only where the MPI library ran it, not 'by_tandem'."""
    in_all = kind in ("p2p_send", "osc_put", "osc_get", "coll_internal")
    in_all = in_all or (kind == "coll" and not by_tandem)
    for name in (kind, "all") if in_all else (kind,):
        counters = job["ranks"][rank]["counters"][name]
        for size in sizes:
            counters["messages"][peer] += 1
            counters["bytes"][peer] += size
            counters["histogram"][peer][size.bit_length()] += 1


def known_job(put: bool = True) -> dict:
    """Four ranks: point-to-point, a broadcast from 0 that the MPI library ran,
    a put (unless not 'put'), a file write, and a split communicator besides
    MPI_COMM_WORLD."""
    job = empty_job()
    for sender, receiver, sizes in ((0, 1, [500, 500]), (1, 2, [64]), (3, 0, [0])):
        record(job, "p2p_send", sender, receiver, sizes)
        record(job, "p2p_recv", receiver, sender, sizes)
    for peer in (1, 2, 3):
        record(job, "coll", 0, peer, [100])
    if put:
        record(job, "osc_put", 2, 3, [4096])
    record(job, "io_write", 1, 1, [1 << 20])
    job["ranks"][1]["counters"]["io_write"]["bytes"][3] = 999  # off the diagonal: not used
    for rank in range(N):
        world = job["ranks"][rank]["communicators"][0]
        if rank == 0:
            world["one_to_all"] = {"operations": 1, "bytes": 300}
        else:
            world["one_to_all"] = {"operations": 1, "bytes": 0}
        world["all_to_all"] = {"operations": 2, "bytes": 24}
        half = {p: {"operations": 0, "bytes": 0} for p in report.PATTERNS}
        half["all_to_one"] = {"operations": 1, "bytes": 8}
        procs = [0, 1] if rank < 2 else [2, 3]
        job["ranks"][rank]["communicators"].append({"name": "halves", "procs": procs, **half})
    return job


def write_job(tmp_path, job: dict, name: str = "run") -> str:
    (tmp_path / f"{name}.json").write_text(json.dumps(job))
    return str(tmp_path / name)


def test_load_reads_the_matrices_row_rank_column_peer(tmp_path):
    job = report.load(write_job(tmp_path, known_job()))
    assert job.world_size == N and job.mpi == "Open MPI"
    send = job.traffic["p2p_send"]
    assert send.bytes.tolist() == [
        [0, 1000, 0, 0],
        [0, 0, 64, 0],
        [0, 0, 0, 0],
        [0, 0, 0, 0],
    ]
    assert send.messages.tolist() == [
        [0, 2, 0, 0],
        [0, 0, 1, 0],
        [0, 0, 0, 0],
        [1, 0, 0, 0],
    ]
    assert (job.traffic["p2p_recv"].bytes == send.bytes.T).all()
    histogram = send.histogram.sum(axis=(0, 1))
    assert histogram[0] == 1 and histogram[7] == 1 and histogram[9] == 2  # 0, 64, 500 bytes
    assert histogram.sum() == 4
    assert job.traffic["io_write"].bytes.tolist()[1] == [0, 1 << 20, 0, 0]  # diagonal only
    assert job.active_kinds() == ["p2p_send", "p2p_recv", "coll", "osc_put", "io_write", "all"]
    assert job.all_bytes().tolist() == [
        [0, 1100, 100, 100],
        [0, 0, 64, 0],
        [0, 0, 0, 4096],
        [0, 0, 0, 0],
    ]


def test_load_accepts_the_json_file_name_itself(tmp_path):
    prefix = write_job(tmp_path, known_job())
    assert report.load(prefix + ".json").world_size == N


def test_a_collective_tandem_ran_counts_once_in_all(tmp_path):
    """An allreduce of 100 bytes on two ranks that Tandem ran: its logical
    volume (coll) and the messages of its schedule (coll_internal, here two
    halves of 50 bytes each way) describe the same bytes; all, the totals and
    the top pairs count the messages only."""
    job = empty_job(2)
    for rank in range(2):
        record(job, "coll", rank, 1 - rank, [100], by_tandem=True)
        record(job, "coll_internal", rank, 1 - rank, [50, 50])
    parsed = report.load(write_job(tmp_path, job))
    assert parsed.all_bytes().tolist() == [[0, 100], [100, 0]]
    assert parsed.all_messages().tolist() == [[0, 2], [2, 0]]
    assert report.top_pairs(parsed) == [(0, 1, 100, 2), (1, 0, 100, 2)]
    lines = [line.split() for line in report.summary(parsed).splitlines()]
    assert ["all", "4", "200", "200", "B"] in lines
    assert ["0", "2", "100", "100", "B"] in lines  # sent per rank


def test_top_pairs_and_collectives(tmp_path):
    job = report.load(write_job(tmp_path, known_job()))
    assert report.top_pairs(job) == [
        (2, 3, 4096, 1),
        (0, 1, 1100, 3),
        (0, 2, 100, 1),
        (0, 3, 100, 1),
        (1, 2, 64, 1),
    ]
    groups = {name: rest for name, *rest in report.collectives_by_name(job)}
    ranks, operations, volume = groups["MPI_COMM_WORLD"]
    assert ranks == N
    assert operations == {"one_to_all": 4, "all_to_one": 0, "all_to_all": 8}
    assert volume == {"one_to_all": 300, "all_to_one": 0, "all_to_all": 96}
    assert groups["halves"] == [
        N,
        {"one_to_all": 0, "all_to_one": 4, "all_to_all": 0},
        {
            "one_to_all": 0,
            "all_to_one": 32,
            "all_to_all": 0,
        },
    ]


def test_summary_totals_imbalance_and_io(tmp_path):
    text = report.summary(report.load(write_job(tmp_path, known_job())))
    lines = [line.split() for line in text.splitlines()]
    assert ["world", "size", "4,", "MPI:", "Open", "MPI"] in lines
    assert ["p2p_send", "4", "1064", "1.0", "KiB"] in lines
    assert ["coll", "3", "300", "300", "B"] in lines
    assert ["io_write", "1", "1048576", "1.0", "MiB"] in lines
    assert ["all", "8", "5460", "5.3", "KiB"] in lines
    assert "no traffic: coll_internal, osc_get, io_read" in text
    assert ["2", "->", "3", "4096", "4.0", "KiB", "1"] in lines
    assert lines.index(["2", "->", "3", "4096", "4.0", "KiB", "1"]) < lines.index(
        ["0", "->", "1", "1100", "1.1", "KiB", "3"]
    )
    # sent per rank: 1300, 64, 4096, 0 bytes; mean 1365
    assert ["0", "5", "1300", "1.3", "KiB"] in lines
    assert ["2", "1", "4096", "4.0", "KiB"] in lines
    assert "imbalance (max/mean bytes sent): 3.00, max on rank 2" in text
    assert ["1", "0", "0", "B", "1048576", "1.0", "MiB"] in lines
    assert ["MPI_COMM_WORLD", "4", "4", "300", "0", "0", "8", "96"] in lines
    assert ["halves", "4", "0", "0", "4", "32", "0", "0"] in lines


def test_summary_says_where_the_ranks_ran_and_what_crossed_hosts(tmp_path):
    """Ranks 0-1 on one host, 2-3 on another: the summary names each host's
    ranks and the bytes it sent to the other (all: 0's broadcast to 2 and 3,
    200 bytes, and 1 -> 2, 64; 3 -> 0 is empty, and 2 -> 3 stays on its
    host); one host adds nothing."""
    job = known_job()
    for rank, entry in enumerate(job["ranks"]):
        entry["host"] = "node-a" if rank < 2 else "node-b"
    loaded = report.load(write_job(tmp_path, job))
    assert loaded.hosts == ["node-a", "node-a", "node-b", "node-b"]
    text = report.summary(loaded)
    lines = [line.split() for line in text.splitlines()]
    assert "hosts, all communication between them (264 B, 5% of all):" in text
    assert ["node-a", "0-1", "264", "264", "B"] in lines
    assert ["node-b", "2-3", "0", "0", "B"] in lines
    for entry in job["ranks"]:
        entry["host"] = "node-a"
    assert "hosts," not in report.summary(report.load(write_job(tmp_path, job, "one")))
    assert report.rank_ranges([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"


def test_human_units_and_bin_labels():
    assert [report.human(n) for n in (0, 1023, 1536, 3 << 29, 1 << 60)] == [
        "0 B",
        "1023 B",
        "1.5 KiB",
        "1.5 GiB",
        "1.0 EiB",
    ]
    assert [report.bin_label(b) for b in (0, 1, 2, 3, 11, 21, 65)] == [
        "0",
        "1",
        "2",
        "4",
        "1K",
        "1M",
        "16E",
    ]


def test_report_writes_mat_files_pngs_and_summary(tmp_path):
    prefix = write_job(tmp_path, known_job())
    written = report.write_report(report.load(prefix), prefix)
    names = sorted(path.name for path in written)
    kinds = ["p2p_send", "p2p_recv", "coll", "osc_put", "io_write", "all"]
    expected = [
        f"run_{kind}_{what}" for kind in kinds for what in ("heatmap.png", "bytes.mat", "msgs.mat")
    ]
    expected += ["run_histogram.png", "run_summary.txt"]
    assert names == sorted(expected)
    assert all(path.parent == tmp_path for path in written)
    assert (tmp_path / "run_all_bytes.mat").read_text() == (
        "0 1100 100 100\n0 0 64 0\n0 0 0 4096\n0 0 0 0\n"
    )
    assert (tmp_path / "run_all_msgs.mat").read_text() == "0 3 1 1\n0 0 1 0\n0 0 0 1\n1 0 0 0\n"
    assert (tmp_path / "run_p2p_recv_bytes.mat").read_text() == (
        "0 0 0 0\n1000 0 0 0\n0 64 0 0\n0 0 0 0\n"
    )
    assert (tmp_path / "run_io_write_bytes.mat").read_text() == (
        "0 0 0 0\n0 1048576 0 0\n0 0 0 0\n0 0 0 0\n"
    )
    for path in written:
        if path.suffix == ".mat":
            rows = [line.split() for line in path.read_text().splitlines()]
            assert len(rows) == N and all(len(row) == N for row in rows)
        if path.suffix == ".png":
            assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            assert path.stat().st_size > 5000
    assert (tmp_path / "run_summary.txt").read_text() == report.summary(report.load(prefix))


def test_a_kind_without_traffic_loses_the_files_of_a_former_report(tmp_path):
    prefix = write_job(tmp_path, known_job())
    report.write_report(report.load(prefix), prefix)
    write_job(tmp_path, known_job(put=False))
    written = report.write_report(report.load(prefix), prefix)
    assert not any("osc_put" in path.name for path in written)
    assert not list(tmp_path.glob("run_osc_put_*"))
    assert (tmp_path / "run_all_bytes.mat").read_text().splitlines()[2] == "0 0 0 0"


def test_a_job_without_traffic_writes_zero_matrices_and_no_plots(tmp_path):
    prefix = write_job(tmp_path, empty_job(3))
    written = report.write_report(report.load(prefix), prefix, tmp_path / "out")
    assert sorted(path.name for path in written) == [
        "run_all_bytes.mat",
        "run_all_msgs.mat",
        "run_summary.txt",
    ]
    assert (tmp_path / "out" / "run_all_msgs.mat").read_text() == "0 0 0\n0 0 0\n0 0 0\n"
    assert "none recorded" in (tmp_path / "out" / "run_summary.txt").read_text()


def test_large_counts_stay_exact(tmp_path):
    job = empty_job(2)
    job["ranks"][0]["counters"]["p2p_send"]["bytes"][1] = 3 << 60
    job["ranks"][0]["counters"]["p2p_send"]["messages"][1] = 1
    prefix = write_job(tmp_path, job)
    report.write_report(report.load(prefix), prefix)
    assert (tmp_path / "run_p2p_send_bytes.mat").read_text() == f"0 {3 << 60}\n0 0\n"


def test_cli_report_prints_the_summary_and_the_files(tmp_path):
    prefix = write_job(tmp_path, known_job())
    out = tmp_path / "report"
    result = tandem_cli("report", prefix, "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "world size 4, MPI: Open MPI" in result.stdout
    assert "imbalance (max/mean bytes sent): 3.00, max on rank 2" in result.stdout
    assert f"  {out / 'run_all_bytes.mat'}" in result.stdout.splitlines()
    assert (out / "run_histogram.png").stat().st_size > 0
    assert (out / "run_summary.txt").read_text() in result.stdout


def report_error(tmp_path, job) -> str:
    """Run `tandem report` on a bad job file; it must fail with status 2."""
    path = tmp_path / "bad.json"
    path.write_text(job if isinstance(job, str) else json.dumps(job))
    result = tandem_cli("report", str(tmp_path / "bad"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith(f"tandem: error: {path}: ")
    assert "Traceback" not in result.stderr
    return result.stderr


def test_cli_report_missing_file(tmp_path):
    result = tandem_cli("report", str(tmp_path / "nothing"))
    assert result.returncode == 2
    assert f"tandem: error: {tmp_path / 'nothing.json'}: no such file" in result.stderr
    assert "TANDEM_MONITOR=1" in result.stderr


def test_cli_report_not_json(tmp_path):
    assert "not valid JSON" in report_error(tmp_path, "{")


def test_cli_report_wrong_format(tmp_path):
    job = known_job()
    job["format"] = "ompi-monitoring"
    assert "format is 'ompi-monitoring', expected 'tandem-monitor'" in report_error(tmp_path, job)


def test_cli_report_wrong_version(tmp_path):
    job = known_job()
    job["version"] = 3
    assert "version 3 is not known; expected 2\n" in report_error(tmp_path, job)
    job["version"] = 1
    message = report_error(tmp_path, job)
    assert "version 1 is not known; expected 2 (an earlier Tandem wrote it" in message


def test_cli_report_missing_kind(tmp_path):
    job = known_job()
    del job["ranks"][2]["counters"]["osc_get"]
    message = report_error(tmp_path, job)
    assert "ranks[2].counters: no 'osc_get' entry; expected every kind: p2p_send, " in message


def test_cli_report_wrong_matrix_shape(tmp_path):
    job = known_job()
    job["ranks"][1]["counters"]["coll"]["bytes"] = [0, 0, 0]
    message = report_error(tmp_path, job)
    assert "ranks[1].counters.coll.bytes: expected 4 non-negative integers, found 3" in message


def test_cli_report_wrong_histogram_shape(tmp_path):
    job = known_job()
    job["ranks"][3]["counters"]["p2p_send"]["histogram"][2] = [0] * 65
    message = report_error(tmp_path, job)
    assert "ranks[3].counters.p2p_send.histogram: expected 4 x 66 non-negative integers" in message
    assert "found ragged lists" in message


def test_cli_report_wrong_rank_count_and_values(tmp_path):
    job = known_job()
    job["world_size"] = 5
    assert "ranks: expected 5 entries (world_size), found 4" in report_error(tmp_path, job)
    job = known_job()
    job["ranks"][0]["counters"]["p2p_send"]["messages"][1] = -2
    assert "p2p_send.messages: expected 4 non-negative integers, found -2" in report_error(
        tmp_path, job
    )
    job["ranks"][0]["counters"]["p2p_send"]["messages"][1] = 1.5
    assert "found float64 values" in report_error(tmp_path, job)
    job = known_job()
    job["ranks"][2]["rank"] = 3
    assert "ranks[2].rank is 3, expected 2 (one entry per rank, in rank order)" in report_error(
        tmp_path, job
    )


def test_load_raises_tandem_error(tmp_path):
    with pytest.raises(TandemError, match="no such file"):
        report.load(tmp_path / "absent")
    assert isinstance(report.load(write_job(tmp_path, known_job())).all_bytes(), np.ndarray)


@pytest.mark.parametrize(
    "argv, monitor, program",
    [
        (["run", "--monitor", "./app", "-n", "2"], MONITOR_PREFIX, ["./app", "-n", "2"]),
        (["run", "-n", "2", "--monitor", "./app", "x"], MONITOR_PREFIX, ["./app", "x"]),
        (["run", "--monitor=out/p", "./app"], "out/p", ["./app"]),
        (["run", "./app", "--monitor"], None, ["./app", "--monitor"]),
        (["run", "--monitor", "--", "./app"], MONITOR_PREFIX, ["--", "./app"]),
    ],
)
def test_run_monitor_takes_its_prefix_only_after_an_equals_sign(argv, monitor, program):
    args = parse_arguments(build_parser(), argv)
    assert args.monitor == monitor
    assert args.program == program


def test_run_monitor_without_tandem_is_an_error():
    result = tandem_cli("run", "--no-tandem", "--monitor", "./app")
    assert result.returncode == 2
    assert "tandem: error: --monitor needs Tandem" in result.stderr


def test_run_monitor_dry_run_sets_the_rank_variables(tmp_path):
    program = program_path(build_for("mpich"), "test_init_thread")
    result = tandem_cli("run", "-n", "2", "--dry-run", f"--monitor={tmp_path}/job", program)
    assert result.returncode == 0, result.stderr
    words = result.stdout.split()
    assert words[words.index("TANDEM_MONITOR") + 1] == "1"
    assert words[words.index("TANDEM_MONITOR_OUTPUT") + 1] == f"{tmp_path}/job"
    result = tandem_cli("run", "--dry-run", "--monitor", program)
    assert f"TANDEM_MONITOR_OUTPUT {ROOT / MONITOR_PREFIX} " in result.stdout  # cwd: the root
