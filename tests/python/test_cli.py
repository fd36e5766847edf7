"""The tandem command: run, exec, info, and its error cases."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import types

import pytest
from conftest import ROOT, build_for, program_path, tandem_cli
from tandem.launch import launcher_environment


def test_info_lists_both_builds_with_version_and_thread_level():
    result = tandem_cli("info")
    assert result.returncode == 0, result.stderr
    assert "MPI family: Open MPI" in result.stdout
    assert "MPI family: MPICH" in result.stdout
    assert "MPI version: Open MPI v4" in result.stdout
    assert "MPI version: MPICH Version:" in result.stdout
    builds = result.stdout.count("MPI family:")  # sanitizer builds are listed too
    assert result.stdout.count("thread level granted: MPI_THREAD_MULTIPLE") == builds >= 2


def test_info_without_builds_says_how_to_build(tmp_path):
    result = tandem_cli("--builds", str(tmp_path), "info")
    assert result.returncode == 1
    assert "run `make`" in result.stdout


def test_run_picks_the_build_of_the_program_and_preloads_it(build):
    program = program_path(build, "test_init_thread")
    result = tandem_cli("run", "-n", "2", "-e", "TANDEM_VERBOSE=1", "--", program, "funneled")
    assert result.returncode == 0, result.stderr
    assert "provided funneled" in result.stdout
    assert "query_thread funneled" in result.stdout
    assert f"built for {build.family}" in result.stderr
    # no Tandem thread by default: the MPI library grants what the program asked
    assert "MPI granted MPI_THREAD_FUNNELED; active" in result.stderr


def test_run_no_tandem_loads_nothing(build):
    program = program_path(build, "test_init_thread")
    result = tandem_cli("run", "-n", "2", "--no-tandem", "-e", "TANDEM_VERBOSE=1", program)
    assert result.returncode == 0, result.stderr
    assert "tandem" not in result.stderr.lower()


def test_run_dry_run_passes_variables_to_the_ranks_only(build):
    program = program_path(build, "test_init_thread")
    result = tandem_cli("run", "-n", "3", "--dry-run", "-e", "TANDEM_TRACE=1", program)
    assert result.returncode == 0
    words = result.stdout.split()
    assert words[0] == build.launcher
    assert "3" in words
    if build.family == "Open MPI":
        assert f"LD_PRELOAD={build.library}" in words
        assert "TANDEM_TRACE=1" in words
    else:
        assert words[words.index("LD_PRELOAD") + 1] == str(build.library)
        assert words[words.index("TANDEM_TRACE") + 1] == "1"


def test_exec_under_the_users_launcher(build):
    program = program_path(build, "test_init_thread")
    tandem = str(ROOT / ".venv" / "bin" / "tandem")
    env = launcher_environment(build)
    env["TANDEM_VERBOSE"] = "2"
    extra = ["--oversubscribe"] if build.family == "Open MPI" else []
    result = subprocess.run(
        [build.launcher, *extra, "-n", "2", tandem, "exec", program, "serialized"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "provided serialized" in result.stdout
    assert result.stderr.count("MPI granted MPI_THREAD_SERIALIZED; active") == 2


def expect_error(*args: str, messages: list[str]) -> None:
    """The command fails with status 2 and every message on stderr."""
    result = tandem_cli(*args)
    assert result.returncode == 2, result.stderr
    for message in messages:
        assert message in result.stderr


def mpich_program() -> str:
    return program_path(build_for("mpich"), "test_init_thread")


def test_error_program_not_found():
    expect_error(
        "run",
        "./no-such-program",
        messages=["tandem: error: program './no-such-program' not found"],
    )


def test_error_program_not_linked_with_mpi():
    expect_error(
        "run",
        "/bin/true",
        messages=["is not linked with an MPI library", "--mpi openmpi|mpich"],
    )


def test_error_mpi_mismatch_between_program_and_option():
    program = program_path(build_for("openmpi"), "test_init_thread")
    expect_error(
        "run",
        "--mpi",
        "mpich",
        program,
        messages=["is linked with Open MPI", "--mpi mpich was asked for"],
    )


def test_error_library_not_built(tmp_path):
    expect_error(
        "--builds",
        str(tmp_path),
        "run",
        mpich_program(),
        messages=["no libtandem is built for the MPI", "run `make`"],
    )


def test_error_bad_process_count():
    expect_error("run", "-n", "0", mpich_program(), messages=["at least 1"])


def test_error_bad_env_pair():
    expect_error("run", "-e", "NOVALUE", mpich_program(), messages=["expected NAME=VALUE"])


def test_interpreter_with_explicit_mpi(tmp_path):
    """An interpreter (no MPI in ldd) runs once --mpi names the MPI."""
    script = tmp_path / "hello.sh"
    script.write_text('#!/bin/sh\necho "preloaded: $LD_PRELOAD"\n')
    script.chmod(0o755)
    result = tandem_cli("run", "--mpi", "mpich", "-n", "1", str(script))
    assert result.returncode == 0, result.stderr
    assert str(build_for("mpich").library) in result.stdout
    assert os.path.basename(str(build_for("mpich").library)) == "libtandem.so"


def test_bench_overlap_writes_json_and_plots(tmp_path):
    result = tandem_cli(
        "bench",
        "overlap",
        "--mpi",
        "openmpi",
        "--transports",
        "shm",
        "--sizes",
        "4096,65536",
        "--rounds",
        "1",
        "--trials",
        "1",
        "--out",
        str(tmp_path),
    )
    assert result.returncode == 0, result.stderr + result.stdout
    data = json.loads((tmp_path / "overlap.json").read_text())
    configs = {r["config"] for r in data["records"]}
    assert configs == {
        "native",
        "tandem-drive-yield",
        "tandem-drive-lend",
        "tandem-proxy-yield",
        "tandem-proxy-lend",
    }
    assert {r["variant"] for r in data["records"]} == {"isend_recv", "irecv_send", "both"}
    assert len(data["records"]) == 5 * 3 * 2  # configs x variants x sizes
    assert all(0 <= r["availability"] <= 1 for r in data["records"])
    assert data["machine"]["cores"] == os.cpu_count()
    assert (tmp_path / "overlap-openmpi-shm.png").stat().st_size > 10000


def test_bench_rejects_an_unknown_transport(tmp_path):
    expect_error(
        "bench",
        "overlap",
        "--transports",
        "shm,infiniband",
        "--out",
        str(tmp_path),
        messages=["'infiniband' is not one of shm, tcp, shaped"],
    )


def test_bench_rejects_a_rate_tc_does_not_read(tmp_path):
    expect_error(
        "bench",
        "coll",
        "--rate",
        "2gbits",
        "--out",
        str(tmp_path),
        messages=["--rate 2gbits: expected a positive number and one of tc's units", "gbit"],
    )


def test_bench_rejects_an_also_without_a_value(tmp_path):
    expect_error(
        "bench",
        "nbc",
        "--also",
        "TANDEM_POLL",
        "--out",
        str(tmp_path),
        messages=["--also TANDEM_POLL: expected VAR=VALUE"],
    )


def test_bench_also_runs_every_tandem_configuration_again_interleaved(monkeypatch, tmp_path):
    """--also VAR=VALUE: in every round, each of Tandem's configurations runs
    a second time with the variable set, right after the first; the MPI's own
    run once."""
    from tandem import bench, cli

    seen = {}

    def nbc(builds, transports, *rest):
        configs = [bench.Config("native", False), bench.Config("tandem", True, {"A": "1"})]
        launched = []

        def run_point(build, transport, config, point):
            launched.append((point, config.name, config.env))
            return [], None

        build = types.SimpleNamespace(family="MPI")
        bench.rounds_of([build], ["shm"], ["p", "q"], lambda b, t: configs, run_point, 2)
        seen["launched"] = launched
        return tmp_path / "nbc.json"

    monkeypatch.setattr(bench, "nbc", nbc)
    monkeypatch.setattr(bench, "also_env", {})  # restored after the test
    argv = ["bench", "nbc", "--also", "TANDEM_POLL=event", "--also", "B=x=y"]
    assert cli.main(argv + ["--out", str(tmp_path)]) == 0
    also = {"A": "1", "TANDEM_POLL": "event", "B": "x=y"}
    one_point = [
        ("native", {}),
        ("tandem", {"A": "1"}),
        ("tandem+TANDEM_POLL=event,B=x=y", also),
    ]
    rounds = [(p, *c) for _ in range(2) for p in ("p", "q") for c in one_point]
    assert seen["launched"] == rounds


def test_bench_env_reaches_every_launch_native_too(monkeypatch, tmp_path):
    """-e VAR=VALUE: the variable reaches the ranks of every configuration,
    the MPI's own run included, over the configuration's own value, and the
    run's JSON says it was set; a setting without a value is an error."""
    from tandem import bench, cli

    seen = {}

    def nbc(*args):
        build = build_for("mpich")
        seen["commands"] = [
            bench.launch_for(build, 2, ["prog"], "shm", config)
            for config in (
                bench.Config("native", False),
                bench.Config("tandem", True, {"OMPI_MCA_pml": "ob1", "A": "1"}),
            )
        ]
        seen["document"] = bench.document("nbc", 1, 1, [], [], [])
        return tmp_path / "nbc.json"

    monkeypatch.setattr(bench, "nbc", nbc)
    monkeypatch.setattr(bench, "every_env", {})  # restored after the test
    argv = ["bench", "nbc", "-e", "OMPI_MCA_pml=ucx", "--env", "B=x=y", "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    for command in seen["commands"]:
        assert command[command.index("OMPI_MCA_pml") - 1 :][:3] == ["-genv", "OMPI_MCA_pml", "ucx"]
        assert command[command.index("B") - 1 :][:3] == ["-genv", "B", "x=y"]
    assert seen["document"]["env"] == {"OMPI_MCA_pml": "ucx", "B": "x=y"}
    expect_error(
        "bench",
        "nbc",
        "-e",
        "OMPI_MCA_pml",
        "--out",
        str(tmp_path),
        messages=["-e OMPI_MCA_pml: expected VAR=VALUE"],
    )


def test_shaped_timings_settle_for_twice_the_bucket_refill():
    from tandem.bench import rate_bits, settle_us

    assert rate_bits("2gbit") == 2e9 and rate_bits("250mbps") == 2e9
    assert settle_us("2gbit") == 2098  # 256 KiB (tc's kb) at 2 Gbit/s: 1.05 ms, twice
    assert settle_us("100mbit") == 41944


def test_bench_latency_writes_json_and_table(tmp_path):
    result = tandem_cli(
        "bench",
        "latency",
        "--mpi",
        "mpich",
        "--transports",
        "shm",
        "--sizes",
        "8,4096",
        "--rounds",
        "1",
        "--trials",
        "1",
        "--out",
        str(tmp_path),
    )
    assert result.returncode == 0, result.stderr + result.stdout
    data = json.loads((tmp_path / "latency.json").read_text())
    tests = {(r["config"], r["test"]) for r in data["records"]}
    for config in ("native", "tandem-off", "tandem-drive"):
        assert (config, "pingpong") in tests and (config, "message_rate") in tests
    table = (tmp_path / "latency.md").read_text()
    assert "| MPICH | shm | latency 8 B (us) |" in table


def test_run_progress_option_sets_the_variable(build):
    program = program_path(build, "test_p2p_nonblocking")
    result = tandem_cli("run", "-n", "2", "--progress", "drive", "-e", "TANDEM_VERBOSE=2", program)
    assert result.returncode == 0, result.stderr
    assert "  TANDEM_PROGRESS=drive\n" in result.stderr
    assert "progress thread:" in result.stderr
    assert "== ok" in result.stdout


def test_bench_halo_and_io_write_json_and_plots(tmp_path):
    common = ["--mpi", "openmpi", "--rounds", "1", "--trials", "1", "--out", str(tmp_path)]
    halo = tandem_cli(
        "bench",
        "halo",
        "--transports",
        "shm",
        "--ranks",
        "1,2",
        "--cells",
        "65536",
        "--halo-bytes",
        "65536",
        "--steps",
        "2",
        *common,
    )
    assert halo.returncode == 0, halo.stderr + halo.stdout
    records = json.loads((tmp_path / "halo.json").read_text())["records"]
    assert {(r["ranks"], r["config"]) for r in records} == {
        (n, c) for n in (1, 2) for c in ("native", "tandem-drive-yield", "tandem-proxy-yield")
    }
    assert all(r["step_s"] > 0 for r in records)
    io = tandem_cli(
        "bench", "io", "--ranks", "1", "--io-bytes", "1048576", "--io-dir", str(tmp_path), *common
    )
    assert io.returncode == 0, io.stderr + io.stdout
    records = json.loads((tmp_path / "io.json").read_text())["records"]
    assert {r["config"] for r in records} == {"native", "tandem-drive", "tandem-proxy"}
    assert all(0 <= r["availability"] <= 1 for r in records)
    assert (tmp_path / "halo.png").exists() and (tmp_path / "io.png").exists()
    assert not list(tmp_path.glob("*.dat"))  # the benchmark deletes its file


def test_bench_halo_runs_on_every_transport_named(monkeypatch, tmp_path):
    """The ghost-cell exchange used to drop "shaped" from --transports without
    a word; it now runs there too, at the rate given, in the namespace that
    the command sets up once for every benchmark that names it."""
    from tandem import bench, cli

    seen = {"networks": []}

    def halo(builds, transports, *rest):
        seen.update(transports=transports, rate=rest[-1])
        return tmp_path / "halo.json"

    monkeypatch.setattr(bench, "halo", halo)
    monkeypatch.setattr(bench, "shaped_network", lambda rate: seen["networks"].append(rate))
    argv = [
        "bench",
        "halo",
        "--transports",
        "shm,shaped",
        "--rate",
        "1gbit",
        "--out",
        str(tmp_path),
    ]
    assert cli.main(argv) == 0
    assert seen == {"transports": ["shm", "shaped"], "rate": "1gbit", "networks": ["1gbit"]}


def test_bench_io_rejects_a_missing_directory(tmp_path):
    result = tandem_cli("bench", "io", "--io-dir", str(tmp_path / "nowhere"))
    assert result.returncode == 2
    assert "--io-dir" in result.stderr and "not a directory" in result.stderr


def test_bench_monitor_writes_json_table_and_plot(tmp_path):
    small = ["--sizes", "8", "--ranks", "2", "--steps", "2", "--cells", "65536"]
    common = ["--mpi", "openmpi", "--rounds", "1", "--trials", "1", "--out", str(tmp_path)]
    result = tandem_cli("bench", "monitor", "--halo-bytes", "4096", *small, *common)
    assert result.returncode == 0, result.stderr + result.stdout
    data = json.loads((tmp_path / "monitor.json").read_text())
    assert not data["problems"]
    configs = {"native", "tandem", "tandem-monitor", "ompi-monitoring"}
    assert {r["config"] for r in data["summary"]["per_message"]} == configs
    assert [r["ranks"] for r in data["summary"]["halo"]] == [2]
    assert all(r["step_monitor_s"] > 0 for r in data["summary"]["halo"])
    assert all(r["send_ns"] > 0 and r["recv_ns"] > 0 for r in data["summary"]["per_message"])
    assert "monitoring cost" in (tmp_path / "monitor.md").read_text()
    assert (tmp_path / "monitor.png").stat().st_size > 0


def test_bench_coll_writes_json_table_and_plots(tmp_path):
    common = ["--mpi", "mpich", "--rounds", "1", "--trials", "1", "--out", str(tmp_path)]
    result = tandem_cli("bench", "coll", "--transports", "shm", "--sizes", "4096", *common)
    assert result.returncode == 0, result.stderr + result.stdout
    data = json.loads((tmp_path / "coll.json").read_text())
    assert {r["collective"] for r in data["records"]} == {
        "ibcast",
        "iallreduce",
        "iscatter",
        "ialltoall",
    }
    assert {r["config"] for r in data["records"]} >= {"native", "tandem-coll"}
    assert all(r["overlap"] >= 0 and r["pure_s"] > 0 for r in data["records"])
    assert all(r["settle_us"] == 0 for r in data["records"])  # only the shaped network settles
    assert "| overlap |" in (tmp_path / "coll.md").read_text()
    assert (tmp_path / "coll_ibcast.png").stat().st_size > 0


def test_bench_post_writes_json_table_and_plot(tmp_path):
    common = ["--mpi", "mpich", "--rounds", "1", "--trials", "5", "--out", str(tmp_path)]
    result = tandem_cli(
        "bench", "post", "--transports", "shm", "--ranks", "2", "--sizes", "1024",
        "--idle-us", "0,50", *common,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr + result.stdout
    data = json.loads((tmp_path / "post.json").read_text())
    assert {r["idle_us"] for r in data["records"]} == {0, 50}
    assert {r["config"] for r in data["records"]} >= {"native", "tandem-coll"}
    assert all(r["post_s"] > 0 and r["wait_s"] >= 0 for r in data["records"])
    assert "| post (us) |" in (tmp_path / "post.md").read_text()
    assert (tmp_path / "post.png").stat().st_size > 0


def test_bench_nbc_writes_json_table_and_plots(tmp_path):
    common = ["--mpi", "openmpi", "--rounds", "1", "--trials", "1", "--out", str(tmp_path)]
    result = tandem_cli(
        "bench", "nbc", "--transports", "shm", "--ranks", "2", "--sizes", "4096", *common
    )
    assert result.returncode == 0, result.stderr + result.stdout
    data = json.loads((tmp_path / "nbc.json").read_text())
    assert {r["collective"] for r in data["records"]} == {"bcast", "scatter"}
    assert {r["config"] for r in data["records"]} == {"native", "tandem-coll"}
    assert all(r["block_s"] > 0 and r["nbc_overlap_s"] > 0 for r in data["records"])
    assert "| nbc+overlap (ms) |" in (tmp_path / "nbc.md").read_text()
    assert (tmp_path / "nbc_scatter.png").stat().st_size > 0


def test_bench_ioapp_processes_every_line(tmp_path):
    """The I/O application's records say every line was processed once; the
    table compares 16 concurrent scatters with the blocking one."""
    common = ["--mpi", "mpich", "--rounds", "1", "--trials", "1", "--out", str(tmp_path)]
    result = tandem_cli(
        "bench",
        "ioapp",
        "--transports",
        "shm",
        "--ranks",
        "2",
        "--ops",
        "10",
        "--input-mib",
        "8",
        "--timeout",
        "60",
        "--io-dir",
        str(tmp_path),
        *common,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    data = json.loads((tmp_path / "ioapp.json").read_text())
    assert {r["mode"] for r in data["records"]} == {"block", "nbc4", "nbc8", "nbc16"}
    assert all(r["correct"] and r["lines"] > 0 for r in data["records"])
    assert not [p for p in data["problems"] if "lost" in p]
    assert "nbc16 vs its block" in (tmp_path / "ioapp.md").read_text()
    assert (tmp_path / "ioapp_2.png").stat().st_size > 0


def run_transfer_floor(*args: str) -> subprocess.CompletedProcess:
    script = ROOT / "bench" / "transfer_floor.py"
    return subprocess.run(
        [sys.executable, str(script), "--networks", "tcp", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_transfer_floor_on_one_cpu_and_on_two():
    results = {}
    for cpus in ("two", "one"):
        result = run_transfer_floor(
            "--size", "65536", "--trials", "5", "--rounds", "1", "--cpus", cpus
        )
        assert result.returncode == 0, result.stderr
        line = json.loads(result.stdout)
        assert line["cpus_used"] == cpus and line["bytes"] == 65536
        assert line["wall_s"] > 0 and line["sender_cpu_s"] >= 0 and line["receiver_cpu_s"] >= 0
        results[cpus] = line
    assert results["one"]["network"] == results["two"]["network"] == "tcp"


def test_transfer_floor_rejects_an_unknown_cpu_count():
    result = run_transfer_floor("--cpus", "three")
    assert result.returncode == 2
    assert "--cpus: invalid choice: 'three' (choose from 'one', 'two')" in result.stderr


def test_a_killed_launch_reports_where_each_of_its_processes_hangs():
    from tandem.launch import run_launch

    if shutil.which("gdb") is None:
        pytest.skip("gdb is not installed (tools/install-deps.sh installs it)")
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    outcome = run_launch(["bash", "-c", f"{shlex.join(sleeper)} & wait"], dict(os.environ), 2)
    assert outcome.timed_out and outcome.returncode is None
    processes = [line for line in outcome.stacks.splitlines() if line.startswith("process ")]
    assert len(processes) == 2, outcome.stacks  # bash and its child, one group
    assert "(bash)" in processes[0] or "(bash)" in processes[1]
    assert "nanosleep" in outcome.stacks  # the child's frame where it sleeps
    assert outcome.where_killed.startswith("; call stacks when killed:\nprocess ")


def test_a_killed_launch_without_gdb_reports_no_stacks(monkeypatch):
    from tandem import launch

    monkeypatch.setattr(launch.shutil, "which", lambda name: None)
    outcome = launch.run_launch(["sleep", "60"], dict(os.environ), 1)
    assert outcome.timed_out and outcome.stacks == ""
