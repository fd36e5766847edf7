"""The library's behaviour at start-up: configuration warnings, verbose output,
pass-through modes, a wrong build, programs without MPI, linking by pkg-config."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from conftest import ROOT, build_for, launch, program_path
from tandem.launch import launch_command, launcher_environment


def test_bad_value_warns_with_variable_value_and_accepted_values(build):
    program = program_path(build, "test_init_thread")
    result = launch(build, 2, [program], env={"TANDEM_VERBOSE": "loud"})
    assert result.returncode == 0, result.stderr
    assert (
        "tandem[0]: warning: TANDEM_VERBOSE=loud is not valid: "
        "expected an integer from 0 to 2; using the default 0"
    ) in result.stderr
    assert "tandem[1]" not in result.stderr  # rank 0 speaks for all


def test_unknown_variable_suggests_the_closest_name(build):
    program = program_path(build, "test_init_thread")
    result = launch(build, 1, [program], env={"TANDEM_VERBSE": "1"})
    assert result.returncode == 0, result.stderr
    assert "unknown variable TANDEM_VERBSE; did you mean TANDEM_VERBOSE?" in result.stderr


@pytest.mark.parametrize(
    "settings",
    [
        {"TANDEM_FOO": "1"},  # unknown, and unlike any known name
        {"TANDEM_PROGRESS": "fast"},  # a bad value
        {"TANDEM_POLL": "event"},  # valid: runs as without strict mode
    ],
)
def test_strict_mode_stops_every_rank_on_a_configuration_warning(build, settings):
    """TANDEM_STRICT=1 turns a configuration warning into a stop of every
    rank with exit status 1, the warning and the reason said; a valid
    configuration runs as without it. The rank whose variables are bad may
    be any: here only rank 1 has them (the ranks agree before they stop)."""
    program = program_path(build, "test_p2p_blocking")
    plain = launch(build, 2, [program], env={"TANDEM_STRICT": "1", **settings})
    valid = "TANDEM_POLL" in settings
    assert (plain.returncode == 0) == valid, plain.stderr
    if valid:
        assert "warning" not in plain.stderr
        return
    assert "tandem[0]: error: TANDEM_STRICT=1: stopping" in plain.stderr
    ((name, value),) = settings.items()
    assert f"{name}" in plain.stderr and ("unknown" in plain.stderr or value in plain.stderr)
    without = launch(build, 2, [program], env=settings)
    assert without.returncode == 0 and "warning" in without.stderr


def test_strict_mode_stops_every_rank_when_one_rank_warns(build):
    """Variables may differ between ranks: the ranks agree, and all stop."""
    program = program_path(build, "test_p2p_blocking")
    one_rank = (
        f'if [ "$PMI_RANK$OMPI_COMM_WORLD_RANK" = 1 ]; then export TANDEM_FOO=1; fi; exec {program}'
    )
    result = launch(build, 2, ["/bin/sh", "-c", one_rank], env={"TANDEM_STRICT": "1"})
    assert result.returncode == 1, result.stderr
    assert "tandem[1]: warning: unknown variable TANDEM_FOO" in result.stderr
    assert (
        "tandem[0]: error: TANDEM_STRICT=1: stopping, since the TANDEM_* settings of some rank"
        in result.stderr
    )


def test_auto_progress_on_one_host_takes_a_thread_only_with_a_spare_cpu_per_rank(build):
    """TANDEM_PROGRESS=auto, the default, with every rank on this host: where
    the host leaves no spare CPU per rank, no progress thread starts and the
    MPI library is asked for the program's own thread level (Open MPI charges
    MPI_THREAD_MULTIPLE on every small message); where it does (twice as
    many CPUs as ranks, OMP_NUM_THREADS + 1 per rank), proxy.
    TANDEM_VERBOSE=1 says what it chose and why."""
    program = program_path(build, "test_init_thread")
    cpus = len(os.sched_getaffinity(0))
    result = launch(build, 2, [program], env={"TANDEM_VERBOSE": "2"})
    assert result.returncode == 0, result.stderr
    if cpus < 4:
        assert "TANDEM_PROGRESS=auto: off: all 2 ranks run on this host" in result.stderr
        assert "TANDEM_PROGRESS=off (default)" in result.stderr
        assert "progress thread:" not in result.stderr
    else:
        said = "TANDEM_PROGRESS=auto: proxy: all 2 ranks run on this host, whose"
        assert said in result.stderr
        assert len(re.findall(r"progress thread: \d+ polls", result.stderr)) == 2
    # OpenMP threads that take every CPU leave none to spare
    hybrid = launch(build, 2, [program], env={"TANDEM_VERBOSE": "1", "OMP_NUM_THREADS": str(cpus)})
    assert hybrid.returncode == 0, hybrid.stderr
    assert "TANDEM_PROGRESS=auto: off: all 2 ranks run on this host" in hybrid.stderr
    assert "leave no spare one per rank" in hybrid.stderr
    alone = launch(build, 1, [program], env={"TANDEM_VERBOSE": "1"})
    assert alone.returncode == 0, alone.stderr
    assert "TANDEM_PROGRESS=auto: off: the job has one rank, with no peer" in alone.stderr


# The launcher's variables that say how many ranks run on this host.
LOCAL_SIZE = {"Open MPI": "OMPI_COMM_WORLD_LOCAL_SIZE", "MPICH": "MPI_LOCALNRANKS"}


def test_auto_progress_drives_on_sockets_where_ranks_span_hosts(build):
    """Where the launcher says the ranks span hosts (here: a rank that is
    told it runs alone on its host), auto drives the MPI library waiting on
    the sockets; an explicit TANDEM_POLL or TANDEM_PROGRESS still wins."""
    program = program_path(build, "test_p2p_nonblocking")
    alone = f"{LOCAL_SIZE[build.family]}=1 exec {program}"
    spread = launch(build, 2, ["/bin/sh", "-c", alone], env={"TANDEM_VERBOSE": "2"})
    assert spread.returncode == 0, spread.stderr
    said = "TANDEM_PROGRESS=auto: drive: 1 of the 2 ranks run on this host, the others across"
    assert said in spread.stderr
    assert "TANDEM_POLL=event (default)" in spread.stderr
    assert len(re.findall(r"progress thread: \d+ polls", spread.stderr)) == 2
    polled = launch(
        build, 2, ["/bin/sh", "-c", alone], env={"TANDEM_VERBOSE": "1", "TANDEM_POLL": "yield"}
    )
    assert polled.returncode == 0 and "TANDEM_POLL=yield\n" in polled.stderr, polled.stderr
    forced = launch(build, 2, [program], env={"TANDEM_VERBOSE": "1", "TANDEM_PROGRESS": "proxy"})
    assert forced.returncode == 0 and "TANDEM_PROGRESS=auto" not in forced.stderr
    assert "TANDEM_PROGRESS=proxy\n" in forced.stderr
    assert "TANDEM_POLL=yield (default)" in forced.stderr  # one host: the default
    # across hosts an explicit proxy sleeps between its polls, drive waits
    # on the sockets (a proxy polling without pause slowed Open MPI's TCP)
    for strategy, policy in (("proxy", "sleep"), ("drive", "event")):
        env = {"TANDEM_VERBOSE": "1", "TANDEM_PROGRESS": strategy}
        spanned = launch(build, 2, ["/bin/sh", "-c", alone], env=env)
        assert spanned.returncode == 0, spanned.stderr
        assert f"TANDEM_POLL={policy} (default)" in spanned.stderr, strategy


def test_verbose_prints_the_effective_configuration_on_rank_0(build):
    program = program_path(build, "test_init_thread")
    result = launch(build, 2, [program], env={"TANDEM_VERBOSE": "1", "TANDEM_TRACE": "no"})
    assert result.returncode == 0, result.stderr
    assert f"tandem[0]: Tandem 0.1.0 built for {build.family}" in result.stderr
    assert "tandem[0]:   TANDEM_VERBOSE=1\n" in result.stderr
    assert "tandem[0]:   TANDEM_TRACE=0\n" in result.stderr  # set, so not "(default)"
    assert "tandem[0]:   TANDEM_DISABLE=0 (default)" in result.stderr
    assert "tandem[1]" not in result.stderr


def test_ucx_workers_get_a_mutex_beside_tandems_thread_unless_the_user_chose(build):
    """Open MPI's UCX workers under MPI_THREAD_MULTIPLE: Tandem asks UCX for
    a mutex instead of its spinlock where its own thread calls the library
    (a 1 MiB get across hosts took 8-16 ms instead of about 1 with the
    spinlock, docs/PERFORMANCE.md "UCX's lock"), says so under
    TANDEM_VERBOSE=1, and leaves a value the user set; with no thread of
    Tandem's, and on MPICH (serialized workers), it sets nothing."""
    program = program_path(build, "test_init_thread")
    said = "for the MPI library beside Tandem's thread: UCX_USE_MT_MUTEX=y"
    verbose = {"TANDEM_VERBOSE": "1"}
    driven = launch(build, 2, [program], env={**verbose, "TANDEM_PROGRESS": "drive"})
    chosen = launch(
        build, 2, [program], env={**verbose, "TANDEM_PROGRESS": "drive", "UCX_USE_MT_MUTEX": "n"}
    )
    off = launch(build, 2, [program], env={**verbose, "TANDEM_PROGRESS": "off"})
    for result in (driven, chosen, off):
        assert result.returncode == 0, result.stderr
    assert (said in driven.stderr) == (build.family == "Open MPI"), driven.stderr
    assert "UCX_USE_MT_MUTEX" not in chosen.stderr + off.stderr


def test_disable_passes_every_call_through(build):
    program = program_path(build, "test_p2p_nonblocking")
    traced = launch(build, 2, [program], env={"TANDEM_TRACE": "1"})
    disabled = launch(build, 2, [program], env={"TANDEM_TRACE": "1", "TANDEM_DISABLE": "1"})
    assert traced.returncode == 0 and disabled.returncode == 0
    assert "trace MPI_Isend (C)" in traced.stderr
    assert "trace" not in disabled.stderr
    assert traced.stdout == disabled.stdout


def injected(build):
    return str(build.directory / "tests" / "libinject_thread_level.so")


def test_without_thread_multiple_tandem_runs_without_its_threads(build):
    """Fault injection: the MPI grants only MPI_THREAD_SERIALIZED. With
    TANDEM_PROGRESS=proxy Tandem says so once and carries on without its
    threads: calls are still intercepted, nothing is proxied."""
    program = program_path(build, "test_init_thread")
    native = launch(build, 2, [program, "multiple"], with_tandem=False)
    result = launch(
        build,
        2,
        [program, "multiple"],
        env={"TANDEM_TRACE": "1", "TANDEM_PROGRESS": "proxy", "TANDEM_VERBOSE": "1"},
        extra_preload=injected(build),
    )
    assert result.returncode == 0, result.stderr
    assert (
        "tandem[0]: warning: the MPI library granted MPI_THREAD_SERIALIZED, not "
        "MPI_THREAD_MULTIPLE: Tandem runs without its threads, as with TANDEM_PROGRESS=off"
    ) in result.stderr
    assert result.stderr.count("not MPI_THREAD_MULTIPLE") == 1  # one line, on rank 0
    assert "tandem[0]:   TANDEM_PROGRESS=off\n" in result.stderr  # what is in force
    assert "progress thread" not in result.stderr
    assert "trace MPI_Query_thread (C)" in result.stderr  # still intercepted
    assert "provided serialized" in result.stdout  # what the MPI really gave
    assert "provided multiple" in native.stdout


@pytest.mark.parametrize("asked", ["none", "single", "serialized", "multiple"])
def test_without_a_tandem_thread_the_program_gets_the_level_it_asked_for(build, asked):
    """TANDEM_PROGRESS=off (the default) starts no Tandem thread, so Tandem
    passes the program's own thread level to the MPI library (with
    MPI_THREAD_MULTIPLE the library is slower) and stays active, even where the
    library cannot give MPI_THREAD_MULTIPLE: no warning then."""
    program = program_path(build, "test_init_thread")
    result = launch(
        build,
        1,
        [program, asked],
        env={"TANDEM_TRACE": "1", "TANDEM_VERBOSE": "1"},
        extra_preload=injected(build),
    )
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr
    assert "trace MPI_Query_thread (C)" in result.stderr
    granted = {"none": "single", "single": "single"}.get(asked, "serialized")
    assert f"MPI granted MPI_THREAD_{granted.upper()}; active" in result.stderr
    assert f"query_thread {granted}" in result.stdout
    assert asked == "none" or f"provided {granted}" in result.stdout
    assert "== ok" in result.stdout


def test_without_thread_multiple_tandem_require_threads_aborts(build):
    program = program_path(build, "test_init_thread")
    result = launch(
        build,
        2,
        [program, "single"],
        env={"TANDEM_REQUIRE_THREADS": "1", "TANDEM_PROGRESS": "drive"},
        extra_preload=injected(build),
    )
    assert result.returncode != 0
    assert "TANDEM_REQUIRE_THREADS=1: stopping" in result.stderr
    assert "== ok" not in result.stdout


@pytest.mark.parametrize("nprocs", [1, 2])
def test_out_of_memory_in_a_collective_reaches_the_error_handler(build, nprocs):
    """Fault injection: libtandem's allocations fail while the program builds a
    collective; the call returns MPI_ERR_NO_MEM through the communicator's
    handler on every rank instead of going to the MPI library alone."""
    program = program_path(build, "test_coll_nomem")
    env = {"TANDEM_COLL": "tandem", "TANDEM_COLL_BLOCKING": "tandem", "TANDEM_PROGRESS": "proxy"}
    preload = str(build.directory / "tests" / "libinject_nomem.so")
    native = launch(build, nprocs, [program], with_tandem=False, extra_preload=preload)
    result = launch(build, nprocs, [program], env=env, extra_preload=preload)
    assert native.returncode == 0 and result.returncode == 0, result.stdout + result.stderr
    assert native.stdout.count("nonblocking MPI_SUCCESS, blocking MPI_SUCCESS") == nprocs
    failed = (
        "injection armed: nonblocking MPI_ERR_NO_MEM, blocking MPI_ERR_NO_MEM, "
        "handler called 2 times, afterwards right"
    )
    assert result.stdout.count(failed) == nprocs, result.stdout


def test_shared_memory_slots_stay_within_their_limit(build):
    """TANDEM_COLL_SHM_LIMIT: test_coll_first_use makes 14 communicators of 3
    ranks on one node beside MPI_COMM_WORLD that can take slots (15 where
    mpi.h is MPI 4: MPI_Comm_create_from_group), each 1 MiB of slots per rank by
    default, and at most two of them live at a time (a Cartesian communicator
    and its sub-communicator). With 1 MiB, only MPI_COMM_WORLD gets slots;
    with 3 MiB every communicator does, which holds only if freeing one gives
    its bytes back; the results are right either way (the program checks
    them)."""
    program = program_path(build, "test_coll_first_use")
    env = {"TANDEM_COLL": "tandem", "TANDEM_PROGRESS": "proxy", "TANDEM_VERBOSE": "1"}
    said = "gets no shared-memory slots"
    made = 15 if build.family == "MPICH" else 14
    for limit, refused in [("1m", made), ("2m", 2), ("3m", 0)]:
        result = launch(build, 3, [program], env=dict(env, TANDEM_COLL_SHM_LIMIT=limit))
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.count("== ok") == 1, result.stdout
        assert result.stderr.count(said) == refused, (limit, result.stderr)


def collective_calls_seen(build, env: dict[str, str]) -> dict[str, dict[str, int]]:
    """Per rank, the calls that made a communicator or a window from one of
    the application's communicators while test_coll_first_use ran
    (tests/c/watch_comm_calls.c)."""
    program = program_path(build, "test_coll_first_use")
    watcher = str(build.directory / "tests" / "libwatch_comm_calls.so")
    result = launch(build, 3, [program], env=env, extra_preload=watcher)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("== ok") == 1, result.stdout
    lines = re.findall(r"watch\[(\d+)\]:(.*)", result.stderr)
    assert len(lines) == 3, result.stderr
    return {
        rank: dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", counts))
        for rank, counts in lines
    }


def test_tandem_makes_its_communicators_without_the_applications_collectives(build):
    """Tandem's private copies of MPI_COMM_WORLD and of every communicator the
    application makes come from MPI_Comm_create_group, not from a duplicate
    or a split of the application's communicator: in Open MPI 4.1 those take
    tags from the communicator's nonblocking collectives, and whether a
    program hit that MPI's tag clash in MPI_Dist_graph_create would depend on
    Tandem. So the calls that make communicators and windows from the
    application's communicators are the application's own, as without
    Tandem, but for MPI_Comm_idup (and the MPI-4 MPI_Comm_idup_with_info),
    beside which Tandem posts an MPI_Comm_idup of its own."""
    without = collective_calls_seen(build, {"TANDEM_DISABLE": "1"})
    assert without["0"]["Comm_dup"] == 1 and without["0"]["Comm_idup"] == 3, without
    nonblocking = without["0"]["Comm_idup"] + without["0"]["Comm_idup_with_info"]
    assert without["0"]["Comm_idup_with_info"] == (1 if build.family == "MPICH" else 0), without
    for strategy in ("drive", "proxy"):
        env = {
            "TANDEM_PROGRESS": strategy,
            "TANDEM_COLL": "tandem",
            "TANDEM_COLL_BLOCKING": "tandem",
        }
        seen = collective_calls_seen(build, env)
        for rank, counts in without.items():
            assert seen[rank]["Comm_idup"] == counts["Comm_idup"] + nonblocking, (strategy, rank)
            assert dict(seen[rank], Comm_idup=0) == dict(counts, Comm_idup=0), (strategy, rank)


@pytest.mark.parametrize(("library", "program"), [("mpich", "openmpi"), ("openmpi", "mpich")])
def test_wrong_build_gives_a_clear_error(library, program):
    lib = build_for(library)
    prog = program_path(build_for(program), "test_init_thread")
    env = dict(os.environ, LD_PRELOAD=str(lib.library))
    result = subprocess.run([prog], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 1
    assert f"tandem: error: this libtandem was built for {lib.family}" in result.stderr
    assert "use the libtandem built for that MPI" in result.stderr


def test_program_without_mpi_is_unchanged(build):
    program = program_path(build, "test_no_mpi")
    plain = subprocess.run([program, "x"], capture_output=True, text=True, timeout=60)
    env = dict(os.environ, LD_PRELOAD=str(build.library), TANDEM_VERBOSE="1")
    loaded = subprocess.run([program, "x"], capture_output=True, text=True, env=env, timeout=60)
    assert plain.returncode == loaded.returncode == 0
    assert plain.stdout == loaded.stdout == "no MPI here: 1 argument(s), first x\n"
    assert loaded.stderr == ""


def install(build, prefix):
    """Install the build under 'prefix' (cmake --install) and return the prefix."""
    subprocess.run(
        ["cmake", "--install", str(build.directory), "--prefix", str(prefix)],
        check=True,
        capture_output=True,
    )
    return prefix


def compiler_of(build) -> str:
    return "mpicc.openmpi" if build.family == "Open MPI" else "mpicc.mpich"


def test_link_with_pkg_config_instead_of_preloading(build, tmp_path):
    prefix = install(build, tmp_path / "prefix")
    pc_dirs = [str(p.parent) for p in prefix.rglob("tandem.pc")]
    assert pc_dirs, "tandem.pc was not installed"
    env = dict(os.environ, PKG_CONFIG_PATH=":".join(pc_dirs))
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "tandem"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout.split()
    exe = tmp_path / "api"
    subprocess.run(
        [compiler_of(build), str(ROOT / "tests" / "c" / "tandem_api.c"), "-o", str(exe), *flags],
        check=True,
    )
    libdir = next(p for p in flags if p.startswith("-L"))[2:]
    result = launch(build, 1, [str(exe)], env={"LD_LIBRARY_PATH": libdir}, with_tandem=False)
    assert result.returncode == 0, result.stderr
    assert f"tandem 0.1.0 for {build.family}: active before 0, during 1, after 0" in result.stdout


def test_link_with_the_cmake_package(build, tmp_path):
    prefix = install(build, tmp_path / "prefix")
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\n"
        "project(uses_tandem C)\n"
        "find_package(Tandem 0.1 REQUIRED)\n"
        f"add_executable(api {ROOT / 'tests' / 'c' / 'tandem_api.c'})\n"
        "target_link_libraries(api PRIVATE Tandem::tandem)\n"
    )
    configure = subprocess.run(
        [
            "cmake",
            "-S",
            str(project),
            "-B",
            str(project / "build"),
            f"-DCMAKE_PREFIX_PATH={prefix}",
            f"-DMPI_C_COMPILER={compiler_of(build)}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    subprocess.run(["cmake", "--build", str(project / "build")], check=True, capture_output=True)
    result = launch(build, 1, [str(project / "build" / "api")], with_tandem=False)
    assert result.returncode == 0, result.stderr
    assert f"for {build.family}: active before 0, during 1, after 0" in result.stdout


def test_drive_strategy_runs_a_progress_thread_that_polls(build):
    program = program_path(build, "test_p2p_nonblocking")
    env = {"TANDEM_PROGRESS": "drive", "TANDEM_EAGER_LIMIT": "0", "TANDEM_VERBOSE": "2"}
    result = launch(build, 2, [program], env=env)
    native = launch(build, 2, [program], with_tandem=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == native.stdout
    assert "  TANDEM_PROGRESS=drive" in result.stderr
    polls = [int(n) for n in re.findall(r"progress thread: (\d+) polls", result.stderr)]
    assert len(polls) == 2, result.stderr  # both threads ran
    # Whether they polled there depends on the timing (a thread backs off while
    # its rank waits in MPI_Waitall); rank 0 of the demonstration computes for
    # milliseconds with a 4 MiB MPI_Isend outstanding, so its thread must poll.
    # With no spare core a trial's thread may get no turn before the wait
    # (Open MPI: 0 polls in 3 of 40 launches of 3 trials); 10 trials polled
    # 27-161 times in 40 of 40.
    demo = str(build.directory / "tandem-overlap-demo")
    result = launch(build, 2, [demo, "4194304", "10"], env=env)
    assert result.returncode == 0, result.stderr
    polls = re.findall(r"tandem\[0\]: progress thread: (\d+) polls", result.stderr)
    assert len(polls) == 1 and int(polls[0]) > 0, result.stderr


def test_proxy_strategy_proxies_and_offloads(build):
    """Under TANDEM_PROGRESS=proxy the nonblocking operations become proxies
    and the nonblocking file operations go to the worker thread."""
    env = {"TANDEM_PROGRESS": "proxy", "TANDEM_EAGER_LIMIT": "0", "TANDEM_VERBOSE": "2"}
    for name, pattern in [
        ("test_p2p_nonblocking", r"(\d+) operations proxied"),
        ("test_io", r"(\d+) file operations offloaded"),
    ]:
        result = launch(build, 2, [program_path(build, name)], env=env)
        assert result.returncode == 0, result.stderr
        counts = [int(n) for n in re.findall(pattern, result.stderr)]
        assert len(counts) == 2 and all(n > 0 for n in counts), result.stderr


def test_io_offload_can_be_switched_off(build):
    env = {"TANDEM_PROGRESS": "drive", "TANDEM_IO_OFFLOAD": "0", "TANDEM_VERBOSE": "2"}
    result = launch(build, 2, [program_path(build, "test_io")], env=env)
    assert result.returncode == 0, result.stderr
    assert re.findall(r"(\d+) file operations offloaded", result.stderr) == ["0", "0"]


def test_progress_off_starts_no_thread(build):
    program = program_path(build, "test_p2p_nonblocking")
    result = launch(build, 2, [program], env={"TANDEM_VERBOSE": "2", "TANDEM_EAGER_LIMIT": "0"})
    assert result.returncode == 0, result.stderr
    assert "  TANDEM_PROGRESS=off (default)" in result.stderr
    assert "polls" not in result.stderr and "progress thread" not in result.stderr


def test_bad_progress_cpu_list_warns_and_falls_back(build):
    program = program_path(build, "test_init_thread")
    env = {"TANDEM_PROGRESS": "drive", "TANDEM_PROGRESS_CPUS": "1-3"}
    result = launch(build, 2, [program], env=env)
    assert result.returncode == 0, result.stderr
    assert (
        "TANDEM_PROGRESS_CPUS=1-3 is not valid: expected auto, share, none, or a list of CPU "
        "numbers such as 2,3 or 2_3; using auto"
    ) in result.stderr


def test_progress_thread_sleeps_while_nothing_is_outstanding(build):
    """The thread's CPU time, reported at MPI_Finalize, while the program only computes."""
    program = program_path(build, "test_compute_only")
    env = {"TANDEM_PROGRESS": "drive", "TANDEM_VERBOSE": "2"}
    result = launch(build, 2, [program], env=env)
    assert result.returncode == 0, result.stderr
    shares = [float(n) for n in re.findall(r"ms CPU in [\d.]+ s \(([\d.]+)%\)", result.stderr)]
    assert len(shares) == 2, result.stderr
    assert all(share < 1.0 for share in shares), result.stderr


UCX_DRIVEN = r"tandem\[(\d+)\]: MPI_Finalize: drove 1 UCX worker \d+ times"


def test_finalize_drives_ucx_while_the_mpi_library_closes_its_endpoints(build):
    """MPICH 4.0 over UCX's TCP transport: a rank whose endpoint close in
    MPI_Finalize needs a peer's UCX worker waits for peers already in the
    final PMI barrier, and without Tandem 9-11 of 20 such 4-rank runs hung
    here (docs/perf/finalize-hang). With Tandem a thread drives the worker
    meanwhile: every run exits, and every rank reports it. Open MPI's ob1
    closes no UCX endpoint: nothing to drive."""
    program = [program_path(build, "test_init_thread")]
    env = {"TANDEM_VERBOSE": "2", "UCX_TLS": "self,tcp", "MPIR_CVAR_NOLOCAL": "1"}
    if build.family != "MPICH":
        result = launch(build, 2, program, env=env)
        assert result.returncode == 0, result.stderr
        assert not re.findall(UCX_DRIVEN, result.stderr), result.stderr
        return
    for _ in range(8):
        result = launch(build, 4, program, env=env)
        assert result.returncode == 0, result.stderr
        assert sorted(re.findall(UCX_DRIVEN, result.stderr)) == ["0", "1", "2", "3"], result.stderr


def network_settings(build) -> dict[str, str]:
    """Rank variables that carry every message over loopback TCP (as between
    nodes), read by each rank from its environment. Only runs with Tandem use
    them: MPICH 4.0.2 alone over UCX's TCP sometimes hangs in MPI_Finalize,
    which Tandem prevents (docs/KNOWN_ISSUES.md)."""
    if build.family == "Open MPI":
        return {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,tcp"}
    return {"UCX_TLS": "self,tcp", "MPIR_CVAR_NOLOCAL": "1"}


def blocked_sleeps(build, env: dict[str, str], borrow: bool = False) -> int:
    """How many times a rank blocked in a 1 MiB MPI_Recv went to sleep (its
    thread's voluntary context switches) while its sender slept for 300 ms
    (with 'borrow', the sender has a receive outstanding meanwhile: its
    progress thread has work). A spinning wait hardly ever sleeps, a lending
    one sleeps between its polls (1400-2200 times here): unlike the share of
    the wall time it spends on its CPU (0.15-0.25 when spinning beside other
    jobs on these 2 cores, where fixed thresholds on it failed), this does
    not depend on how busy the machine is."""
    program = [program_path(build, "test_blocked_cpu")] + (["borrow"] if borrow else [])
    result = launch(build, 2, program, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    found = re.search(
        r"received 1048576 bytes from 0, all right: wall ([\d.]+) s cpu [\d.]+ s sleeps (\d+)",
        result.stdout,
    )
    assert found, result.stdout + result.stderr
    assert float(found.group(1)) > 0.25, result.stdout
    return int(found.group(2))


LENDS = 50  # a lending wait sleeps more often than this in 300 ms, a spinning one less


def test_a_lending_receive_leaves_its_core_idle(build):
    """TANDEM_WAIT=lend: the receive polls with sleeps; spin: the MPI library
    spins. auto, with a progress thread without a core of its own
    (TANDEM_PROGRESS_CPUS=none), lends over a network transport only while a
    progress thread of the node has work; it never lends between node mates
    that share memory, where the MPI library copies the message. The node is
    the host: MPICH with MPIR_CVAR_NOLOCAL=1 makes each rank a shared-memory
    domain of its own (MPI_Comm_split_type), and its ranks still lend to
    each other."""
    base = {"TANDEM_PROGRESS": "drive", "TANDEM_PROGRESS_CPUS": "none"}
    network = dict(base, **network_settings(build))
    assert blocked_sleeps(build, dict(network, TANDEM_WAIT="lend")) > LENDS
    assert blocked_sleeps(build, dict(network, TANDEM_WAIT="spin"), borrow=True) < LENDS
    assert blocked_sleeps(build, network) < LENDS
    assert blocked_sleeps(build, network, borrow=True) > LENDS
    assert blocked_sleeps(build, base, borrow=True) < LENDS


def test_a_lending_wait_sleeps_while_a_thread_is_pinned_to_its_core(build):
    """Where threads move to lent CPUs (TANDEM_PROGRESS_CPUS=share), a lending
    receive sleeps while the progress thread of the other rank, whose
    application sleeps outside MPI with a receive outstanding, is pinned to
    its core (the node's guest slot), and spins when no thread has work."""
    network = dict(
        {"TANDEM_PROGRESS": "drive", "TANDEM_PROGRESS_CPUS": "share"}, **network_settings(build)
    )
    assert blocked_sleeps(build, network, borrow=True) > LENDS
    assert blocked_sleeps(build, network) < LENDS


def sleeps_on_cpus(build, cpus: str, env: dict[str, str], mode: str = "") -> int:
    """blocked_sleeps for a launch whose two ranks may run on 'cpus' only
    (taskset on the launcher, which the ranks inherit; Open MPI told not to
    bind them): '0' stands for a host with fewer CPUs than ranks. 'mode'
    "wait": the receive waits in MPI_Irecv + MPI_Wait."""
    program = [program_path(build, "test_blocked_cpu")] + ([mode] if mode else [])
    unbound = ["--bind-to", "none"] if build.family == "Open MPI" else []
    command = ["taskset", "-c", cpus] + launch_command(build, 2, program, True, env, unbound)
    result = subprocess.run(
        command, capture_output=True, text=True, env=launcher_environment(build), timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    found = re.search(r"all right: wall ([\d.]+) s cpu [\d.]+ s sleeps (\d+)", result.stdout)
    assert found and float(found.group(1)) > 0.25, result.stdout + result.stderr
    return int(found.group(2))


def test_auto_waits_sleep_where_the_hosts_ranks_outnumber_its_cpus(build):
    """TANDEM_PROGRESS=auto on one host runs no progress thread; where the
    host's ranks outnumber the CPUs they may run on (here both ranks on CPU
    0), a blocked MPI_Recv and MPI_Wait poll and sleep between their polls
    (TANDEM_WAIT=auto), which TANDEM_VERBOSE=1 says with the reason; with a
    CPU per rank they spin inside the MPI library, as without Tandem.
    TANDEM_WAIT=spin keeps them spinning anywhere, lend makes them sleep
    anywhere."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs 2 CPUs: a CPU per rank")
    verbose = {"TANDEM_VERBOSE": "1"}
    for mode in ("", "wait"):
        assert sleeps_on_cpus(build, "0", {}, mode) > LENDS
        assert sleeps_on_cpus(build, "0-1", {}, mode) < LENDS
    assert sleeps_on_cpus(build, "0", {"TANDEM_WAIT": "spin"}, "wait") < LENDS
    assert sleeps_on_cpus(build, "0-1", {"TANDEM_WAIT": "lend"}, "wait") > LENDS
    program = program_path(build, "test_init_thread")
    crowded = launch(build, 4, ["taskset", "-c", "0", program], env=verbose)
    assert crowded.returncode == 0, crowded.stderr
    assert "TANDEM_PROGRESS=auto: off: all 4 ranks run on this host" in crowded.stderr
    said = "waits sleep between their polls (blocking sends and receives, MPI_Wait"
    assert said in crowded.stderr
    assert "all 4 ranks run on this host, on 1 CPU, where a wait that spun" in crowded.stderr
    roomy = launch(build, 2, [program], env=verbose)
    assert roomy.returncode == 0 and said not in roomy.stderr, roomy.stderr


def blocked_send(build, env: dict[str, str] | None) -> tuple[int, list[int]]:
    """test_blocked_cpu send: of rank 1's five 1 MiB MPI_Sends, each to rank 0
    which computes for 100 ms with the matching receive posted, how many
    returned before rank 0 began to wait; and how many times each rank's
    progress thread moved to a lent CPU (env None: without Tandem)."""
    program = [program_path(build, "test_blocked_cpu"), "send"]
    full = None if env is None else dict(env, TANDEM_VERBOSE="2")
    result = launch(build, 2, program, env=full, with_tandem=env is not None)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "received 5 x 1048576 bytes from 1, 5 right" in result.stdout, result.stdout
    sent = re.search(r"sent 5 x 1048576 bytes to 0, (\d) before the receiver waited", result.stdout)
    assert sent, result.stdout
    moves = {
        int(rank): int(n)
        for rank, n in re.findall(r"tandem\[(\d)\]: progress thread: .* (\d+) moves", result.stderr)
    }
    assert env is None or len(moves) == 2, result.stderr
    return int(sent.group(1)), [moves.get(0, 0), moves.get(1, 0)]


def test_a_blocked_sender_lends_its_core_to_the_receivers_thread(build):
    """Over the MPI library's shared memory the receiver copies a large
    message, so a rank blocked in MPI_Send has nothing to do: it lends its
    core, and the progress thread of the receiver, which computes, moves
    there (TANDEM_PROGRESS_CPUS=share: as on a node without a spare CPU) and
    completes the transfer before the receiver's MPI_Wait. Without Tandem
    every send waits for that MPI_Wait; with TANDEM_WAIT=spin the thread
    stays where the scheduler put it."""
    assert blocked_send(build, None)[0] == 0
    base = {"TANDEM_PROGRESS": "drive", "TANDEM_PROGRESS_CPUS": "share"}
    early, moves = blocked_send(build, base)
    # against the control's 0, with room for a busy machine (3 of 5 was seen)
    assert early >= 2 and moves[0] >= 1 and moves[1] == 0, (early, moves)
    assert blocked_send(build, dict(base, TANDEM_WAIT="spin"))[1] == [0, 0]


def test_ranks_kept_off_shared_memory_still_share_their_host(build):
    """Over a network transport between ranks of one host (Open MPI's TCP
    BTL; MPICH with MPIR_CVAR_NOLOCAL=1, which makes each rank a shared-memory
    domain of its own) the node is still the host: a CPU list is dealt out by
    the rank's place on the host, and a blocked sender's core is seen by the
    receiver's progress thread, which moves there."""
    program = program_path(build, "test_compute_only")
    env = dict(network_settings(build), TANDEM_PROGRESS="drive", TANDEM_VERBOSE="2")
    result = launch(build, 2, [program], env=dict(env, TANDEM_PROGRESS_CPUS="0,1"))
    assert result.returncode == 0, result.stderr
    pinned = dict(re.findall(r"tandem\[(\d)\]: progress thread pinned to CPU (\d+)", result.stderr))
    assert pinned == {"0": "0", "1": "1"}, result.stderr
    base = dict(network_settings(build), TANDEM_PROGRESS="drive", TANDEM_PROGRESS_CPUS="share")
    early, moves = blocked_send(build, base)
    # without Tandem none returns early; 3 of 5 was seen beside a fresh-clone CI's builds
    assert early >= 2 and moves[0] >= 1 and moves[1] == 0, (early, moves)


@pytest.mark.parametrize(
    ("size", "eager_limit", "unwoken"),
    [(65536, "auto", True), (65537, "auto", False), (4096, "0", False)],
)
def test_small_collectives_are_posted_without_waking_the_thread(build, size, eager_limit, unwoken):
    """A 2-rank ibcast is one round of one message: at most TANDEM_EAGER_LIMIT
    bytes (64 KiB with the proxy strategy), it is left to the MPI library and
    the application's wait, like a point-to-point message of that size, and
    the thread is not woken for it; above, it is."""
    program = str(build.directory / "tandem-bench-coll-overlap")
    env = {
        "TANDEM_PROGRESS": "proxy",
        "TANDEM_COLL": "tandem",
        "TANDEM_COLL_SHM": "0",  # the shared-memory path needs the thread
        "TANDEM_EAGER_LIMIT": eager_limit,
        "TANDEM_VERBOSE": "2",
    }
    result = launch(build, 2, [program, "ibcast", str(size), "3"], env=env)
    assert result.returncode == 0, result.stderr
    counts = re.findall(
        r"(\d+) collectives run \(\d+ finished in application calls, (\d+) posted without waking",
        result.stderr,
    )
    assert len(counts) == 2, result.stderr
    for run, left in counts:
        assert int(run) > 0 and int(left) == (int(run) if unwoken else 0), result.stderr


@pytest.mark.parametrize("shm", ["1", "0"])
def test_verbose_counts_the_collectives_through_the_slots(build, shm):
    """TANDEM_VERBOSE=2 says how many collectives took the shared-memory
    slots: on 3 ranks of one node, the broadcasts, gathers, allgathers and
    allreduces of test_coll_nonblocking (shared on more than 2 ranks); none
    with TANDEM_COLL_SHM=0."""
    env = {
        "TANDEM_PROGRESS": "proxy",
        "TANDEM_COLL": "tandem",
        "TANDEM_COLL_SHM": shm,
        "TANDEM_VERBOSE": "2",
    }
    result = launch(build, 3, [program_path(build, "test_coll_nonblocking")], env=env)
    assert result.returncode == 0, result.stderr
    counts = re.findall(
        r"(\d+) collectives run \(.*, (\d+) through the shared-memory slots\)", result.stderr
    )
    assert len(counts) == 3, result.stderr
    for run, slots in counts:
        assert int(run) > 0 and (0 < int(slots) < int(run) if shm == "1" else int(slots) == 0)
