"""tandem bench apps: real applications, the NAS Parallel Benchmarks 3.4 (MPI)
and Tandem's own ghost-cell kernel, timed without Tandem against Tandem's
default and its two strategies, interleaved round by round.

NPB's source is never part of Tandem's repository: the user names a source
tree (--npb PATH), which is copied, per MPI, into a build directory outside
the repository (--npb-build, by default under the system's temporary
directory), given a config/make.def written here and built with `make CG
CLASS=A` and so on. NPB 3.4 takes the number of processes at run time, so
one binary per benchmark and class serves every rank count.

Each NPB run must print NPB's own 'Verification    =  SUCCESSFUL' line: a
run that does not is listed as a problem and left out of the medians. Its
time is NPB's 'Time in seconds =' (the timed section, without start-up);
the launch's wall time and the CPU time of all its processes are recorded
too (a rank that spins in a wait burns CPU, one that sleeps does not).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .bench import Config, Progress, document, markdown, save, with_also
from .builds import Build, TandemError, repository_root
from .launch import launch_command, launcher_environment, run_launch

NPB_BENCHMARKS = ("BT", "CG", "EP", "FT", "IS", "LU", "MG", "SP")
NPB_CLASSES = ("S", "W", "A", "B", "C", "D", "E", "F")
HALO = "halo"
DEFAULT_APPS = "CG.A,MG.A,FT.A,LU.A,halo"
CONFIG_NAMES = ("native", "tandem-default", "tandem-drive", "tandem-proxy")

TIME_LINE = re.compile(r"^\s*Time in seconds\s*=\s*([-+0-9.eEdD]+)\s*$", re.M)
VERIFICATION_LINE = re.compile(r"^\s*Verification\s*=\s*(\S+)\s*$", re.M)


@dataclass(frozen=True)
class App:
    """One application of the run: an NPB benchmark and its class, or the
    ghost-cell kernel (name "halo", klass "")."""

    name: str
    klass: str = ""

    @property
    def label(self) -> str:
        return f"{self.name}.{self.klass}" if self.klass else self.name

    @property
    def is_npb(self) -> bool:
        return self.name != HALO


def parse_apps(text: str) -> list[App]:
    """--apps: NPB benchmarks as NAME.CLASS (CG.A, LU.W) and 'halo'."""
    apps = []
    for word in filter(None, (w.strip() for w in text.split(","))):
        if word.lower() == HALO:
            apps.append(App(HALO))
            continue
        name, dot, klass = word.partition(".")
        name, klass = name.upper(), klass.upper()
        if not dot or name not in NPB_BENCHMARKS or klass not in NPB_CLASSES:
            raise TandemError(
                f"--apps {text}: {word!r} is neither 'halo' nor an NPB benchmark and class such "
                f"as CG.A (benchmarks {', '.join(NPB_BENCHMARKS)}; classes "
                f"{', '.join(NPB_CLASSES)})"
            )
        apps.append(App(name, klass))
    if not apps:
        raise TandemError(f"--apps {text!r}: no application named")
    if len(set(apps)) != len(apps):
        raise TandemError(f"--apps {text}: an application is named twice")
    return apps


def app_configs(build: Build, transport: str = "shm") -> list[Config]:
    """Without Tandem; Tandem's default (the library loaded, no TANDEM_*
    variable: what auto decides); and the two strategies forced."""
    return [
        Config("native", False),
        Config("tandem-default", True),
        Config("tandem-drive", True, {"TANDEM_PROGRESS": "drive"}),
        Config("tandem-proxy", True, {"TANDEM_PROGRESS": "proxy"}),
    ]


def parse_npb_output(text: str) -> dict:
    """NPB's report: 'time_s' (Time in seconds, None if missing) and
    'verification' (the word after 'Verification =', None if missing);
    'verified' is True only for SUCCESSFUL."""
    times = TIME_LINE.findall(text)
    verdicts = VERIFICATION_LINE.findall(text)
    time_s = None
    if times:
        try:
            time_s = float(times[-1].replace("D", "E").replace("d", "e"))
        except ValueError:
            time_s = None
    verdict = verdicts[-1] if verdicts else None
    return {"time_s": time_s, "verification": verdict, "verified": verdict == "SUCCESSFUL"}


# ------------------------------------------------------------------ building


def check_npb_tree(path: Path) -> Path:
    """The absolute NPB source tree, or a TandemError saying what is missing."""
    tree = path.expanduser().absolute()
    if not tree.is_dir():
        raise TandemError(f"--npb {path}: no such directory")
    needed = ["config/make.def.template", "sys/setparams.c", "sys/make.common"]
    missing = [n for n in needed if not (tree / n).exists()]
    if missing:
        raise TandemError(
            f"--npb {path}: not an NPB 3.4 MPI source tree (the NPB3.4-MPI directory of NAS's "
            f"NPB3.4.x archive): {', '.join(missing)} missing"
        )
    return tree


def build_directory(tree: Path, chosen: str | None) -> Path:
    """Where NPB is copied and built: --npb-build, else a directory of the
    system's temporary directory named after the tree. Never inside Tandem's
    repository (NPB's source must not end up in it) nor inside the tree."""
    if chosen:
        where = Path(chosen).expanduser().absolute()
    else:
        digest = hashlib.sha1(str(tree).encode()).hexdigest()[:10]
        where = Path(tempfile.gettempdir()) / f"tandem-npb-{digest}"
    resolved = where.resolve()
    for inside, what in (
        (repository_root().resolve(), "Tandem's repository"),
        (tree.resolve(), "--npb's tree"),
    ):
        if resolved == inside or inside in resolved.parents:
            raise TandemError(
                f"--npb-build {where}: inside {what} ({inside}); NPB is built in a copy "
                "outside both: name another directory"
            )
    return where


def compilers_of(build: Build) -> tuple[str, str]:
    """The MPI's Fortran and C compiler wrappers the build was configured
    with (its CMakeCache.txt), else the Debian names of the family."""
    found = {}
    cache = build.directory / "CMakeCache.txt"
    if cache.exists():
        for line in cache.read_text(errors="replace").splitlines():
            for key in ("MPI_Fortran_COMPILER", "MPI_C_COMPILER"):
                if line.startswith(key + ":"):
                    found[key] = line.partition("=")[2].strip()
    suffix = {"Open MPI": ".openmpi", "MPICH": ".mpich"}.get(build.family, "")
    fc = found.get("MPI_Fortran_COMPILER") or f"mpif90{suffix}"
    cc = found.get("MPI_C_COMPILER") or f"mpicc{suffix}"
    return fc, cc


def fortran_flags(fc: str) -> str:
    """-O2, and for gfortran 10 or later the two flags NPB 3.4's Fortran
    needs: MPI calls with buffers of several types (argument mismatch) and
    randi8.f's X'...' constants (invalid BOZ)."""
    flags = "-O2"
    try:
        version = subprocess.run(
            [fc, "--version"], capture_output=True, text=True, timeout=60, check=False
        ).stdout
        dump = subprocess.run(
            [fc, "-dumpversion"], capture_output=True, text=True, timeout=60, check=False
        ).stdout.strip()
    except OSError as error:
        raise TandemError(f"cannot run the MPI Fortran compiler {fc}: {error.strerror}") from None
    major = re.match(r"(\d+)", dump)
    if "GNU Fortran" in version and major and int(major.group(1)) >= 10:
        flags += " -fallow-argument-mismatch -fallow-invalid-boz"
    return flags


def extra_link_objects(tree: Path) -> list[str]:
    """Object files the tree's own config/make.def links into every
    benchmark (FLINKFLAGS), as paths relative to a benchmark's directory,
    where their C source is in the tree: a fork's instrumentation, such as
    ../kernel_stats/kernel_stats.o in thaisacs/NPB3.4-MPI, whose CG, FT, LU
    and MG call it. Stock NPB has no config/make.def: none."""
    own = tree / "config" / "make.def"
    if not own.exists():
        return []
    objects = []
    for line in own.read_text(errors="replace").splitlines():
        name, eq, value = line.partition("=")
        if eq and name.strip() == "FLINKFLAGS" and not line.lstrip().startswith("#"):
            for word in value.split():
                if word.endswith(".o") and (tree / "CG" / word).with_suffix(".c").exists():
                    objects.append(word)
    return objects


def make_def(fc: str, cc: str, fflags: str, objects: list[str]) -> str:
    """The config/make.def of the copy."""
    link = " ".join(["$(FFLAGS)", *objects])
    return (
        "# Written by tandem bench apps; the copy's own make.def, not the tree's.\n"
        f"MPIFC = {fc}\nFLINK = $(MPIFC)\nFMPI_LIB =\nFMPI_INC =\n"
        f"FFLAGS = {fflags}\nFLINKFLAGS = {link}\n"
        f"MPICC = {cc}\nCLINK = $(MPICC)\nCMPI_LIB =\nCMPI_INC =\n"
        "CFLAGS = -O2\nCLINKFLAGS = $(CFLAGS)\nCC = cc\nBINDIR = ../bin\n"
        "CONVERTFLAG = -DFORTRAN_REC_SIZE=1\nRAND = randi8\n"
    )


def run_logged(command: list[str], cwd: Path, log: Path, what: str) -> None:
    result = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=1800, check=False
    )
    log.write_text(result.stdout + result.stderr)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-8:])
        raise TandemError(f"{what} failed (exit {result.returncode}; {log}):\n{tail}")


def prepare_npb(tree: Path, build: Build, where: Path, apps: list[App], note) -> dict[App, Path]:
    """Copy the tree into where/<mpi> (again when the tree, the make.def or
    Tandem's way of building changed), write its make.def, build each NPB
    application; returns each one's binary."""
    fc, cc = compilers_of(build)
    objects = extra_link_objects(tree)
    text = make_def(fc, cc, fortran_flags(fc), objects)
    copy = where / build.option
    stamp = copy / ".tandem-npb.json"
    wanted = {"source": str(tree), "make_def": text}
    if not (stamp.exists() and json.loads(stamp.read_text()) == wanted):
        if copy.exists():
            shutil.rmtree(copy)
        note(f"tandem bench apps: copying {tree} to {copy} for {build.family}")
        shutil.copytree(
            tree, copy, symlinks=True, ignore=shutil.ignore_patterns("*.o", "*.mod", "*.x", ".git")
        )
        (copy / "config" / "make.def").write_text(text)
        for obj in objects:  # built with the MPI's C compiler
            source = (copy / "CG" / obj).with_suffix(".c")
            run_logged(
                [cc, "-O2", "-c", source.name, "-o", Path(obj).name],
                source.parent,
                copy / f"make-{Path(obj).stem}.log",
                f"{cc} -c {source}",
            )
        (copy / "bin").mkdir(exist_ok=True)
        stamp.write_text(json.dumps(wanted))
    binaries = {}
    for app in apps:
        if not app.is_npb:
            continue
        binary = copy / "bin" / f"{app.name.lower()}.{app.klass}.x"
        if not binary.exists():
            note(f"tandem bench apps: make {app.name} CLASS={app.klass} ({build.family})")
            run_logged(
                ["make", app.name, f"CLASS={app.klass}"],
                copy,
                copy / f"make-{app.label}.log",
                f"make {app.name} CLASS={app.klass} in {copy}",
            )
        if not binary.exists():
            raise TandemError(f"make {app.name} CLASS={app.klass} in {copy} made no {binary.name}")
        binaries[app] = binary
    return binaries


# ------------------------------------------------------------------- running


def clean_environment(build: Build) -> dict[str, str]:
    """The launcher's environment without any TANDEM_* variable: the ranks
    inherit it, and Tandem's default must be the default."""
    return {k: v for k, v in launcher_environment(build).items() if not k.startswith("TANDEM_")}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_app(build, app: App, program: list[str], nprocs, config, timeout, cwd):
    """One launch: its record and a problem (or None)."""
    command = launch_command(
        build, nprocs, program, config.tandem, config.env, config.launcher_args
    )
    load = os.getloadavg()[0]
    cpu0, t0 = children_cpu(), time.monotonic()
    outcome = run_launch(command, clean_environment(build), timeout, cwd=cwd)
    wall, cpu = time.monotonic() - t0, children_cpu() - cpu0
    record = {
        "app": app.label,
        "ranks": nprocs,
        "wall_s": wall,
        "cpu_s": cpu,
        "load": load,
    }
    where = f"{build.family} {app.label} {nprocs} ranks {config.name}"
    if outcome.timed_out:
        return dict(
            record, time_s=None, verified=False
        ), f"{where}: killed after {timeout:g} s{outcome.where_killed}"
    if outcome.returncode != 0:
        tail = outcome.stderr.strip()[-400:]
        return dict(
            record, time_s=None, verified=False
        ), f"{where}: exit {outcome.returncode}: {tail}"
    if app.is_npb:
        found = parse_npb_output(outcome.stdout)
        record.update(found)
        if not found["verified"]:
            said = found["verification"] or "no Verification line"
            return record, f"{where}: verification {said}"
        if found["time_s"] is None:
            return dict(record, verified=False), f"{where}: no 'Time in seconds' line"
        return record, None
    lines = [json.loads(x) for x in outcome.stdout.splitlines() if x.startswith("{")]
    if not lines:
        return dict(record, time_s=None, verified=False), f"{where}: no result line"
    return dict(record, time_s=lines[0]["step_s"], verified=None, halo=lines[0]), None


def rotated(items: list, by: int) -> list:
    """items, starting at index 'by' (mod its length): each round starts
    with another configuration, so that none always runs first."""
    k = by % len(items) if items else 0
    return items[k:] + items[:k]


def summarize(records: list[dict]) -> list[dict]:
    """Per MPI, application, ranks and configuration: the median time over
    the rounds whose run passed (NPB: verified), its lowest and highest,
    and the median of the per-round ratios to native's time in the same
    round (paired: a round's load hits both alike)."""
    usable = [r for r in records if r.get("time_s") is not None and r.get("verified") is not False]
    native = {
        (r["mpi"], r["app"], r["ranks"], r["round"]): r["time_s"]
        for r in usable
        if r["config"] == "native"
    }
    groups: dict[tuple, list[dict]] = {}
    for r in usable:
        groups.setdefault((r["mpi"], r["app"], r["ranks"], r["config"]), []).append(r)
    summary = []
    for (mpi, app, ranks, config), rs in sorted(groups.items()):
        times = [r["time_s"] for r in rs]
        ratios = [
            r["time_s"] / native[(mpi, app, ranks, r["round"])]
            for r in rs
            if native.get((mpi, app, ranks, r["round"]))
        ]
        summary.append(
            {
                "mpi": mpi,
                "app": app,
                "ranks": ranks,
                "config": config,
                "time_s": statistics.median(times),
                "time_min_s": min(times),
                "time_max_s": max(times),
                "ratio": statistics.median(ratios) if ratios else None,
                "cpu_s": statistics.median(r["cpu_s"] for r in rs),
                "load": statistics.median(r["load"] for r in rs),
                "rounds": len(rs),
            }
        )
    return summary


def load_range(records: list[dict]) -> str:
    loads = sorted(r["load"] for r in records)
    if not loads:
        return "-"
    return f"{loads[0]:.1f} / {statistics.median(loads):.1f} / {loads[-1]:.1f}"


def table(result: dict) -> str:
    """Per application and configuration: the median time with its range
    over the rounds, the median paired ratio to native, the CPU time of the
    whole job (all ranks), and the rounds that passed."""

    def seconds(value: float, app: str) -> str:
        return f"{1e3 * value:.2f} ms" if app == HALO else f"{value:.2f}"

    rows = []
    for s in result["summary"]:
        ratio = "-" if s["config"] == "native" or s["ratio"] is None else f"{s['ratio']:.2f}x"
        rows.append(
            [s["mpi"], s["app"], s["ranks"], s["config"]]
            + [f"{seconds(s['time_s'], s['app'])} ({seconds(s['time_min_s'], s['app'])}-"
               f"{seconds(s['time_max_s'], s['app'])})"]
            + [ratio, f"{s['cpu_s']:.1f}", f"{s['load']:.1f}", s["rounds"]]
        )  # fmt: skip
    head = (
        f"Medians of {result['rounds']} interleaved rounds on {result['machine']['cores']} cores; "
        f"NPB: 'Time in seconds' (s), halo: time per step; load average (1 min) before "
        f"the launches, lowest / median / highest: {result['load']}.\n\n"
    )
    columns = ["MPI", "app", "ranks", "config", "time (range)", "x native (paired)"]
    return head + markdown(columns + ["CPU of the job (s)", "load", "rounds"], rows)


def plot(result: dict, path: Path) -> None:
    """Bars: each configuration's paired ratio to native, per application;
    one panel per MPI and rank count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = [s for s in result["summary"] if s["config"] != "native" and s["ratio"]]
    panels = sorted({(s["mpi"], s["ranks"]) for s in summary})
    if not panels:
        return
    fig, axes = plt.subplots(
        1, len(panels), figsize=(4.5 * len(panels), 4), squeeze=False, sharey=True
    )
    configs = sorted({s["config"] for s in summary})
    for ax, (mpi, ranks) in zip(axes[0], panels):
        rows = [s for s in summary if (s["mpi"], s["ranks"]) == (mpi, ranks)]
        apps = sorted({s["app"] for s in rows})
        width = 0.8 / max(1, len(configs))
        for k, config in enumerate(configs):
            values = {s["app"]: s["ratio"] for s in rows if s["config"] == config}
            xs = [i + (k - (len(configs) - 1) / 2) * width for i in range(len(apps))]
            ax.bar(xs, [values.get(a, 0) for a in apps], width, label=config)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(apps)))
        ax.set_xticklabels(apps, fontsize=8)
        ax.set_yscale("log")
        ax.set_title(f"{mpi}, {ranks} ranks")
    axes[0][0].set_ylabel("time / native's (paired median)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(
        f"Real applications on {result['machine']['cores']} cores, load {result['load']}",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def apps(
    builds,
    app_list: list[App],
    nprocs_list: list[int],
    rounds: int,
    out: Path,
    timeout: float,
    npb: Path | None,
    npb_build: str | None,
    halo_args: tuple[int, int, int, int],
    config_names: list[str] | None = None,
) -> Path:
    """Build what NPB benchmarks app_list names, then run every application
    on every rank count under every configuration, round after round."""
    import sys

    def note(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    if any(a.is_npb for a in app_list) and npb is None:
        raise TandemError(
            "tandem bench apps: NPB benchmarks need --npb PATH, an NPB 3.4 MPI source tree "
            "(or --apps halo for the ghost-cell kernel alone)"
        )
    tree = check_npb_tree(npb) if any(a.is_npb for a in app_list) else None
    where = build_directory(tree, npb_build) if tree else None
    binaries = {
        b.family: prepare_npb(tree, b, where, app_list, note) if tree else {} for b in builds
    }

    def configs_of(build):
        configs = with_also(app_configs(build))
        if config_names:  # as the table names them: with --also's suffix, if any
            configs = [c for c in configs if c.name in config_names]
        return configs

    records, problems = [], []
    points = [(app, n) for app in app_list for n in nprocs_list]
    progress = Progress(sum(len(configs_of(b)) for b in builds) * rounds * len(points))
    started = os.getloadavg()
    for build in builds:
        configs = configs_of(build)
        for round_index in range(rounds):
            for app, nprocs in points:
                if app.is_npb:
                    binary = binaries[build.family][app]
                    program, cwd = [str(binary)], binary.parent
                else:
                    cells, halo_bytes, steps, trials = halo_args
                    halo = build.directory / "tandem-bench-halo"
                    program = [str(halo), str(cells), str(halo_bytes), str(steps), str(trials)]
                    cwd = None
                for config in rotated(configs, round_index):
                    record, problem = run_app(build, app, program, nprocs, config, timeout, cwd)
                    records.append(
                        {"mpi": build.family, "config": config.name, "round": round_index, **record}
                    )
                    if problem:
                        problems.append(problem)
                        progress.note(f"  note: {problem}")
                    progress.step()
    summary = summarize(records)
    result = document(
        "apps",
        rounds,
        None,
        problems,
        records,
        summary,
        npb=str(tree) if tree else None,
        npb_build=str(where) if where else None,
        apps=[a.label for a in app_list],
        halo={
            "cells": halo_args[0],
            "bytes": halo_args[1],
            "steps": halo_args[2],
            "trials": halo_args[3],
        },
        load_at_start=list(started),
        load_at_end=list(os.getloadavg()),
        load=load_range(records),
    )
    path = save(out, result, table(result))
    plot(result, out / "apps.png")
    return path
