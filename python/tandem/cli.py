"""tandem: run MPI programs with Tandem preloaded.

tandem run [-n N] [--mpi openmpi|mpich] [-e NAME=VALUE] [--] ./app args
tandem exec ./app args          (under a launcher: mpirun -n 4 tandem exec ./app)
tandem info
tandem run --monitor[=PREFIX] ./app   (then: tandem report PREFIX)
tandem place PREFIX --hosts H --cores C -o MAPPING   (then: tandem run --placement MAPPING)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import __version__, hosts, virt
from .builds import (
    TandemError,
    default_build_root,
    find_program,
    load_builds,
    select_build,
)
from .launch import (
    Stopped,
    ending_signals_stop,
    launch_command,
    launcher_environment,
    launcher_variables,
    placement_arguments,
    rank_environment,
    run_in_foreground,
    started_by,
)
from .shaping import rate_bits

MONITOR_PREFIX = "tandem-monitor"  # PREFIX of a bare --monitor, in the current directory


def parse_env(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise TandemError(f"-e {pair!r}: expected NAME=VALUE")
        env[name] = value
    return env


def tandem_env(args: argparse.Namespace) -> dict[str, str]:
    """The rank variables of -e NAME=VALUE and of the shorthand options."""
    env = parse_env(getattr(args, "env", []))
    if args.progress:
        env["TANDEM_PROGRESS"] = args.progress
    prefix = monitor_prefix(args)
    if prefix is not None:
        env["TANDEM_MONITOR"] = "1"
        env["TANDEM_MONITOR_OUTPUT"] = str(prefix)
    return env


TRUE = ("1", "true", "yes", "on")  # what Tandem's boolean variables accept as true


def settings_line(env: dict[str, str]) -> str:
    """What Tandem does in a run, and how to turn on the rest, in one line;
    'env' holds the ranks' variables from tandem's options, which override
    those of this environment (the ranks inherit it)."""

    def value(name: str, default: str) -> str:
        return env.get(name, os.environ.get(name, default)).strip().lower()

    if value("TANDEM_DISABLE", "0") in TRUE:
        return "tandem: disabled by TANDEM_DISABLE: every MPI call goes straight to the MPI library"
    progress = value("TANDEM_PROGRESS", "auto")
    if progress == "auto":
        parts = ["progress auto (on where the ranks span hosts; --progress drive|proxy forces it)"]
    elif progress == "off":
        parts = ["progress off (--progress drive|proxy)"]
    else:
        parts = [f"progress {progress}"]
    if value("TANDEM_COLL", "native") == "tandem":
        parts.append("collectives by Tandem")
    else:
        parts.append("collectives by the MPI library (-e TANDEM_COLL=tandem)")
    if value("TANDEM_MONITOR", "0") in TRUE:
        output = env.get("TANDEM_MONITOR_OUTPUT", os.environ.get("TANDEM_MONITOR_OUTPUT"))
        parts.append(f"monitoring into {output}.json" if output else "monitoring on")
    else:
        parts.append("monitoring off (--monitor)")
    return "tandem: " + ", ".join(parts) + "; --quiet hides this line"


def monitor_prefix(args: argparse.Namespace) -> Path | None:
    """The absolute PREFIX of --monitor[=PREFIX], or None without --monitor."""
    prefix = getattr(args, "monitor", None)
    if prefix is None:
        return None
    if not prefix:
        raise TandemError("--monitor=: the prefix is empty; give --monitor=PREFIX or --monitor")
    if prefix == MONITOR_PREFIX:
        return free_prefix(Path(os.path.abspath(prefix)))
    return Path(os.path.abspath(prefix))


def make_directory_of(prefix: Path, args: argparse.Namespace) -> None:
    """Make the directory of --monitor's PREFIX where it is missing: the
    library writes its files there and makes no directory."""
    try:
        prefix.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise TandemError(
            f"--monitor={args.monitor}: cannot make the directory {prefix.parent}: {error.strerror}"
        ) from None


def free_prefix(prefix: Path) -> Path:
    """The default PREFIX, or PREFIX-N for the first N whose files do not exist:
    as the library does, never overwrite files the user did not name."""
    candidate, n = prefix, 0
    while (
        candidate.with_name(candidate.name + ".json").exists()
        or candidate.with_name(candidate.name + ".0.prof").exists()
    ):
        n += 1
        candidate = prefix.with_name(f"{prefix.name}-{n}")
    return candidate


def strip_dashdash(program: list[str]) -> list[str]:
    if program and program[0] == "--":
        program = program[1:]
    if not program:
        raise TandemError("no program given")
    return program


def check_hosts_options(args: argparse.Namespace) -> None:
    """--hosts and --link, and what the machine needs for them, before
    anything is made."""
    if args.link is not None and args.hosts is None:
        raise TandemError("--link shapes the links of simulated hosts: give --hosts H too")
    if args.hosts is None:
        return
    if not 1 <= args.hosts <= hosts.MAX_HOSTS:
        raise TandemError(f"--hosts {args.hosts}: expected 1 to {hosts.MAX_HOSTS} hosts")
    if args.link is not None:
        rate_bits(args.link, "--link")
    missing = hosts.missing_requirements(args.link)
    if missing:
        raise TandemError(missing)


def hosts_line(net: hosts.Hosts, nprocs: int) -> str:
    """Where the ranks run, in one line."""
    placed, first = [], 0
    for host, count in zip(net.hosts, hosts.placement(nprocs, net.count)):
        ranks = "no rank" if count == 0 else f"rank {first}" if count == 1 else None
        placed.append(f"{host.name} ({ranks or f'ranks {first}-{first + count - 1}'})")
        first += count
    link = f"links of {net.link}" if net.link else "links unshaped (--link RATE)"
    cpus = (
        "CPUs " + " | ".join(hosts.cpu_list(c) for c in net.cpu_sets)
        if net.cpu_sets
        else "every CPU shared"
    )
    return f"tandem: {len(placed)} hosts: {', '.join(placed)}; {link}; {cpus}"


def command_run(args: argparse.Namespace) -> int:
    if args.monitor is not None and args.no_tandem:
        raise TandemError(
            "--monitor needs Tandem: the monitor is part of libtandem; drop --no-tandem"
        )
    program = strip_dashdash(args.program)
    if not program:
        raise TandemError("no program given: tandem run [options] PROGRAM [ARGS]")
    root = Path(args.builds)
    path = find_program(program[0])
    build = select_build(path, load_builds(root), args.mpi, root)
    if args.virtual is not None:
        return virt.run_virtual(args, build, path, program)
    placement = placement_of_run(args)
    nprocs = args.nprocs if args.nprocs is not None else 1
    if placement is not None:
        if args.nprocs is not None and args.nprocs != placement.ranks:
            raise TandemError(
                f"-n {args.nprocs}: the mapping {args.placement} places {placement.ranks} ranks; "
                f"give -n {placement.ranks} or leave -n out"
            )
        if args.ghosts:
            raise TandemError(
                "--ghosts with --placement: not combined yet; the mapping places the program's "
                "ranks and has no core for progress processes (drop one of them)"
            )
        nprocs = placement.ranks
    if nprocs < 1:
        raise TandemError(f"-n {nprocs}: the number of processes must be at least 1")
    if not 0 <= args.ghosts <= 64:
        raise TandemError(f"--ghosts {args.ghosts}: expected 0 to 64 progress processes per host")
    if args.ghosts and args.no_tandem:
        raise TandemError(
            "--ghosts needs Tandem: its progress processes are libtandem's; drop it or --no-tandem"
        )
    check_hosts_options(args)
    if args.hosts is not None and placement is not None:
        if args.host_names is not None:
            raise TandemError(
                "--host-names with --hosts: the mapping's hosts become the simulated hosts "
                "h1, h2, ... in order; drop --host-names"
            )
        if len(placement.hosts) > args.hosts:
            raise TandemError(
                f"--hosts {args.hosts}: the mapping {args.placement} places ranks on "
                f"{len(placement.hosts)} hosts; give --hosts {len(placement.hosts)} or more"
            )
    prefix = monitor_prefix(args)
    env = tandem_env(args)
    if args.ghosts:  # launched beside the ranks, last on the host (core/world.h)
        env["TANDEM_GHOSTS"] = str(args.ghosts)
    words = [str(path)] + program[1:]
    if args.hosts is not None:  # G progress processes on each host, last on it
        return run_on_hosts(
            args, build, nprocs + args.ghosts * args.hosts, words, prefix, env, placement
        )
    if placement is None:
        command = launch_command(
            build, nprocs + args.ghosts, words, not args.no_tandem, env, args.launcher_arg
        )
        return launch_run(args, build, command, prefix, env)
    directory = Path(tempfile.mkdtemp(prefix="tandem-placement-"))
    try:
        placed, words = placement_arguments(build, placement, words, directory)
        count = nprocs if words else None  # Hydra's -configfile says it per line
        launcher_args = placed + args.launcher_arg
        command = launch_command(build, count, words, not args.no_tandem, env, launcher_args)
        return launch_run(args, build, command, prefix, env)
    finally:
        if not args.dry_run:  # a dry run's line names the files: they stay
            shutil.rmtree(directory, ignore_errors=True)


def placement_of_run(args: argparse.Namespace):
    """The --placement MAPPING of tandem run on the hosts of --host-names, or None."""
    from . import mapping

    if args.placement is None:
        if args.host_names is not None:
            raise TandemError("--host-names: it names the hosts of --placement MAPPING; give one")
        return None
    placement = mapping.load_placement(args.placement)
    if args.host_names is not None:
        names = mapping.host_names(len(placement.hosts), args.host_names)
        placement = mapping.with_hosts(placement, names)
    return placement


def run_on_hosts(args, build, nprocs: int, words: list[str], prefix, env, placement=None) -> int:
    """tandem run --hosts: the launch on hosts made for it, which exist only
    while tandem runs (so no --dry-run), and go however it ends. With a
    placement, its host i is simulated host i + 1 and each rank starts on
    the core it names there (core c of a host of its own CPUs is the c-th of
    them)."""
    from . import mapping

    if args.dry_run:
        raise TandemError(
            "--dry-run cannot show a launch on --hosts: the hosts, and the agent their "
            "launcher needs, exist only while tandem runs"
        )
    with ending_signals_stop(), on_hosts(args.hosts, args.link) as net:
        placed, launcher_args, count = [], args.launcher_arg, nprocs
        if placement is not None:
            placement = mapping.with_hosts(placement, [h.name for h in net.hosts])
            placement = mapping.on_cpus(placement, net.cpu_sets)
            placed, words = placement_arguments(build, placement, words, net.directory)
            if net.cpu_sets and build.family == "Open MPI":  # the rankfile's CPUs, by number
                placed += ["--mca", "rmaps_rank_file_physical", "1"]
            launcher_args = placed + args.launcher_arg
            count = nprocs if words else None  # Hydra's -configfile says it per line
        command = net.launch_command(
            build,
            count,
            words,
            not args.no_tandem,
            env,
            launcher_args,
            placed=placement is not None,
        )
        if not args.quiet:
            print(hosts_line(net, nprocs), file=sys.stderr)
        return launch_run(args, build, command, prefix, env)


def launch_run(args, build, command: list[str], prefix: Path | None, env: dict[str, str]) -> int:
    """Run tandem run's launcher command (or print it), then the monitor's report."""
    if args.dry_run:  # a line to paste into a shell
        added = [
            f"{name}={shlex.quote(value)}" for name, value in launcher_variables(build).items()
        ]
        print(" ".join(added + [shlex.join(command)]))
        return 0
    if prefix is not None:
        make_directory_of(prefix, args)
    if not args.quiet and not args.no_tandem:
        print(settings_line(env), file=sys.stderr)
    if prefix is None:
        return run_in_foreground(command, launcher_environment(build))
    job_file = prefix.with_name(prefix.name + ".json")
    before = job_file.stat().st_mtime_ns if job_file.exists() else None
    status = run_in_foreground(command, launcher_environment(build))
    if status != 0:  # a failure, or a signal: no report
        return status
    if not job_file.exists() or job_file.stat().st_mtime_ns == before:
        print(f"tandem: {job_file} was not written; no monitor report", file=sys.stderr)
        return 0
    return print_report(prefix, None)


def on_hosts(count: int | None, link: str | None):
    """The simulated hosts of --hosts for a with block, or None without it."""
    return hosts.Hosts(count, link) if count is not None else contextlib.nullcontext()


def command_hosts(args: argparse.Namespace) -> int:
    """List the runs' hosts on this machine; with --clean, remove those whose
    tandem is gone."""
    if os.geteuid() != 0:
        raise TandemError(
            f"tandem hosts needs root: the runs' files in {hosts.STATE_ROOT} are root's"
        )
    found = hosts.runs()
    if not found:
        print(f"tandem hosts: none ({hosts.STATE_ROOT} holds no run)")
        return 0
    for run in found:
        names = ", ".join(run.hosts) or "hosts not made"
        if run.owner_alive:
            print(f"{run.directory.name}: {names}; in use by tandem (pid {run.record['owner']})")
        elif args.clean:
            ended = hosts.clean(run)
            print(
                f"{run.directory.name}: {names}; its tandem is gone: removed, {ended} processes ended"
            )
        else:
            print(f"{run.directory.name}: {names}; its tandem is gone (tandem hosts --clean)")
    return 0


def print_report(prefix: str | Path, out_dir: str | None) -> int:
    """Write the report of PREFIX.json; print its summary and the files written."""
    from . import report

    job = report.load(prefix)
    written = report.write_report(job, prefix, out_dir)
    print(report.summary(job), end="")
    print("\nwritten:")
    for path in written:
        print(f"  {path}")
    return 0


def command_report(args: argparse.Namespace) -> int:
    return print_report(args.prefix, args.out)


def parse_stencil(args: argparse.Namespace):
    """The stencil's sizes of tandem model and tandem bench virt."""
    from .model import Stencil

    try:
        gx, gy = (int(n) for n in args.grid.split(","))
    except ValueError:
        raise TandemError(f"--grid {args.grid}: expected GX,GY, such as 8192,128") from None
    if gx < 1 or gy < 1:
        raise TandemError(f"--grid {args.grid}: expected two positive point counts")
    if args.kmax < 0:
        raise TandemError(f"--kmax {args.kmax}: expected 0 or more iterations")
    if args.halo < 1:
        raise TandemError(f"--halo {args.halo}: expected 1 or more rows")
    return Stencil(gx, gy, args.kmax, args.halo)


def parse_ratios(text: str, option: str = "--v") -> list[int]:
    try:
        values = [int(n) for n in text.split(",")]
    except ValueError:
        values = [0]
    if any(not 1 <= n <= 64 for n in values):
        raise TandemError(f"{option} {text}: expected ranks per core from 1 to 64, such as 1,2,4,8")
    return values


def calibration_path(args: argparse.Namespace, build) -> Path:
    if args.calibration:
        return Path(args.calibration)
    return Path(args.builds) / f"model-{build.directory.name}.json"


def command_model(args: argparse.Namespace) -> int:
    from . import model

    build = virt.virt_build(load_builds(Path(args.builds)), args.mpi)
    stencil = parse_stencil(args)
    path = calibration_path(args, build)
    if args.action == "calibrate":
        rate_bits(args.link, "--link")  # a clear error before anything runs
        with ending_signals_stop():
            calibration = model.calibrate(build, args.link, stencil, args.timeout)
        model.save(calibration, path)
        print(json.dumps(model.asdict(calibration), indent=1))
        print(f"tandem model: calibration written to {path}")
        return 0
    if args.hosts < 1 or args.cores < 1:
        option = "--hosts" if args.hosts < 1 else "--cores"
        raise TandemError(f"{option} {getattr(args, option[2:])}: expected 1 or more")
    vs = parse_ratios(args.v) if args.v else None
    print(model.table(model.load(path), stencil, args.hosts, args.cores, args.formula, vs))
    return 0


def command_place(args: argparse.Namespace) -> int:
    """tandem place: a mapping from a monitored run, or a MAPPING written as
    an Open MPI rankfile or Hydra's host and binding lists."""
    import numpy as np

    from . import mapping as mapping_file
    from . import place, report

    writers = [w for w in ("rankfile", "hydra") if getattr(args, w)]
    if len(writers) > 1:
        raise TandemError("--rankfile and --hydra: give one; each writes its own file")
    if writers:
        if args.prefix is not None:
            raise TandemError(
                f"{args.prefix}: --{writers[0]} writes an existing MAPPING; no PREFIX with it"
            )
        mapping = mapping_file.load_placement(getattr(args, writers[0]))
        if args.host_names:
            names = mapping_file.host_names(len(mapping.hosts), args.host_names)
            mapping = mapping_file.with_hosts(mapping, names)
        text = (
            mapping_file.rankfile(mapping)
            if writers[0] == "rankfile"
            else mapping_file.hydra_text(mapping)
        )
        if args.output in (None, "-"):
            print(text, end="")
        else:
            Path(args.output).write_text(text)
            print(f"tandem place: {writers[0]} of {getattr(args, writers[0])} in {args.output}")
        return 0
    if args.prefix is None:
        raise TandemError(
            "no PREFIX: expected the record of a run with --monitor=PREFIX (PREFIX.json), "
            "Open MPI's monitoring files (PREFIX.<rank>.prof), a TreeMatch matrix (FILE.mat), "
            "or --rankfile/--hydra MAPPING"
        )
    if args.output is None:
        raise TandemError("no -o MAPPING: expected the file to write the mapping into")
    if args.kind not in place.KINDS:
        raise TandemError(
            f"--kind {args.kind}: not known; expected one of {', '.join(place.KINDS)}"
        )
    if args.algorithm not in place.ALGORITHMS:
        raise TandemError(
            f"--algorithm {args.algorithm}: not known; expected one of {', '.join(place.ALGORITHMS)}"
        )
    if args.message_cost < 0:
        raise TandemError(f"--message-cost {args.message_cost:g}: expected 0 or more bytes")
    traffic = place.read_traffic(args.prefix, args.kind, args.message_cost)
    weight, ranks = traffic.weight, len(traffic.weight)
    hosts = 1 if args.hosts is None else args.hosts
    if args.topology is not None:
        if args.cores is not None:
            raise TandemError("--cores and --topology: give one; the topology has its cores")
        machine = place.machine_from_topology(args.topology, hosts, args.host_names)
    else:
        cores = args.cores if args.cores is not None else -(-ranks // max(hosts, 1))
        machine = place.machine_from_shape(hosts, cores, args.host_names)
    start = time.perf_counter()
    leaf_of_rank = place.place(weight, machine, args.algorithm)
    seconds = time.perf_counter() - start
    identity = place.cost(weight, np.arange(ranks), machine)
    chosen = place.cost(weight, leaf_of_rank, machine)
    extra = {
        "record": traffic.source,
        "kind": args.kind,
        "message_cost": args.message_cost,
        "topology": {"levels": machine.levels, "arities": machine.arities},
        "cost": {"identity": identity.as_dict(), args.algorithm: chosen.as_dict()},
    }
    mapping = place.placement_of(leaf_of_rank, machine, args.algorithm, extra)
    mapping.write(args.output)
    print(
        f"tandem place: {ranks} ranks of {traffic.source}, traffic {traffic.what}, "
        f"on {machine.describe()}"
    )
    rows = []
    for name, found in (("identity (rank r on core r)", identity), (args.algorithm, chosen)):
        ratio = found.hop_bytes / identity.hop_bytes if identity.hop_bytes else 1.0
        rows.append(
            [name, f"{found.hop_bytes:.0f}", f"{ratio:.3f}", f"{100 * found.host_share:.1f}%"]
        )
    print("\n".join(report.table(["layout", "hop-bytes", "vs identity", "across hosts"], rows)))
    print(f"  {args.algorithm} took {seconds:.2f} s; mapping in {args.output}")
    return 0


def command_device_report(args: argparse.Namespace) -> int:
    from . import device

    results = Path(args.results)
    if not (results / "node.json").exists():
        raise TandemError(f"{results} holds no node.json: give the $OUT of bench/device.sh")
    targets = device.report(results, Path(args.out) if args.out else None)
    print(targets.read_text(), end="")
    print(f"tables, summary.json and targets.txt in {targets.parent}")
    return 0


def command_exec(args: argparse.Namespace) -> int:
    program = strip_dashdash(args.program)
    root = Path(args.builds)
    path = find_program(program[0])
    build = select_build(path, load_builds(root), args.mpi, root)
    launcher = started_by(os.environ)
    if launcher and launcher[0] != build.family and os.environ[launcher[1]] == "0":
        print(
            f"tandem: warning: {launcher[1]} says that {launcher[0]}'s launcher started "
            f"{path}, which runs with {build.family}: each of its processes runs alone, as "
            f"rank 0 of 1; start it with {build.launcher} or tandem run",
            file=sys.stderr,
        )
    prefix = monitor_prefix(args)
    if prefix is not None:
        make_directory_of(prefix, args)
    env = dict(os.environ)
    env.update(tandem_env(args))
    env.update(rank_environment(build, True, {"LD_PRELOAD": env.get("LD_PRELOAD", "")}))
    os.execve(str(path), [str(path)] + program[1:], env)
    return 127  # not reached


def command_info(args: argparse.Namespace) -> int:
    root = Path(args.builds)
    builds = load_builds(root)
    print(f"tandem {__version__}; builds in {root}")
    if not builds:
        print("  none: run `make` to build Tandem for Open MPI and MPICH")
        return 1
    for build in builds:
        print(f"  {build.directory.name}: {build.library}")
        print(f"    MPI family: {build.family}")
        print(f"    MPI library: {build.mpi_library}")
        print(f"    launcher: {build.launcher}")
        if build.sanitize:
            print(f"    sanitizers: {build.sanitize}")
        if build.probe is not None:
            probe = subprocess.run(
                [str(build.probe)],
                capture_output=True,
                text=True,
                env=launcher_environment(build),
                timeout=60,
                check=False,
            )
            for line in probe.stdout.splitlines():
                print(f"    {line}")
            if probe.returncode != 0:
                print(f"    (the MPI probe failed: {probe.stderr.strip()[:200]})")
    return 0


def command_doctor(args: argparse.Namespace) -> int:
    from .doctor import doctor

    builds = load_builds(Path(args.builds))
    if args.mpi:
        builds = [b for b in builds if b.directory.name == args.mpi]
    if not builds:
        print(f"no Tandem build in {args.builds}: run `make` to build one per MPI")
        return 1
    print(doctor(builds, args.nprocs))
    return 0


def command_bench(args: argparse.Namespace) -> int:
    from . import bench

    root = Path(args.builds)
    builds = [b for b in load_builds(root) if not b.sanitize]
    if args.mpi:
        builds = [b for b in builds if b.option in args.mpi]
    if not builds:
        raise TandemError(f"no libtandem build found in {root}; run `make` first")
    if args.which == "virt":
        return command_bench_virt(args, builds)
    transports = args.transports.split(",")
    bad = [t for t in transports if t not in ("shm", "tcp", "shaped", "hosts")]
    if bad:
        raise TandemError(
            f"--transports {args.transports}: {bad[0]!r} is not one of shm, tcp, shaped, hosts"
        )
    if "hosts" in transports and args.hosts is None:
        raise TandemError(f"--transports {args.transports}: hosts needs --hosts H (2 or more)")
    bench.rate_bits(args.rate)  # a clear error before any run
    for option, settings, into in (
        ("--also", args.also, bench.also_env),
        ("-e", args.env, bench.every_env),
    ):
        into.clear()
        for setting in settings:
            name, equals, value = setting.partition("=")
            if not equals or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise TandemError(
                    f"{option} {setting}: expected VAR=VALUE, such as "
                    + ("TANDEM_POLL=event" if option == "--also" else "OMPI_MCA_pml=ucx")
                )
            into[name] = value
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        raise TandemError(
            f"--sizes {args.sizes}: expected byte counts separated by commas"
        ) from None
    ranks_text = args.ranks or ("2,4" if args.which == "apps" else "1,2,4")
    try:
        ranks = [int(n) for n in ranks_text.split(",")]
    except ValueError:
        raise TandemError(f"--ranks {ranks_text}: expected rank counts such as 1,2,4") from None
    if any(n < 1 for n in ranks):
        raise TandemError(f"--ranks {ranks_text}: a rank count must be at least 1")
    if args.which != "apps" and (args.npb or args.npb_build or args.apps or args.configs):
        raise TandemError("--npb, --npb-build, --apps and --configs belong to tandem bench apps")
    if args.which == "place":
        return command_bench_place(args, builds)
    check_hosts_options(args)
    if args.hosts is not None:
        if args.which in ("io", "monitor", "apps"):
            raise TandemError(f"--hosts: tandem bench {args.which} runs on one host only")
        if "hosts" not in transports:  # the hosts beside one host's own transports
            transports.append("hosts")
    # io, monitor and apps run on the MPI's own transports of one host only
    if "shaped" in transports and args.which not in ("io", "monitor", "apps"):
        bench.shaped_network(args.rate)
    out = Path(args.out or time.strftime(f"tandem-bench-{args.which}-%Y%m%d-%H%M%S")).absolute()
    with ending_signals_stop(), on_hosts(args.hosts, args.link) as net:
        bench.hosts_network = net
        try:
            path, pictures = run_benchmark(args, builds, transports, sizes, ranks, out)
        finally:
            bench.hosts_network = None
    table = path.with_suffix(".md")
    if table.exists():
        print(table.read_text())
    written = [str(path), table.name, *pictures]
    print(f"results: {', '.join(written[:-1])} and {written[-1]}")
    return 0


def command_bench_virt(args: argparse.Namespace, builds) -> int:
    """tandem bench virt: virtual ranks' micro-benchmarks and the stencil
    against processes of the real MPI, on this host or on --hosts H."""
    from . import bench, virtbench

    builds = [b for b in builds if (b.directory / "tandem-bench-virt-stencil").exists()]
    if not builds:
        raise TandemError("no build holds tandem-bench-virt-stencil: run `make build`")
    stencil = parse_stencil(args)
    if args.quick:  # a smoke test: seconds, not a measurement
        stencil.gx, stencil.gy = min(stencil.gx, 256), min(stencil.gy, 16)
    vs = parse_ratios(args.v or ("1,2" if args.quick else "1,2,4,8"))
    mpi_vs = parse_ratios(args.mpi_v, "--mpi-v") if args.mpi_v else None
    for name in ("steps", "rounds", "trials", "cores"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise TandemError(f"--{name} {getattr(args, name)}: expected 1 or more")
    if args.trials > 64:
        raise TandemError(f"--trials {args.trials}: expected at most 64")
    cores = args.cores or 1
    check_hosts_options(args)
    hosts_count = args.hosts or 1
    calibrations = {
        b.directory.name: Path(args.calibration) if args.calibration else calibration_path(args, b)
        for b in builds
    }
    out = Path(args.out or time.strftime("tandem-bench-virt-%Y%m%d-%H%M%S")).absolute()
    steps, trials, rounds = (2, 1, 1) if args.quick else (args.steps, args.trials, args.rounds)
    with ending_signals_stop(), on_hosts(args.hosts, args.link) as net:
        bench.hosts_network = net
        try:
            path = virtbench.run(
                builds,
                stencil,
                hosts_count,
                cores,
                vs,
                steps,
                trials,
                rounds,
                out,
                args.timeout,
                calibrations,
                quick=args.quick,
                mpi_vs=mpi_vs,
            )
        finally:
            bench.hosts_network = None
    print(path.with_suffix(".md").read_text())
    print(f"results: {path}, virt.md and virt.png")
    return 0


def command_bench_place(args: argparse.Namespace, builds) -> int:
    """tandem bench place: on simulated hosts it makes itself, 2 and 4 unless
    --hosts names one count, links shaped to --link (1gbit by default)."""
    from . import bench

    counts = [args.hosts] if args.hosts is not None else [2, 4]
    if any(not 2 <= n <= hosts.MAX_HOSTS for n in counts):
        raise TandemError(
            f"--hosts {args.hosts}: tandem bench place needs 2 to {hosts.MAX_HOSTS} hosts"
        )
    link = args.link or "1gbit"
    bench.rate_bits(link, "--link")
    kernels = args.kernels.split(",")
    bad = [k for k in kernels if k not in bench.PLACE_KERNELS]
    if bad:
        raise TandemError(
            f"--kernels {args.kernels}: {bad[0]!r} is not one of {', '.join(bench.PLACE_KERNELS)}"
        )
    try:
        sizes = [int(n) for n in args.place_ranks.split(",")]
    except ValueError:
        sizes = [0]
    if any(n < 1 for n in sizes):
        raise TandemError(
            f"--place-ranks {args.place_ranks}: expected rank counts such as 8,64,4096"
        )
    for name in ("halo_bytes", "steps", "rounds", "trials"):
        if getattr(args, name) < 1:
            option = "--" + name.replace("_", "-")
            raise TandemError(f"{option} {getattr(args, name)}: expected 1 or more")
    missing = hosts.missing_requirements(link)
    if missing:
        raise TandemError(f"tandem bench place runs on simulated hosts: {missing}")
    out = Path(args.out or time.strftime("tandem-bench-place-%Y%m%d-%H%M%S")).absolute()
    with ending_signals_stop():
        path = bench.place_bench(
            builds,
            counts,
            link,
            kernels,
            args.halo_bytes,
            args.steps,
            sizes,
            args.rounds,
            args.trials,
            out,
            args.timeout,
        )
    print(path.with_suffix(".md").read_text())
    print(f"results: {path}, {path.with_suffix('.md').name} and place.png")
    return 0


def run_benchmark(args, builds, transports, sizes, ranks, out) -> tuple[Path, list[str]]:
    """Run the benchmark args.which; its JSON's path and its pictures' names."""
    from . import bench

    if args.which == "apps":
        from . import apps

        chosen = apps.parse_apps(args.apps or apps.DEFAULT_APPS)
        names = args.configs.split(",") if args.configs else None
        unknown = [n for n in names or [] if n.partition("+")[0] not in apps.CONFIG_NAMES]
        if unknown:
            raise TandemError(
                f"--configs {args.configs}: {unknown[0]!r} is not one of "
                f"{', '.join(apps.CONFIG_NAMES)}"
            )
        path = apps.apps(
            builds,
            chosen,
            ranks,
            args.rounds,
            out,
            args.timeout,
            Path(args.npb) if args.npb else None,
            args.npb_build,
            (args.cells, args.halo_bytes, args.steps, args.trials),
            names,
        )
        pictures = ["apps.png"]
    elif args.which == "halo":
        path = bench.halo(
            builds,
            transports,
            ranks,
            args.cells,
            args.halo_bytes,
            args.steps,
            args.rounds,
            args.trials,
            out,
            args.timeout,
            args.rate,
        )
        pictures = ["halo.png"]
    elif args.which == "io":
        directory = Path(args.io_dir)
        if not directory.is_dir():
            raise TandemError(f"--io-dir {directory}: not a directory")
        path = bench.io(
            builds, ranks, args.io_bytes, args.rounds, args.trials, out, args.timeout, directory
        )
        pictures = ["io.png"]
    elif args.which == "post":
        path = bench.post(
            builds,
            transports,
            ranks,
            sizes,
            [int(n) for n in args.idle_us.split(",")],
            args.rounds,
            args.trials,
            out,
            args.timeout,
        )
        pictures = ["post.png"]
    elif args.which == "rma":
        flavours = args.windows.split(",")
        bad = [f for f in flavours if f not in ("allocate", "create")]
        if bad:
            raise TandemError(
                f"--windows {args.windows}: {bad[0]!r} is not one of allocate, create"
            )
        if not 0 <= args.work <= 60:
            raise TandemError(f"--work {args.work:g}: expected 0 to 60 seconds")
        path = bench.rma(
            builds,
            transports,
            sizes,
            args.work,
            flavours,
            args.rounds,
            args.trials,
            out,
            args.timeout,
            args.rate,
        )
        pictures = ["rma_*.png"]
    elif args.which == "heat":
        heat_ranks = [n for n in ranks if n >= 2]
        if not heat_ranks:
            raise TandemError(f"--ranks {args.ranks}: heat needs 2 ranks or more")
        path = bench.heat(
            builds,
            transports,
            heat_ranks,
            args.cells,
            args.steps,
            args.rounds,
            args.trials,
            out,
            args.timeout,
            args.rate,
        )
        pictures = ["heat.png"]
    elif args.which == "smb":
        path = bench.smb(
            builds, transports, sizes, args.rounds, args.trials, out, args.timeout, args.rate
        )
        pictures = ["smb_*.png"]
    elif args.which == "nbc":
        path = bench.nbc(
            builds, transports, ranks, sizes, args.rounds, args.trials, out, args.timeout
        )
        pictures = ["nbc_*.png"]
    elif args.which == "ioapp":
        directory = Path(args.io_dir)
        if not directory.is_dir():
            raise TandemError(f"--io-dir {directory}: not a directory")
        path = bench.ioapp(
            builds,
            transports,
            ranks,
            [int(n) for n in args.ops.split(",")],
            args.input_mib,
            args.rounds,
            args.trials,
            out,
            args.timeout,
            directory,
        )
        pictures = ["ioapp_*.png"]
    elif args.which == "coll":
        path = bench.coll(
            builds, transports, sizes, args.rounds, args.trials, out, args.rate, args.timeout
        )
        pictures = ["coll_*.png"]
    elif args.which == "monitor":
        path = bench.monitor(
            builds,
            sizes,
            ranks,
            args.cells,
            args.halo_bytes,
            args.steps,
            args.rounds,
            args.trials,
            out,
            args.timeout,
        )
        pictures = ["monitor.png"]
    elif args.which == "latency":
        path = bench.latency(builds, transports, sizes, args.rounds, args.trials, out, args.timeout)
        pictures = []
    elif args.which == "eager":
        path = bench.overlap(
            builds,
            transports,
            sizes,
            args.rounds,
            args.trials,
            out,
            args.rate,
            args.timeout,
            name="eager",
            configs_of=bench.eager_configs,
            table_from_bytes=0,
        )
        pictures = ["eager-*.png"]
    else:
        path = bench.overlap(
            builds, transports, sizes, args.rounds, args.trials, out, args.rate, args.timeout
        )
        pictures = ["overlap-*.png"]
    return path, pictures


LINEAGE = (
    "Tandem moves an MPI program's nonblocking operations in the background after "
    'APSM (Wittmann et al., "Asynchronous MPI for the Masses"), runs nonblocking '
    'collectives as schedules after FastMPJ (Ramos et al., "Nonblocking Collectives for '
    "Scalable Java Communications\"), and records who sends what to whom after Open MPI's "
    'monitoring (Bosilca et al., "Online Dynamic Monitoring of MPI Communications"). '
    "README.md and docs/ in Tandem's repository say more."
)

RUN_DESCRIPTION = """\
Launch PROGRAM on N ranks with the launcher of the MPI it is linked with (ldd
tells; --mpi names it for an interpreter such as python3), with libtandem
preloaded on every rank. Tandem's background progress runs where the ranks span
hosts (auto) unless --progress says otherwise; a line on stderr says what Tandem
does in the run (--quiet: none).
Variables of this environment reach the ranks; -e sets more."""

RUN_EXAMPLES = """\
examples:
  tandem run -n 4 ./app arg1 arg2                 # progress where ranks span hosts (auto)
  tandem run -n 4 --progress drive -- ./app       # a progress thread drives the MPI library
  tandem run -n 4 --progress proxy -- ./app       # the thread completes the operations
  tandem run -n 4 --progress proxy -e TANDEM_COLL=tandem ./app   # and runs the collectives
  tandem run -n 4 --monitor=out/job ./app         # then: tandem report out/job
  tandem run -n 2 --mpi mpich -- venv/bin/python script.py      # mpi4py
  tandem run -n 2 --launcher-arg --mca --launcher-arg btl --launcher-arg self,tcp ./app
  tandem run --placement job.map ./app            # each rank where tandem place put it
  tandem run -n 4 --dry-run ./app                 # print the launch, run nothing
  tandem run -n 4 --no-tandem ./app               # the same launch without Tandem"""


def add_rank_options(command: argparse.ArgumentParser, report: str) -> None:
    """The options of run and exec that set what the ranks get; 'report' says
    what run does after a monitored run."""
    command.add_argument(
        "--mpi", choices=["openmpi", "mpich"], help="the MPI, when ldd cannot tell"
    )
    command.add_argument(
        "-e",
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a variable on every rank (e.g. -e TANDEM_VERBOSE=1)",
    )
    command.add_argument(
        "--progress",
        choices=["auto", "off", "drive", "proxy"],
        help="background progress (sets TANDEM_PROGRESS; default auto: on where the ranks "
        "span hosts)",
    )
    command.add_argument(
        "--monitor",
        nargs="?",
        const=MONITOR_PREFIX,
        metavar="PREFIX",
        help="record who sends what to whom (sets TANDEM_MONITOR=1), write PREFIX.json "
        f"{report}(default PREFIX: ./{MONITOR_PREFIX}; write it as --monitor=PREFIX)",
    )


HOSTS_HELP = (
    "run on H hosts simulated on this machine (network namespaces with host names of their "
    "own, joined by a bridge; needs root): ranks block-wise, N/H per host"
)


def add_hosts_options(command: argparse.ArgumentParser, hosts_help: str = HOSTS_HELP) -> None:
    command.add_argument("--hosts", type=int, metavar="H", help=hosts_help)
    command.add_argument(
        "--link",
        metavar="RATE",
        help="with --hosts: limit every host's link to RATE each way (a tc rate such as "
        "2gbit; default: unshaped), through a token bucket of 256 KiB, or of BURST with "
        "RATE:BURST (a tc size such as 16kb: a smaller bucket lets fewer bytes through at "
        "the unshaped rate after a pause, as a real NIC of that rate)",
    )


def add_stencil_options(command: argparse.ArgumentParser) -> None:
    """The sizes of bench/virt_stencil.c (tandem model, tandem bench virt)."""
    command.add_argument(
        "--grid",
        default="8192,128",
        metavar="GX,GY",
        help="the stencil's global grid, points (default: %(default)s)",
    )
    command.add_argument(
        "--kmax",
        type=int,
        default=4,
        help="the stencil's iterations per point and step (default: %(default)s)",
    )
    command.add_argument(
        "--halo", type=int, default=2, help="rows or columns per message (default: %(default)s)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tandem", description=__doc__.split("\n")[0], epilog=LINEAGE
    )
    parser.add_argument("--version", action="version", version=f"tandem {__version__}")
    parser.add_argument(
        "--builds",
        default=str(default_build_root()),
        help="directory holding one build per MPI (default: %(default)s)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser(
        "run",
        help="launch a program on N ranks with Tandem preloaded",
        description=RUN_DESCRIPTION,
        epilog=RUN_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "-n",
        "-nn",
        "--nprocs",
        type=int,
        help="number of ranks (default 1, or the --placement's); with --virtual, of processes, "
        "each of --cores x --virtual ranks (-nn, TinyMPI's spelling: one per host)",
    )
    run.add_argument(
        "-nv",
        "--virtual",
        type=int,
        metavar="V",
        help="run a program built with `tandem cc` with V virtual ranks per core, user-level "
        "threads of one process (docs/VIRTUAL.md)",
    )
    run.add_argument(
        "-nc",
        "--cores",
        type=int,
        metavar="C",
        help="with --virtual: the cores (pinned kernel threads) of each process (default: "
        "this machine's CPUs shared out among the processes)",
    )
    add_rank_options(run, "and report on it ")
    run.add_argument(
        "--launcher-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="pass ARG to the launcher, one word each time: --launcher-arg --mca "
        "--launcher-arg btl --launcher-arg self,tcp",
    )
    run.add_argument(
        "--ghosts",
        type=int,
        default=0,
        metavar="G",
        help="progress processes per host, launched beside the N ranks and invisible to the "
        "program; on MPICH, and Open MPI over UCX, they serve its MPI_Win_allocate windows "
        "(sets TANDEM_GHOSTS; docs/ONESIDED.md)",
    )
    run.add_argument(
        "--placement",
        metavar="MAPPING",
        help="start each rank on the host and core of MAPPING (tandem place -o MAPPING): "
        "Open MPI's --rankfile, or Hydra's machinefile and -bind-to user:LIST (a -configfile "
        "binding each rank with taskset where no single list does)",
    )
    run.add_argument(
        "--host-names",
        metavar="A,B|@FILE",
        help="with --placement: the hosts to run on, host i of MAPPING on the i-th (the MPI's "
        "host list, comma-separated or a hostfile); default: MAPPING's own names",
    )
    add_hosts_options(run)
    run.add_argument("--no-tandem", action="store_true", help="launch without Tandem")
    run.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="do not print the line that says what Tandem does in the run",
    )
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="print the launch as a line for a shell (with the variables tandem adds), run nothing",
    )
    run.add_argument("program", nargs=argparse.REMAINDER, help="program and its arguments")
    run.set_defaults(func=command_run)

    PRIVATIZE_HELP = (
        "give each virtual rank its own copy of the program's written global and static "
        "variables, swapped in when the rank runs (one core per process: tandem run --cores 1)"
    )
    compilers = [
        (
            "cc",
            "C",
            "Compile and link a plain MPI C program (its main and MPI_* calls unchanged) with "
            "the virtual-rank runtime: Tandem's mpi.h first on the include path, "
            "libtandem-virt and its main. Warns of written global and static variables, which "
            "the virtual ranks of a process share. Every other word goes to the MPI's compiler.",
            "tandem cc --mpi mpich app.c",
            virt.command_cc,
        ),
        (
            "c++",
            "C++",
            "tandem cc for C++ sources, with the MPI's C++ compiler (mpicxx): the program's "
            "main and MPI_* calls unchanged; the MPI's C++ bindings (MPI::, removed in MPI 3.0) "
            "are left out.",
            "tandem c++ --mpi openmpi app.cpp",
            virt.command_cxx,
        ),
        (
            "fc",
            "Fortran",
            "tandem cc for Fortran (mpif.h, the mpi and mpi_f08 modules), with the "
            "MPI's Fortran compiler (mpif90): the main program runs as each virtual rank, its "
            "local variables on the rank's stack (-frecursive). Warns of saved, module and "
            "common variables, which the virtual ranks of a process share. Every other word "
            "goes to the MPI's compiler.",
            "tandem fc --mpi mpich app.f90",
            virt.command_fc,
        ),
    ]
    for name, language, description, example, func in compilers:
        compiler = sub.add_parser(
            name,
            help=f"compile a plain MPI {language} program against the virtual-rank runtime",
            description=description,
            epilog=f"example: {example} -O2 -o app && tandem run --virtual 4 ./app",
        )
        compiler.add_argument(
            "--mpi", choices=["openmpi", "mpich"], help="the MPI (default: the first build)"
        )
        compiler.add_argument(
            "-v", "--verbose", action="store_true", help="print the compiler's commands"
        )
        compiler.add_argument("--privatize", action="store_true", help=PRIVATIZE_HELP)
        compiler.add_argument(
            "arguments", nargs=argparse.REMAINDER, help="sources and compiler options"
        )
        compiler.set_defaults(func=func)

    exe = sub.add_parser("exec", help="run one rank with Tandem preloaded (under any launcher)")
    add_rank_options(exe, "")
    exe.add_argument("program", nargs=argparse.REMAINDER, help="program and its arguments")
    exe.set_defaults(func=command_exec)

    bench = sub.add_parser(
        "bench",
        help="run a benchmark (overlap, latency, halo, io, eager, monitor, coll, nbc, ioapp, post, rma, "
        "smb, heat, apps, place)",
    )
    bench.add_argument(
        "which",
        choices=[
            "overlap",
            "latency",
            "halo",
            "io",
            "eager",
            "monitor",
            "coll",
            "nbc",
            "ioapp",
            "post",
            "rma",
            "smb",
            "heat",
            "apps",
            "place",
            "virt",
        ],
        help="overlap: APSM's overlap test in three variants (a nonblocking send, receive "
        "or both while computing); latency: ping-pong and message rate; halo: APSM's "
        "ghost-cell exchange; io: MPI_File_iwrite_at while computing; eager: overlap of "
        "small messages with every operation counted or proxied; monitor: the cost of "
        "Tandem's monitoring and of Open MPI's per message, and on the ghost-cell exchange; "
        "coll: OSU's overlap of nonblocking collectives; nbc: FastMPJ's micro-benchmark, "
        "block / nbc / nbc+overlap latencies of broadcast and scatter; ioapp: FastMPJ's I/O "
        "application, blocking MPI_Scatter against 4, 8 and 16 concurrent MPI_Iscatter; "
        "post: what posting and waiting for an MPI_Ibcast cost after the process was idle; "
        "rma: a one-sided get under a lock while its target computes without MPI calls (a "
        "truly passive target) against the same get while the target waits in a barrier; "
        "smb: host overhead and availability of MPI_Get and MPI_Put (Sandia's SMB test as "
        "DART-MPI's paper adapted it), the target computing too; --trials: iterations per "
        "work count; heat: DART-MPI's 3D heat conduction, halos read with MPI_Rget, "
        "blocking and overlapped (--cells, --steps, --ranks); apps: real applications, the "
        "NAS Parallel Benchmarks 3.4 (--npb PATH) and the ghost-cell kernel, native against "
        "Tandem's default, drive and proxy; place: kernels (--kernels) on 2 and 4 simulated "
        "hosts (--hosts H: H only; root) in a round-robin order against the same renumbered "
        "by each placement of tandem place (TANDEM_REORDER), --halo-bytes per message, "
        "--steps iterations, how long tandem place takes (--place-ranks), and the 8-byte "
        "latency under TANDEM_REORDER; virt: virtual ranks' switch, ping-pong and bandwidth, "
        "and TinyMPI's 2D stencil (--grid, --kmax, --halo, --steps) for V = 1,2,4,8 (--v) "
        "virtual ranks per core against processes of the real MPI, blocking and nonblocking, "
        "with and without Tandem's progress, and tandem model's prediction on each point "
        "(--hosts H --link RATE: on simulated hosts; --quick: a smoke test)",
    )
    bench.add_argument(
        "--mpi",
        action="append",
        choices=["openmpi", "mpich"],
        help="only this MPI (repeat for both; default: every build)",
    )
    bench.add_argument(
        "--transports",
        default="shm,tcp,shaped",
        help="comma-separated: shm, tcp, shaped, and hosts for the simulated hosts of --hosts "
        "alone (with --hosts they run beside the others; default: %(default)s)",
    )
    bench.add_argument(
        "--sizes",
        default="16384,262144,1048576,4194304",
        help="message sizes in bytes (default: %(default)s)",
    )
    bench.add_argument(
        "--rounds", type=int, default=3, help="interleaved rounds (default: %(default)s)"
    )
    bench.add_argument(
        "--trials",
        type=int,
        default=5,
        help="trials per size inside one run (default: %(default)s)",
    )
    bench.add_argument(
        "--ranks",
        help="halo, io, monitor, nbc, post, ioapp, apps: rank counts (default: 1,2,4; apps: 2,4)",
    )
    bench.add_argument(
        "--npb",
        metavar="PATH",
        help="apps: an NPB 3.4 MPI source tree (NPB3.4-MPI); it is copied and built outside "
        "Tandem's repository, never changed",
    )
    bench.add_argument(
        "--npb-build",
        metavar="DIR",
        help="apps: where NPB is copied and built, one directory per MPI, kept for the next "
        "run (default: tandem-npb-HASH in the system's temporary directory)",
    )
    bench.add_argument(
        "--apps",
        metavar="LIST",
        help="apps: NPB benchmarks as NAME.CLASS and 'halo', the ghost-cell kernel "
        "(default: CG.A,MG.A,FT.A,LU.A,halo)",
    )
    bench.add_argument(
        "--configs",
        metavar="LIST",
        help="apps: only these of native, tandem-default, tandem-drive, tandem-proxy, named "
        "as the table names them (with --also: also NAME+VAR=VALUE) (default: all)",
    )
    bench.add_argument(
        "--cells",
        type=int,
        default=1 << 22,
        help="halo, apps: doubles in the whole domain (default: %(default)s)",
    )
    bench.add_argument(
        "--halo-bytes",
        type=int,
        default=1 << 20,
        help="halo, apps, place: bytes sent to each neighbour per step (default: %(default)s)",
    )
    bench.add_argument(
        "--steps",
        type=int,
        default=10,
        help="halo, apps, place: steps per trial (default: %(default)s)",
    )
    bench.add_argument(
        "--io-bytes",
        type=int,
        default=64 << 20,
        help="io: bytes each rank writes (default: %(default)s)",
    )
    bench.add_argument(
        "--io-dir",
        default="/tmp",
        help="io, ioapp: directory of the files written (default: %(default)s)",
    )
    bench.add_argument(
        "--ops",
        default="0,100,400",
        help="ioapp: operations per line, the workload (default: %(default)s)",
    )
    bench.add_argument(
        "--work",
        type=float,
        default=1.0,
        help="rma: seconds the target computes during a get (default: %(default)s)",
    )
    bench.add_argument(
        "--windows",
        default="allocate",
        help="rma: window flavours, allocate and/or create (default: %(default)s)",
    )
    bench.add_argument(
        "--idle-us",
        default="0,100,1000",
        help="post: microseconds each rank is idle before the post (default: %(default)s)",
    )
    bench.add_argument(
        "--input-mib",
        type=int,
        default=64,
        help="ioapp: MiB of text rank 0 reads and scatters (default: %(default)s)",
    )
    bench.add_argument(
        "--kernels",
        default="pairs,stencil,cg",
        help="place: the kernels of bench/place_kernels.c (default: %(default)s)",
    )
    bench.add_argument(
        "--place-ranks",
        default="8,64,512,1024,4096",
        help="place: rank counts of the synthetic matrices tandem place is timed on "
        "(default: %(default)s)",
    )
    bench.add_argument(
        "--rate", default="2gbit", help="rate of the shaped network (default: %(default)s)"
    )
    add_stencil_options(bench)
    bench.add_argument(
        "--v", metavar="LIST", help="virt: virtual ranks per core (default: 1,2,4,8)"
    )
    bench.add_argument(
        "--mpi-v",
        metavar="LIST",
        help="virt: the V at which the stencil also runs as H x C x V processes of the real MPI "
        "(default: every --v; V = 1 is the program one process per core, and processes that "
        "oversubscribe a core take 1.3 to 35 times the virtual ranks' time)",
    )
    bench.add_argument("--cores", type=int, metavar="C", help="virt: cores per host (default 1)")
    bench.add_argument(
        "--calibration",
        metavar="FILE",
        help="virt: tandem model's calibration (default: BUILDS/model-MPI.json, if there)",
    )
    bench.add_argument(
        "--quick", action="store_true", help="virt: a smoke test of a few seconds per MPI"
    )
    add_hosts_options(
        bench,
        "also run every configuration on H hosts simulated on this machine (the transport "
        "'hosts', beside those of --transports; needs root): the ranks block-wise, one per "
        "host for 2 ranks on 2 hosts",
    )
    bench.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="VAR=VALUE",
        help="run every Tandem configuration a second time with this variable set, "
        "interleaved with the rest (an A/B of a setting); may be repeated",
    )
    bench.add_argument(
        "-e",
        "--env",
        action="append",
        default=[],
        metavar="VAR=VALUE",
        help="set this variable in every launch, without Tandem too (-e OMPI_MCA_pml=ucx: "
        "Open MPI on UCX across the simulated hosts); may be repeated",
    )
    bench.add_argument(
        "--timeout",
        type=float,
        default=180,
        help="seconds before a run is killed (default: %(default)s)",
    )
    bench.add_argument(
        "--out",
        metavar="DIR",
        help="where the JSON, the table (.md) and the PNG go (default: a new directory "
        "tandem-bench-WHICH-YYYYmmdd-HHMMSS in the current one)",
    )
    bench.set_defaults(func=command_bench)

    report = sub.add_parser(
        "report",
        help="heatmaps, histogram, TreeMatch .mat files and summary of a --monitor run",
    )
    report.add_argument("prefix", metavar="PREFIX", help="the run's PREFIX (PREFIX.json)")
    report.add_argument(
        "--out", metavar="DIR", help="where the files go (default: PREFIX's directory)"
    )
    report.set_defaults(func=command_report)

    placing = sub.add_parser(
        "place",
        help="map ranks to cores from a --monitor run's record (TreeMatch, Scotch, greedy)",
        description="Map the ranks of a monitored run onto a machine (H hosts of C cores, or "
        "an hwloc topology) so that the ranks that exchange the most share the nearest "
        "cores; print the cost of the identity layout and of the mapping, and the bytes "
        "that cross hosts; write the MAPPING (JSON, docs/PLACEMENT.md). With --rankfile or "
        "--hydra, write a MAPPING as Open MPI's rankfile or Hydra's machinefile and binding.",
        epilog="examples:\n"
        "  tandem place out/job --hosts 2 --cores 8 -o job.map   # then: tandem run "
        "--placement job.map ./app\n"
        "  tandem place out/job --topology node.xml --hosts 4 --algorithm scotch -o job.map\n"
        "  tandem place --rankfile job.map -o rankfile            # mpirun --rankfile rankfile\n"
        "  tandem place --hydra job.map -o machinefile            # mpiexec -f machinefile ...",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    placing.add_argument(
        "prefix",
        nargs="?",
        metavar="PREFIX",
        help="the run's PREFIX: Tandem's PREFIX.json, else Open MPI's monitoring files "
        "PREFIX.<rank>.prof; or a TreeMatch matrix FILE.mat",
    )
    placing.add_argument("--hosts", type=int, help="hosts (default 1)")
    placing.add_argument("--cores", type=int, help="cores per host (default: ranks / hosts)")
    placing.add_argument(
        "--topology", metavar="FILE", help="one host's hwloc XML (hwloc-ls --of xml), --hosts of it"
    )
    placing.add_argument(
        "--host-names",
        metavar="A,B|@FILE",
        help="the hosts' names, in order (default: this host's for one host, host0, host1, ...)",
    )
    placing.add_argument(
        "--algorithm",
        default="treematch",
        help="treematch, scotch or greedy (default: %(default)s)",
    )
    placing.add_argument(
        "--kind",
        default="all",
        help="the traffic weighed: all, p2p, coll, osc (default: %(default)s)",
    )
    placing.add_argument(
        "--message-cost",
        type=float,
        default=0.0,
        metavar="BYTES",
        help="count each message as this many bytes more (its latency; default 0: bytes only)",
    )
    placing.add_argument("-o", "--output", metavar="FILE", help="the file to write")
    placing.add_argument("--rankfile", metavar="MAPPING", help="write MAPPING as a rankfile")
    placing.add_argument(
        "--hydra", metavar="MAPPING", help="write MAPPING as Hydra's machinefile and binding"
    )
    placing.set_defaults(func=command_place)

    device_report = sub.add_parser(
        "device-report",
        help="tables and the targets of a run of bench/device.sh on the lent 16-core machine",
    )
    device_report.add_argument("results", metavar="DIR", help="the run's $OUT")
    device_report.add_argument(
        "--out", metavar="DIR", help="where the files go (default: DIR itself)"
    )
    device_report.set_defaults(func=command_device_report)

    modelling = sub.add_parser(
        "model",
        help="predict the time per step of the 2D stencil for V = 1..16 virtual ranks per core "
        "and the best V (calibrate: measure the machine's parameters)",
        description='TinyMPI\'s virtualization-ratio model (docs/VIRTUAL.md, "The model"): '
        "the time per step of bench/virt_stencil.c with V virtual ranks per core on "
        "--hosts N x --cores C, from the computation, the messages inside a process and "
        "the messages over the network (max-rate), with parameters that `tandem model "
        "calibrate` measures on this machine (root: the network on 2 simulated hosts) and "
        "keeps in a JSON file.",
        epilog="examples:\n"
        "  sudo tandem model calibrate --link 1gbit        # writes build/model-openmpi.json\n"
        "  tandem model --grid 8192,128 --kmax 4 --hosts 2 --cores 1\n"
        "  tandem model --grid 8192,128 --hosts 2 --formula tinympi --v 1,2,4,8",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    modelling.add_argument(
        "action",
        nargs="?",
        choices=["predict", "calibrate"],
        default="predict",
        help="predict (default) or calibrate",
    )
    modelling.add_argument(
        "--mpi", choices=["openmpi", "mpich"], help="the build (default: the first)"
    )
    add_stencil_options(modelling)
    modelling.add_argument(
        "--hosts", type=int, default=1, metavar="N", help="predict: hosts (default 1)"
    )
    modelling.add_argument(
        "--cores", type=int, default=1, metavar="C", help="predict: cores per host (default 1)"
    )
    modelling.add_argument(
        "--v", metavar="LIST", help="predict: these ratios only (default: 1 to 16)"
    )
    modelling.add_argument(
        "--formula",
        choices=["pipeline", "tinympi"],
        default="pipeline",
        help="the lost overlap: pipeline (min(cpu, net) / V, the default) or tinympi "
        "(half a rank's computation, as TinyMPI's report)",
    )
    modelling.add_argument(
        "--link",
        default="1gbit",
        metavar="RATE",
        help="calibrate: the link of the 2 simulated hosts the network is measured on, RATE "
        "or RATE:BURST as --hosts' --link (default: %(default)s)",
    )
    modelling.add_argument(
        "--calibration",
        metavar="FILE",
        help="the calibration file (default: BUILDS/model-MPI.json)",
    )
    modelling.add_argument(
        "--timeout", type=float, default=120, help="calibrate: seconds per run (default 120)"
    )
    modelling.set_defaults(func=command_model)

    hosts_command = sub.add_parser(
        "hosts",
        help="list the simulated hosts of runs on this machine (--hosts); --clean removes "
        "those a killed run left",
    )
    hosts_command.add_argument(
        "--clean",
        action="store_true",
        help="end the processes and remove the files of runs whose tandem is gone",
    )
    hosts_command.set_defaults(func=command_hosts)

    info = sub.add_parser("info", help="list the builds, their MPI and its thread level")
    doctor = sub.add_parser(
        "doctor",
        help="check what this setup gives Tandem, with advice",
        description="Check, in a few seconds, what this machine and each MPI give Tandem: "
        "the thread level, the cores against the ranks, how the ranks of a host talk, and "
        "what the default TANDEM_PROGRESS=auto decides for a launch of N ranks (from a real "
        "launch); one line of advice per finding.",
    )
    doctor.add_argument("-n", "--nprocs", type=int, default=2, help="ranks (default 2)")
    doctor.add_argument("--mpi", choices=["openmpi", "mpich"], help="check one MPI only")
    doctor.set_defaults(func=command_doctor)
    info.set_defaults(func=command_info)
    return parser


def readable_words(argv: list[str]) -> tuple[list[str], list[int]]:
    """argv as argparse reads it as meant, and the index in argv where each
    of those words begins: a bare --monitor becomes --monitor=PREFIX (it never
    takes the next word as its PREFIX: `tandem run --monitor ./app` monitors
    ./app), and --launcher-arg VALUE becomes --launcher-arg=VALUE (argparse
    takes a VALUE that starts with a dash, such as --mca, for an option)."""
    words, starts, index = [], [], 0
    while index < len(argv):
        word = argv[index]
        starts.append(index)
        if word.startswith("--mo") and "--monitor".startswith(word):
            words.append(f"--monitor={MONITOR_PREFIX}")
        elif word == "--launcher-arg" and index + 1 < len(argv):
            index += 1
            words.append(f"--launcher-arg={argv[index]}")
        else:
            words.append(word)
        index += 1
    return words, starts


def parse_arguments(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """parser.parse_args of readable_words(argv) for tandem's own words; the
    program's words after them are passed on as they are."""
    argv = sys.argv[1:] if argv is None else list(argv)
    words, starts = readable_words(argv)
    if words == argv:
        return parser.parse_args(argv)
    probe = parser.parse_args(words)  # tells where tandem's words end and the program begins
    program = getattr(probe, "program", None)
    if program is None:  # a command without a program: the words as they were
        return parser.parse_args(argv)
    split = len(words) - len(program)
    return parser.parse_args(words[:split] + (argv[starts[split] :] if program else []))


# tandem cc, c++ and fc: their own options, each with how many values follow.
COMPILE_COMMANDS = ("cc", "c++", "fc")
COMPILE_OPTIONS = {"--mpi": 1, "-v": 0, "--verbose": 0, "--privatize": 0, "-h": 0, "--help": 0}


def compiler_words(argv: list[str]) -> list[str]:
    """argv with a "--" before the first word of tandem cc, c++ or fc that
    is the compiler's, so that one starting with a dash (tandem fc -c
    app.f90, tandem cc -O2 app.c) is not read as tandem's."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):  # tandem's own: --builds DIR, --version
        i += 2 if argv[i] == "--builds" else 1
    if i >= len(argv) or argv[i] not in COMPILE_COMMANDS:
        return argv
    j = i + 1
    while j < len(argv) and argv[j] != "--":
        word = argv[j]
        if word.startswith("--mpi="):
            j += 1
        elif word in COMPILE_OPTIONS:
            j += 1 + COMPILE_OPTIONS[word]
        else:
            return [*argv[:j], "--", *argv[j:]]
    return argv


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parse_arguments(parser, compiler_words(sys.argv[1:] if argv is None else list(argv)))
    try:
        return args.func(args)
    except TandemError as error:
        print(f"tandem: error: {error}", file=sys.stderr)
        return 2
    except Stopped as stop:  # by a signal passed on to a launcher of tandem bench
        print(f"tandem: {stop}", file=sys.stderr)
        return 128 + stop.signum
    except KeyboardInterrupt:  # Ctrl-C while no launcher ran: nothing to end
        print(f"tandem: {Stopped(signal.SIGINT)}", file=sys.stderr)
        return 128 + signal.SIGINT


if __name__ == "__main__":
    sys.exit(main())
