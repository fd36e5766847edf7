"""tandem bench virt (docs/VIRTUAL.md, "Measured"): the virtual ranks'
micro-benchmarks and the 2D stencil of TinyMPI's report as virtual ranks and
as processes of the real MPI, with the model's prediction on each point.

Micro-benchmarks, on one host: the switch (tandem-bench-virt-switch),
8-byte ping-pong between two virtual ranks of one core and of two cores,
4 MiB messages between virtual ranks against memcpy, and the real MPI's
ping-pong between two processes for reference.

The stencil (bench/virt_stencil.c), on this host or on the simulated hosts
of --hosts (one process of virtual ranks per host): for each V, the
program built with `tandem cc` as V virtual ranks per core, with blocking
and nonblocking exchange, and the same program as H x C x V processes of
the real MPI, blocking and nonblocking, without Tandem and with Tandem's
progress thread (TANDEM_PROGRESS=drive); at V = 1 also its overlapping
variant (the border first, the interior while the halos travel), the
program written for overlap. Every configuration runs once per round, the
rounds interleaved; the summary holds the medians over the rounds.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import bench, model
from .builds import Build, TandemError
from .launch import launch_command, launcher_environment


@dataclass(frozen=True)
class Point:
    """One configuration of the stencil."""

    kind: str  # "virtual" (tandem cc) or "mpi" (processes of the real MPI)
    exchange: str  # blocking, nonblocking or overlap
    # "off"; "drive", Tandem's progress thread (mpi); "thread", the virtual
    # ranks' progress thread (TANDEM_VIRT_PROGRESS, several hosts)
    progress: str
    v: int  # ranks per core

    @property
    def label(self) -> str:
        kind = "virtual" if self.kind == "virtual" else "mpi"
        return f"{kind} {self.exchange}" + (" + progress" if self.progress != "off" else "")


def points(
    vs: list[int], quick: bool = False, hosts: int = 1, mpi_vs: list[int] | None = None
) -> list[Point]:
    """The configurations; processes of the real MPI at the V of 'mpi_vs'
    (default: every V; --quick: V = 1 only); the virtual ranks' progress
    thread where there are several hosts."""
    found = []
    threads = ("off", "thread") if hosts > 1 else ("off",)
    if mpi_vs is None:
        mpi_vs = [1] if quick else vs
    for v in vs:
        for exchange in ("blocking", "nonblocking"):
            found += [Point("virtual", exchange, t, v) for t in threads]
        for exchange in ("blocking", "nonblocking"):
            for progress in ("off", "drive"):
                if v in mpi_vs:
                    found.append(Point("mpi", exchange, progress, v))
    if 1 in vs:
        found += [Point("mpi", "overlap", p, 1) for p in ("off", "drive")]
    return found


def run_json(command: list[str], build: Build, timeout: float) -> tuple[dict | None, str]:
    """The last JSON line of a launch, or None and what went wrong."""
    try:
        result = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=launcher_environment(build),
            timeout=timeout,
            start_new_session=True,
            check=False,
        )
    except subprocess.TimeoutExpired:
        if bench.hosts_network is not None:
            bench.hosts_network.sweep()
        return None, f"timed out after {timeout:g} s"
    for line in reversed(result.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line), ""
    return None, f"exit status {result.returncode}: {(result.stderr or '').strip()[-300:]}"


# Keeps a process on the first K CPUs it may run on: on simulated hosts of
# CPUs of their own, every configuration of a host gets the C cores it is
# given (C + 1 with a progress thread: a spare core), where the processes of
# the real MPI would otherwise spread over all of the host's CPUs.
FIRST_CPUS = r"""#!/bin/sh
k=$1
shift
cpus=$(awk -v k="$k" '/^Cpus_allowed_list/ {
    n = split($2, parts, ","); out = ""; c = 0
    for (i = 1; i <= n && c < k; i++) {
        m = split(parts[i], r, "-"); hi = m > 1 ? r[2] : r[1]
        for (x = r[1] + 0; x <= hi + 0 && c < k; x++) { out = out (c ? "," : "") x; c++ }
    }
    print out }' /proc/self/status)
exec taskset -c "$cpus" "$@"
"""


def confine(program: list[str], point: Point, cores: int) -> list[str]:
    """'program' kept on the point's CPUs of its host (FIRST_CPUS, in the
    hosts' run directory), where the simulated hosts have CPUs of their
    own; as it is elsewhere."""
    net = bench.hosts_network
    if net is None or not net.cpu_sets:
        return program
    script = net.directory / "first-cpus.sh"
    if not script.exists():
        script.write_text(FIRST_CPUS)
        script.chmod(0o755)
    count = cores + (1 if point.progress != "off" else 0)
    return [str(script), str(count), *program]


def stencil_command(
    build: Build, point: Point, hosts: int, cores: int, words: list[str]
) -> list[str]:
    net = bench.hosts_network
    if point.kind == "virtual":
        program = [str(build.directory / "tandem-bench-virt-stencil"), *words]
        env = {"TANDEM_VIRT_RANKS": str(point.v), "TANDEM_VIRT_CORES": str(cores)}
        if net is not None:
            env["TANDEM_VIRT_PROGRESS"] = point.progress
            program = confine(program, point, cores)
            return net.launch_command(
                build, hosts, program, False, env, cores_each=cores, bound=not net.cpu_sets
            )
        unbound = ["--bind-to", "none"] if cores > 1 and build.family == "Open MPI" else []
        return launch_command(build, 1, program, False, env, unbound)
    program = [str(build.directory / "tandem-bench-virt-stencil-real"), *words]
    nprocs = hosts * cores * point.v
    drive = point.progress == "drive"
    env = {"TANDEM_PROGRESS": "drive"} if drive else {}
    if net is not None:
        program = confine(program, point, cores)
        return net.launch_command(build, nprocs, program, drive, env, bound=not net.cpu_sets)
    return launch_command(build, nprocs, program, drive, env)


def micro_commands(build: Build, quick: bool) -> dict[str, list[str]]:
    d = build.directory
    rounds = "2000" if quick else "200000"
    transfers = "2" if quick else "50"
    pingpong = [str(d / "tandem-bench-virt-pingpong"), rounds, transfers]

    def virtual(cores: int, v: int) -> list[str]:
        env = {"TANDEM_VIRT_RANKS": str(v), "TANDEM_VIRT_CORES": str(cores)}
        unbound = ["--bind-to", "none"] if cores > 1 and build.family == "Open MPI" else []
        # Across cores a rank waits on a sleeping core (tens of us a message):
        # fewer rounds keep the run under a minute.
        words = pingpong if cores == 1 else [pingpong[0], "5000" if not quick else "500", transfers]
        return launch_command(build, 1, words, False, env, unbound)

    real = [str(d / "tandem-bench-virt-pingpong-real"), rounds, transfers]
    return {
        "switch": [str(d / "tandem-bench-virt-switch"), "50000" if quick else "5000000"],
        "same-core": virtual(1, 2),
        "cross-core": virtual(2, 1),
        "mpi processes": launch_command(build, 2, real, False, {}),
    }


def run(
    builds: list[Build],
    stencil: model.Stencil,
    hosts: int,
    cores: int,
    vs: list[int],
    steps: int,
    trials: int,
    rounds: int,
    out: Path,
    timeout: float,
    calibrations: dict[str, Path],
    quick: bool = False,
    mpi_vs: list[int] | None = None,
) -> Path:
    for v in vs:
        why = model.check_shape(stencil, hosts, cores, v)
        if why:
            raise TandemError(f"{why} (V = {v})")
    words = [
        "--grid",
        f"{stencil.gx},{stencil.gy}",
        "--kmax",
        str(stencil.kmax),
        "--halo",
        str(stencil.halo),
        "--steps",
        str(steps),
        "--trials",
        str(trials),
        "--cores",
        str(hosts * cores),
    ]
    configs = points(vs, quick, hosts, mpi_vs)
    micro_names = list(micro_commands(builds[0], quick))
    progress = bench.Progress(len(builds) * rounds * (len(configs) + len(micro_names)))
    records, problems, commands = [], [], {}
    for build in builds:
        micro = micro_commands(build, quick)
        for round_index in range(rounds):
            for name, command in micro.items():
                found, problem = run_json(command, build, timeout)
                commands[f"{build.directory.name} {name}"] = " ".join(command)
                if found is None:
                    problems.append(f"{build.directory.name} {name}: {problem}")
                    progress.note(f"  note: {problems[-1]}")
                else:
                    records.append(
                        {"mpi": build.directory.name, "micro": name, "round": round_index, **found}
                    )
                progress.step()
            for point in configs:
                exchange = ["--exchange", point.exchange]
                command = stencil_command(build, point, hosts, cores, words + exchange)
                commands[f"{build.directory.name} {point.label} v{point.v}"] = " ".join(command)
                found, problem = run_json(command, build, timeout)
                if found is None:
                    problems.append(f"{build.directory.name} {point.label} V={point.v}: {problem}")
                    progress.note(f"  note: {problems[-1]}")
                else:
                    records.append(
                        {
                            "mpi": build.directory.name,
                            "kind": point.kind,
                            "exchange": point.exchange,
                            "progress": point.progress,
                            "v": point.v,
                            "round": round_index,
                            "load": list(os.getloadavg()),
                            **found,
                        }
                    )
                progress.step()
    summary = summarize(records, builds, stencil, hosts, cores, calibrations)
    result = bench.document(
        "virt",
        rounds,
        trials,
        problems,
        records,
        summary,
        stencil={**stencil.__dict__, "steps": steps, "hosts": hosts, "cores": cores},
        load_average=list(os.getloadavg()),
        commands=commands,
    )
    path = bench.save(out, result, table(result))
    plot(result, out / "virt.png")
    return path


def summarize(records, builds, stencil, hosts, cores, calibrations) -> dict:
    """Medians over the rounds; the model's prediction and error on each
    virtual point, its median absolute error and its best V's."""
    summary: dict = {"micro": [], "stencil": [], "model": {}}
    for build in builds:
        name = build.directory.name
        for micro in dict.fromkeys(r["micro"] for r in records if "micro" in r):
            found = [r for r in records if r.get("micro") == micro and r["mpi"] == name]
            row = {"mpi": name, "micro": micro, "rounds": len(found)}
            for key in ("tandem_ns", "swapcontext_ns", "latency_us", "bandwidth_gbs"):
                values = [r[key] for r in found if key in r]
                if values:
                    row[key] = statistics.median(values)
            for key in ("memcpy_gbs", "bandwidth_of_memcpy"):
                values = [r[key] for r in found if key in r]
                if values:
                    row[key] = statistics.median(values)
            summary["micro"].append(row)
        calibration = None
        if name in calibrations and calibrations[name].exists():
            calibration = model.load(calibrations[name])
        keys = dict.fromkeys(
            (r["kind"], r["exchange"], r["progress"], r["v"])
            for r in records
            if r.get("mpi") == name and "kind" in r
        )
        for kind, exchange, progress, v in keys:
            found = [
                r
                for r in records
                if r.get("mpi") == name
                and (r.get("kind"), r.get("exchange"), r.get("progress"), r.get("v"))
                == (kind, exchange, progress, v)
            ]
            row = {
                "mpi": name,
                "kind": kind,
                "exchange": exchange,
                "progress": progress,
                "v": v,
                "rounds": len(found),
                "step_s": statistics.median(r["step_s"] for r in found),
                "compute_s": statistics.median(r["compute_s"] for r in found),
                "checksum": sorted({r["checksum"] for r in found}),
            }
            if calibration is not None and kind == "virtual":
                predicted = model.predict_one(calibration, stencil, hosts, cores, v)["step_s"]
                row["model_step_s"] = predicted
                row["model_error"] = (predicted - row["step_s"]) / row["step_s"]
            summary["stencil"].append(row)
        # the model, per setting of the virtual ranks' progress thread
        for thread in dict.fromkeys(
            r["progress"] for r in summary["stencil"] if r["mpi"] == name and "model_error" in r
        ):
            modelled = [
                r
                for r in summary["stencil"]
                if r["mpi"] == name and "model_error" in r and r["progress"] == thread
            ]
            blocking = [r for r in modelled if r["exchange"] == "blocking"]
            predictions = model.predict(
                calibration, stencil, hosts, cores, sorted({r["v"] for r in blocking})
            )
            chosen = model.best(predictions)["v"] if predictions else None
            measured_best = min(blocking, key=lambda r: r["step_s"]) if blocking else None
            at_chosen = next((r for r in blocking if r["v"] == chosen), None)
            summary["model"].setdefault(name, {})[thread] = {
                "calibration": str(calibrations[name]),
                "median_abs_error": statistics.median(abs(r["model_error"]) for r in modelled),
                "points": len(modelled),
                "best_v_model": chosen,
                "best_v_measured": measured_best["v"] if measured_best else None,
                "model_best_over_measured_best": (
                    at_chosen["step_s"] / measured_best["step_s"]
                    if at_chosen and measured_best
                    else None
                ),
            }
    summary["targets"] = targets(summary)
    return summary


def targets(summary: dict) -> dict:
    """Issue 36's targets, per MPI and per setting of the virtual ranks'
    progress thread ("off", "thread"), from the stencil's medians."""
    found = {}
    for name in dict.fromkeys(r["mpi"] for r in summary["stencil"]):
        rows = [r for r in summary["stencil"] if r["mpi"] == name]
        # the program written with nonblocking calls, one process per core
        # (at V >= 2 processes share a core, or take the spare one that the
        # progress thread's configurations get on hosts of their own CPUs)
        written = [
            r
            for r in rows
            if r["kind"] == "mpi"
            and r["progress"] == "drive"
            and r["exchange"] != "blocking"
            and r["v"] == 1
        ]
        reference = min(written, key=lambda r: r["step_s"]) if written else None
        for thread in dict.fromkeys(r["progress"] for r in rows if r["kind"] == "virtual"):
            blocking = [
                r
                for r in rows
                if r["kind"] == "virtual"
                and r["exchange"] == "blocking"
                and r["progress"] == thread
            ]
            v1 = next((r for r in blocking if r["v"] == 1), None)
            best = min(blocking, key=lambda r: r["step_s"]) if blocking else None
            entry = {}
            if v1 and best:
                entry["best_v"] = best["v"]
                entry["speedup_over_v1"] = v1["step_s"] / best["step_s"]
            if best and reference:
                entry["reference"] = f"mpi {reference['exchange']} + progress, V={reference['v']}"
                entry["best_over_reference"] = best["step_s"] / reference["step_s"]
            model_row = summary["model"].get(name, {}).get(thread)
            if model_row:
                entry["model_median_abs_error"] = model_row["median_abs_error"]
                entry["model_best_over_measured_best"] = model_row["model_best_over_measured_best"]
            found.setdefault(name, {})[thread] = entry
    return found


def table(result: dict) -> str:
    s = result["summary"]
    st = result["stencil"]
    where = (
        f"{result['hosts']['count']} simulated hosts, link {result['hosts']['link'] or 'unshaped'}"
        if "hosts" in result
        else "one host"
    )
    lines = [
        f"# tandem bench virt: {where}; load average {result['load_average'][0]:.2f} at the end",
        "",
        "## Micro-benchmarks (one host)",
        "",
    ]
    rows = []
    for r in s["micro"]:
        if r["micro"] == "switch":
            what = f"{bench.figure(r['tandem_ns'])} ns (swapcontext {bench.figure(r['swapcontext_ns'])} ns)"
            rows.append([r["mpi"], "switch", what, ""])
        else:
            rows.append(
                [
                    r["mpi"],
                    f"ping-pong {r['micro']}",
                    f"{bench.figure(r['latency_us'])} us one way",
                    f"{bench.figure(r['bandwidth_gbs'])} GB/s"
                    + (
                        f", {bench.figure(r['bandwidth_of_memcpy'])} of memcpy"
                        if "bandwidth_of_memcpy" in r
                        else ""
                    ),
                ]
            )
    lines.append(bench.markdown(["MPI", "what", "time", "4 MiB bandwidth"], rows))
    lines += [
        f"## Stencil: grid {st['gx']} x {st['gy']}, kmax {st['kmax']}, halo {st['halo']}, "
        f"{st['steps']} steps, {st['hosts']} host(s) x {st['cores']} core(s) x V",
        "",
        "Time per step (ms), median over the rounds; the model's prediction in brackets.",
        "",
    ]
    vs = sorted({r["v"] for r in s["stencil"]})
    for name in dict.fromkeys(r["mpi"] for r in s["stencil"]):
        rows = []
        labels = dict.fromkeys(
            (r["kind"], r["exchange"], r["progress"]) for r in s["stencil"] if r["mpi"] == name
        )
        for kind, exchange, progress in labels:
            cells = []
            for v in vs:
                r = next(
                    (
                        r
                        for r in s["stencil"]
                        if r["mpi"] == name
                        and (r["kind"], r["exchange"], r["progress"], r["v"])
                        == (kind, exchange, progress, v)
                    ),
                    None,
                )
                if r is None:
                    cells.append("")
                    continue
                cell = f"{r['step_s'] * 1e3:.3f}"
                if "model_step_s" in r:
                    cell += f" ({r['model_step_s'] * 1e3:.3f}, {r['model_error']:+.0%})"
                cells.append(cell)
            label = Point(kind, exchange, progress, 1).label
            rows.append([name, label, *cells])
        lines.append(bench.markdown(["MPI", "configuration", *[f"V={v}" for v in vs]], rows))
    for (name, thread), t in (
        ((name, thread), t) for name, by in s["targets"].items() for thread, t in by.items()
    ):
        parts = [] if thread == "off" else ["with the progress thread"]
        if "speedup_over_v1" in t:
            parts.append(f"best V = {t['best_v']}, {t['speedup_over_v1']:.2f}x V = 1 (blocking)")
        if "best_over_reference" in t:
            parts.append(f"{t['best_over_reference']:.3f} of {t['reference']}'s time")
        if "model_median_abs_error" in t:
            parts.append(
                f"model: median |error| {t['model_median_abs_error']:.0%}, its best V at "
                f"{t['model_best_over_measured_best']:.3f} of the measured best's time"
            )
        lines.append(f"- {name}: " + "; ".join(parts))
    if result["problems"]:
        lines += ["", "Problems:", *[f"- {p}" for p in result["problems"]]]
    return "\n".join(lines) + "\n"


def plot(result: dict, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    s = result["summary"]
    names = list(dict.fromkeys(r["mpi"] for r in s["stencil"]))
    if not names:
        return
    fig, axes = plt.subplots(1, len(names), figsize=(6 * len(names), 4.5), squeeze=False)
    for ax, name in zip(axes[0], names):
        rows = [r for r in s["stencil"] if r["mpi"] == name]
        labels = dict.fromkeys((r["kind"], r["exchange"], r["progress"]) for r in rows)
        for kind, exchange, progress in labels:
            mine = sorted(
                (
                    r
                    for r in rows
                    if (r["kind"], r["exchange"], r["progress"]) == (kind, exchange, progress)
                ),
                key=lambda r: r["v"],
            )
            style = "-o" if kind == "virtual" else "--s"
            ax.plot(
                [r["v"] for r in mine],
                [r["step_s"] * 1e3 for r in mine],
                style,
                label=Point(kind, exchange, progress, 1).label,
            )
            if (
                kind == "virtual"
                and exchange == "blocking"
                and all("model_step_s" in r for r in mine)
            ):
                ax.plot(
                    [r["v"] for r in mine],
                    [r["model_step_s"] * 1e3 for r in mine],
                    ":k",
                    label="model (virtual)",
                )
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")  # oversubscribed processes take tens of times longer
        ax.set_xlabel("V, ranks per core")
        ax.set_ylabel("time per step (ms)")
        st = result["stencil"]
        where = f"{st['hosts']} host(s)" + (
            f", link {result['hosts']['link']}"
            if "hosts" in result and result["hosts"]["link"]
            else ""
        )
        ax.set_title(f"{name}: stencil {st['gx']}x{st['gy']}, {where}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def rewrite(out: Path, calibration: Path | None = None) -> Path:
    """The summary, table and plot of a run of tandem bench virt in 'out'
    made again from its records, with the model as it is now and the
    calibration 'calibration' (default: the model-MPI.json files in 'out',
    else those the run named): `python -m tandem.virtbench DIR [CALIBRATION]`."""
    from types import SimpleNamespace

    result = json.loads((out / "virt.json").read_text())
    st = result["stencil"]
    stencil = model.Stencil(st["gx"], st["gy"], st["kmax"], st["halo"])
    names = list(dict.fromkeys(r["mpi"] for r in result["records"]))
    builds = [SimpleNamespace(directory=Path(name)) for name in names]
    calibrations = {}
    for name in names:
        found = calibration or out / f"model-{name}.json"
        if not found.exists():
            found = Path(result["summary"]["model"].get(name, {}).get("calibration", found))
        calibrations[name] = found
    result["summary"] = summarize(
        result["records"], builds, stencil, st["hosts"], st["cores"], calibrations
    )
    path = bench.save(out, result, table(result))
    plot(result, out / "virt.png")
    return path


if __name__ == "__main__":
    import sys

    rewrite(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)
