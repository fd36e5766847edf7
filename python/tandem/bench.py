"""tandem bench overlap: the overlap benchmark across MPIs, transports and
progress configurations, run interleaved, written as JSON and drawn as PNG.

Each round runs every configuration once, in turn, so that a change in the
machine's load hits all of them alike; the summary takes medians over rounds.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .builds import Build, TandemError
from .hosts import Hosts
from .launch import launch_command, launcher_environment, run_launch
from .shaping import SHAPED_BURST_BYTES, rate_bits, tbf

NETNS = "tandem-net"
VARIANTS = ("isend_recv", "irecv_send", "both")


@dataclass
class Config:
    """One way of running the benchmark: with or without Tandem, and what else."""

    name: str
    tandem: bool
    env: dict[str, str] = field(default_factory=dict)
    launcher_args: list[str] = field(default_factory=list)


def configs_for(build: Build, transport: str) -> list[Config]:
    """Native, Tandem's two strategies as configured by default (TANDEM_POLL=yield,
    TANDEM_WAIT=auto) and with blocked ranks always lending their core
    (TANDEM_WAIT=lend), drive waiting on sockets (TANDEM_POLL=event) where the
    transport has them, the MPI library's own progress thread, and on
    simulated hosts Tandem with no setting (tandem-auto)."""
    configs = [
        Config("native", False),
        Config("tandem-drive-yield", True, {"TANDEM_PROGRESS": "drive", "TANDEM_POLL": "yield"}),
        Config("tandem-drive-lend", True, {"TANDEM_PROGRESS": "drive", "TANDEM_WAIT": "lend"}),
        Config("tandem-proxy-yield", True, {"TANDEM_PROGRESS": "proxy", "TANDEM_POLL": "yield"}),
        Config("tandem-proxy-lend", True, {"TANDEM_PROGRESS": "proxy", "TANDEM_WAIT": "lend"}),
    ]
    if transport != "shm":  # the event policy waits on sockets: TCP transports only
        configs.append(
            Config("tandem-drive-event", True, {"TANDEM_PROGRESS": "drive", "TANDEM_POLL": "event"})
        )
    if build.family == "MPICH":
        configs.append(Config("mpich-async-thread", False, {"MPIR_CVAR_ASYNC_PROGRESS": "1"}))
    elif transport != "shm":
        configs.append(
            Config("ompi-tcp-thread", False, {}, ["--mca", "btl_tcp_progress_thread", "1"])
        )
    if transport == "hosts":  # what TANDEM_PROGRESS=auto decides where ranks talk across hosts
        configs.append(Config("tandem-auto", True, {}))
    return configs


# The simulated hosts of tandem bench --hosts while it runs (the transport
# "hosts": one rank per host on 2 hosts, tandem/hosts.py), else None.
hosts_network: Hosts | None = None


def transport_settings(build: Build, transport: str) -> tuple[list[str], dict[str, str]]:
    """Launcher arguments and rank variables that select a transport (the
    hosts' own come with their launch: launch_for)."""
    if transport in ("shm", "hosts"):
        return [], {}
    if build.family == "Open MPI":
        args = ["--mca", "pml", "ob1", "--mca", "btl", "self,tcp"]
        if transport == "shaped":
            args += ["--mca", "btl_tcp_if_include", "lo", "--mca", "oob_tcp_if_include", "lo"]
        return args, {}
    env = {"UCX_TLS": "self,tcp", "MPIR_CVAR_NOLOCAL": "1"}
    if transport == "shaped":
        env["UCX_NET_DEVICES"] = "lo"
    return [], env


def settle_us(rate: str) -> int:
    """The pause that refills the shaper's bucket twice over: a timing that
    starts after it starts from a rested network (bench/coll_overlap.c)."""
    return int(2e6 * SHAPED_BURST_BYTES * 8 / rate_bits(rate)) + 1


def shaped_network(rate: str) -> None:
    """The network namespace whose loopback is rate-limited (docs/PERFORMANCE.md)."""
    if os.geteuid() != 0:
        raise TandemError("the shaped network needs root (ip netns, tc); run as root or skip it")
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    commands = []
    if NETNS not in names.split():
        commands += [
            ["ip", "netns", "add", NETNS],
            ["ip", "netns", "exec", NETNS, "ip", "link", "set", "lo", "up"],
        ]
    commands.append(
        ["ip", "netns", "exec", NETNS, "tc", "qdisc", "replace", "dev", "lo", "root"] + tbf(rate)
    )
    for command in commands:
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise TandemError(f"{' '.join(command)} failed: {result.stderr.strip()}")


def duration(seconds: float) -> str:
    """A duration as people say it: 45 s, 12 min, 1 h 05 min."""
    if seconds < 89.5:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes <= 60 else f"{minutes // 60} h {minutes % 60:02d} min"


class Progress:
    """A line on stderr after each launch of a benchmark: the launches done
    out of all, and the time left at the pace so far (on a terminal, one
    line rewritten in place)."""

    def __init__(self, total: int):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.in_place = sys.stderr.isatty()

    def step(self) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.start
        if self.done == self.total:
            line = f"tandem bench: {self.total} launches in {duration(elapsed)}"
        else:
            left = elapsed / self.done * (self.total - self.done)
            line = f"tandem bench: {self.done}/{self.total} launches, about {duration(left)} left"
        self.show(line, last=self.done == self.total)

    def note(self, text: str) -> None:
        """A line of its own, such as a problem of a launch."""
        self.show(text, last=True)

    def show(self, line: str, last: bool) -> None:
        if self.in_place:
            print(f"\r{line}\033[K", end="\n" if last else "", file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)


def processes(nprocs: int, config: Config) -> int:
    """The processes a launch of 'nprocs' ranks starts on one host: with
    progress processes (--also TANDEM_GHOSTS=G) G more beside them."""
    ghosts = config.env.get("TANDEM_GHOSTS", "0") if config.tandem else "0"
    return nprocs + (int(ghosts) if ghosts.isdigit() else 0)


def launch_for(build, nprocs, program, transport, config) -> list[str]:
    """The command that launches a benchmark program on a transport: in the
    shaped network's namespace, or on the simulated hosts."""
    args, env = transport_settings(build, transport)
    env = {**env, **config.env, **every_env}
    if transport == "hosts":
        assert hosts_network is not None, "tandem bench --hosts makes the hosts"
        ghosts = processes(nprocs, config) - nprocs  # on each host, last on it
        return hosts_network.launch_command(
            build,
            nprocs + ghosts * hosts_network.count,
            program,
            config.tandem,
            env,
            config.launcher_args,
        )
    command = launch_command(
        build, processes(nprocs, config), program, config.tandem, env, args + config.launcher_args
    )
    if transport == "shaped":
        command = ["ip", "netns", "exec", NETNS, *command]
    return command


def launched_outcome(command, build, transport, timeout):
    """run_launch, then, after a launch killed on the hosts, the ranks it
    left there (they run in process groups of their own)."""
    outcome = run_launch(command, launcher_environment(build), timeout)
    if outcome.timed_out and transport == "hosts" and hosts_network is not None:
        hosts_network.sweep()
    return outcome


def settle_for(transport: str, rate: str) -> int:
    """settle_us on a shaped network (the loopback, or the hosts' links), else 0."""
    if transport == "shaped":
        return settle_us(rate)
    if transport == "hosts" and hosts_network is not None and hosts_network.link:
        return settle_us(hosts_network.link)
    return 0


def run_records(build, nprocs, program, transport, config, timeout):
    """One launch of a benchmark program that prints JSON lines: its records,
    and a problem (a failure, or a hang in MPI_Finalize) or None."""
    command = launch_for(build, nprocs, program, transport, config)
    outcome = launched_outcome(command, build, transport, timeout)
    records = [json.loads(line) for line in outcome.stdout.splitlines() if line.startswith("{")]
    stacks = outcome.where_killed
    if outcome.returncode not in (0, None) or not records:
        return (
            [],
            f"{' '.join(command)}: exit {outcome.returncode}: "
            f"{outcome.stderr.strip()[-500:]}{stacks}",
        )
    name = Path(program[0]).name
    hung = f"{build.family} {transport} {config.name} {name}: hung in MPI_Finalize, killed{stacks}"
    return records, (hung if outcome.timed_out else None)


def run_one(build, transport, config, variant, sizes, trials, timeout):
    program = [
        str(build.directory / "tandem-bench-overlap"),
        variant,
        ",".join(map(str, sizes)),
        str(trials),
    ]
    records, problem = run_records(build, 2, program, transport, config, timeout)
    if records and len(records) != len(sizes):
        return [], f"{build.family} {transport} {config.name} {variant}: missing sizes"
    return records, problem


def labelled(found: list[dict], build, transport: str, config: Config, round_index: int):
    """One run's results with what produced them."""
    return [
        {
            "mpi": build.family,
            "transport": transport,
            "config": config.name,
            "round": round_index,
            **r,
        }
        for r in found
    ]


def document(benchmark, rounds, trials, problems, records, summary, **extra) -> dict:
    """The JSON document of a benchmark run: the machine, every record, the summary."""
    return {
        "benchmark": benchmark,
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": {"cores": os.cpu_count(), "spare_core": spare_core(), "host": platform.node()},
        **(
            {"hosts": {"count": hosts_network.count, "link": hosts_network.link}}
            if hosts_network is not None
            else {}
        ),
        **({"env": dict(every_env)} if every_env else {}),
        **extra,
        "rounds": rounds,
        "trials_per_round": trials,
        "problems": problems,
        "records": records,
        "summary": summary,
    }


def save(out: Path, result: dict, table: str) -> Path:
    """Write a run's document as NAME.json and its table as NAME.md in 'out'
    (made if missing), NAME being the benchmark's; returns the JSON's path."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{result['benchmark']}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    (out / f"{result['benchmark']}.md").write_text(table)
    return path


def size_label(size: int) -> str:
    """A byte count as people write it: 8 B, 64 KiB, 1.5 MiB, 4 MiB."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{round(size / scale, 2):g} {unit}"
    return f"{size} B"


def figure(value: float) -> str:
    """A measured value with 3 significant digits or more, never in exponent
    notation: 12346, 457, 45.7, 7.93, 0.0123."""
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def markdown(columns: list[str], rows) -> str:
    """A Markdown table: the column titles, then one line per row of cells."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def spare_core(nranks: int = 2) -> bool:
    """Whether the machine has a core beyond the ranks' and their progress threads'."""
    return (os.cpu_count() or 1) > nranks


def eager_configs(build: Build, transport: str) -> list[Config]:
    """Every operation counted or proxied, to find the size from which it pays."""
    return [
        Config("native", False),
        Config("tandem-drive", True, {"TANDEM_PROGRESS": "drive", "TANDEM_EAGER_LIMIT": "0"}),
        Config("tandem-proxy", True, {"TANDEM_PROGRESS": "proxy", "TANDEM_EAGER_LIMIT": "0"}),
    ]


def overlap(
    builds,
    transports,
    sizes,
    rounds,
    trials,
    out: Path,
    rate: str,
    timeout: float,
    name: str = "overlap",
    configs_of=configs_for,
    table_from_bytes: int = 1 << 20,
) -> Path:
    """The overlap benchmark; name="eager" with eager_configs measures small sizes."""

    def run_point(build, transport, config, variant):
        return run_one(build, transport, config, variant, sizes, trials, timeout)

    records, problems = rounds_of(builds, transports, VARIANTS, configs_of, run_point, rounds)
    result = document(
        name,
        rounds,
        trials,
        problems,
        records,
        summarize(records),
        shaped_rate=rate if "shaped" in transports else None,
        sizes=sizes,
    )
    path = save(out, result, markdown_table(result, table_from_bytes))
    replot(result, out)
    return path


def summarize(records: list[dict]) -> list[dict]:
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault(
            (r["mpi"], r["transport"], r["config"], r["variant"], r["bytes"]), []
        ).append(r)
    summary = []
    for (mpi, transport, config, variant, size), rs in sorted(groups.items()):
        summary.append(
            {
                "mpi": mpi,
                "transport": transport,
                "config": config,
                "variant": variant,
                "bytes": size,
                "availability": statistics.median(r["availability"] for r in rs),
                "slowdown": statistics.median(r["slowdown"] for r in rs),
                "transfer_s": statistics.median(r["transfer_s"] for r in rs),
                "rounds": len(rs),
            }
        )
    return summary


def plot(result: dict, out: Path, name: str = "overlap") -> list[Path]:
    """Per MPI and transport: availability (0-100%) and compute slowdown against
    the message size, one column per variant, one colour per configuration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = result["summary"]
    paths = []
    for mpi, transport in sorted({(s["mpi"], s["transport"]) for s in summary}):
        rows = [s for s in summary if s["mpi"] == mpi and s["transport"] == transport]
        fig, axes = plt.subplots(2, 3, figsize=(13, 7), sharex=True, sharey="row")
        for col, variant in enumerate(VARIANTS):
            for config in sorted({s["config"] for s in rows}, key=plot_order):
                line = sorted(
                    (s for s in rows if s["config"] == config and s["variant"] == variant),
                    key=lambda s: s["bytes"],
                )
                x = [s["bytes"] for s in line]
                style = line_style(config)
                axes[0][col].plot(x, [100 * s["availability"] for s in line], label=config, **style)
                axes[1][col].plot(x, [100 * s["slowdown"] for s in line], label=config, **style)
            axes[0][col].set_title(variant)
            axes[0][col].set_ylim(-5, 105)
            size_axis(axes[1][col], {s["bytes"] for s in rows})
        axes[0][0].set_ylabel("availability (%)")
        axes[1][0].set_ylabel("compute slowdown (%)")
        axes[0][0].legend(fontsize=8)
        what = "Overlap" if name == "overlap" else "Overlap, every operation to Tandem"
        fig.suptitle(
            f"{what}, {mpi}, {transport_label(transport, result)}: " + run_note(result, ranks=2)
        )
        fig.tight_layout()
        paths.append(out / f"{name}-{mpi.lower().replace(' ', '')}-{transport}.png")
        fig.savefig(paths[-1], dpi=80)
        plt.close(fig)
    return paths


# One colour per configuration in every plot, so that a configuration reads
# the same in every panel and figure: native black, the MPIs' own progress
# threads grey and brown (dashed), Tandem's drive blue, proxy red, event green.
CONFIG_COLOURS = {
    "native": "black",
    "native-multiple": "dimgray",
    "mpich-async-thread": "tab:gray",
    "ompi-tcp-thread": "tab:brown",
    "ompi-monitoring": "tab:brown",
    "tandem": "tab:olive",
    "tandem-off": "tab:olive",
    "tandem-monitor": "tab:purple",
    "tandem-drive": "tab:blue",
    "tandem-drive-yield": "tab:blue",
    "tandem-coll-drive": "tab:blue",
    "tandem-drive-lend": "tab:cyan",
    "tandem-drive-event": "tab:green",
    "tandem-coll-event": "tab:green",
    "tandem-proxy": "tab:red",
    "tandem-proxy-yield": "tab:red",
    "tandem-coll": "tab:red",
    "tandem-proxy-lend": "tab:pink",
}
ANCHORS = ("mpich-async-thread", "ompi-tcp-thread", "ompi-monitoring")
MODE_LINES = {"nbc": "--", "nbc+overlap": ":", "nbc4": "--", "nbc8": "-.", "nbc16": ":"}


def line_style(label: str) -> dict:
    """Colour, line and marker of a configuration's line; a label 'CONFIG MODE'
    (nbc, ioapp) keeps CONFIG's colour and draws MODE as the line's dashes."""
    import zlib

    config, _, mode = label.partition(" ")
    colour = CONFIG_COLOURS.get(config, f"C{zlib.crc32(config.encode()) % 10}")
    style = {"color": colour, "marker": "o", "linestyle": "-"}
    if mode:
        style["linestyle"] = MODE_LINES.get(mode, "-")
    elif config in ANCHORS:
        style["linestyle"] = "--"
    if config == "native":
        style["linewidth"] = 2.5
    return style


def plot_order(label: str) -> tuple:
    """Native first, then the MPIs' own threads, then Tandem's configurations."""
    config = label.partition(" ")[0]
    return (config != "native", config not in ANCHORS, label)


def size_axis(ax, sizes) -> None:
    """Message sizes on a log2 axis, each measured size labelled in KiB or MiB."""
    ticks = sorted(sizes)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ticks)
    ax.set_xticklabels([size_label(s) for s in ticks])
    ax.minorticks_off()
    ax.set_xlabel("message size")


def transport_label(transport: str, result: dict) -> str:
    rate = result.get("shaped_rate") or result.get("rate") or ""
    return {
        "shaped": f"TCP over a loopback shaped to {rate}".strip(),
        "tcp": "loopback TCP",
        "shm": "shared memory",
    }.get(transport, transport)


def run_note(result: dict, ranks=None) -> str:
    """The machine and the ranks of a run, as a plot's title says them."""
    machine = result.get("machine", {})
    spare = "a spare core" if machine.get("spare_core") else "no spare core"
    on = f"{ranks} ranks on " if ranks else ""
    return (
        f"{on}a {machine.get('cores', '?')}-core machine ({machine.get('host', '?')}, {spare}); "
        f"medians of {result.get('rounds', '?')} interleaved rounds"
    )


def overlap_cell(s: dict, native: dict | None) -> str:
    """availability / slowdown (%) / the transfer alone: in ms for native, else
    as a multiple of native's (a slower transfer hides more of itself)."""
    cell = f"{100 * s['availability']:.0f} / {100 * s['slowdown']:+.0f}"
    if s["config"] == "native":
        return cell + f" / {1e3 * s['transfer_s']:.2f} ms"
    if native and native["transfer_s"] > 0:
        return cell + f" / {s['transfer_s'] / native['transfer_s']:.1f}x"
    return cell


def markdown_table(result: dict, min_bytes: int = 1 << 20) -> str:
    """One cell per configuration (overlap_cell), for sizes >= min_bytes."""
    summary = [s for s in result["summary"] if s["bytes"] >= min_bytes]
    configs = sorted({s["config"] for s in summary}, key=lambda c: (c != "native", c))
    found = {(s["mpi"], s["transport"], s["variant"], s["bytes"], s["config"]): s for s in summary}
    lines = [
        "| MPI | transport | variant | size | " + " | ".join(configs) + " |",
        "|---|---|---|---|" + "---|" * len(configs),
    ]
    for key in sorted({(s["mpi"], s["transport"], s["variant"], s["bytes"]) for s in summary}):
        native = found.get(key + ("native",))
        cells = [
            overlap_cell(found[key + (config,)], native) if key + (config,) in found else "-"
            for config in configs
        ]
        mpi, transport, variant, size = key
        label = size_label(size)
        lines.append(f"| {mpi} | {transport} | {variant} | {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def latency_configs() -> list[Config]:
    return [
        Config("native", False),
        Config("native-multiple", False, {"BENCH_THREAD_LEVEL": "multiple"}),
        Config("tandem-off", True, {"TANDEM_PROGRESS": "off"}),
        Config("tandem-drive", True, {"TANDEM_PROGRESS": "drive"}),
        Config("tandem-proxy", True, {"TANDEM_PROGRESS": "proxy"}),
    ]


def latency(builds, transports, sizes, rounds, trials, out: Path, timeout: float) -> Path:
    """Ping-pong latency/bandwidth and the 8-byte message rate, interleaved."""
    records, problems = [], []
    progress = Progress(len(builds) * len(transports) * rounds * len(with_also(latency_configs())))
    for build in builds:
        for round_index in range(rounds):  # every transport in each round (rounds_of)
            for transport in transports:
                for config in with_also(latency_configs()):
                    program = [
                        str(build.directory / "tandem-bench-pingpong"),
                        ",".join(map(str, sizes)),
                        str(trials),
                    ]
                    command = launch_for(build, 2, program, transport, config)
                    outcome = launched_outcome(command, build, transport, timeout)
                    found = [
                        json.loads(line)
                        for line in outcome.stdout.splitlines()
                        if line.startswith("{")
                    ]
                    if outcome.timed_out or outcome.returncode not in (0, None):
                        problems.append(
                            f"{build.family} {transport} {config.name}: exit "
                            f"{outcome.returncode}, timed out {outcome.timed_out}"
                            f"{outcome.where_killed}"
                        )
                    records += labelled(found, build, transport, config, round_index)
                    progress.step()
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        key = (r["mpi"], r["transport"], r["config"], r["test"], r["bytes"])
        groups.setdefault(key, []).append(r)
    summary = []
    for (mpi, transport, config, test, size), rs in sorted(groups.items()):
        entry = {
            "mpi": mpi,
            "transport": transport,
            "config": config,
            "test": test,
            "bytes": size,
            "rounds": len(rs),
        }
        for field_name in ("latency_us", "bandwidth_mbs", "rate_per_s"):
            if field_name in rs[0]:
                entry[field_name] = statistics.median(r[field_name] for r in rs)
        summary.append(entry)
    result = document("latency", rounds, trials, problems, records, summary)
    return save(out, result, latency_table(summary))


def latency_table(summary: list[dict]) -> str:
    """8-byte latency, 4 MiB-or-largest bandwidth and message rate, per configuration."""
    configs = [c.name for c in with_also(latency_configs())]
    lines = [
        "| MPI | transport | measure | " + " | ".join(configs) + " |",
        "|---|---|---|" + "---|" * len(configs),
    ]
    for mpi, transport in sorted({(s["mpi"], s["transport"]) for s in summary}):
        rows = [s for s in summary if (s["mpi"], s["transport"]) == (mpi, transport)]
        pingpong = [s for s in rows if s["test"] == "pingpong"]
        smallest = min(s["bytes"] for s in pingpong)
        largest = max(s["bytes"] for s in pingpong)
        measures = [  # label, test, size, field, how its value is written
            (f"latency {size_label(smallest)} (us)", "pingpong", smallest, "latency_us", "{:.3f}"),
            (f"bandwidth {size_label(largest)} (MB/s)", "pingpong", largest, "bandwidth_mbs", ""),
            ("8-byte message rate (1/s)", "message_rate", 8, "rate_per_s", "{:.3g}"),
        ]
        for label, test, size, field_name, fmt in measures:
            write = fmt.format if fmt else figure
            cells = []
            for config in configs:
                match = [
                    s for s in rows if (s["config"], s["test"], s["bytes"]) == (config, test, size)
                ]
                cells.append(write(match[0][field_name]) if match else "-")
            lines.append(f"| {mpi} | {transport} | {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# Variables under which every Tandem configuration also runs, interleaved
# with the others ("tandem bench --also VAR=VALUE"): an A/B of a setting.
also_env: dict[str, str] = {}

# Variables of every launch, native ones included ("tandem bench -e
# VAR=VALUE"), over the configurations' own: OMPI_MCA_pml=ucx runs Open MPI
# on UCX across the simulated hosts.
every_env: dict[str, str] = {}


def with_also(configs: list[Config]) -> list[Config]:
    """The configurations and, after each of Tandem's, the same under also_env."""
    if not also_env:
        return configs
    suffix = "+" + ",".join(f"{k}={v}" for k, v in also_env.items())
    out = []
    for config in configs:
        out.append(config)
        if config.tandem:
            env = {**config.env, **also_env}
            out.append(Config(config.name + suffix, True, env, config.launcher_args))
    return out


def rounds_of(builds, transports, points, configs_of, run_point, rounds):
    """Run run_point(build, transport, config, point) for every point (a
    variant, a rank count) under every configuration, interleaved round by
    round, transports included (each round runs every transport: the shaped
    loopback beside the simulated hosts, plain TCP beside them, in the same
    minutes of a shared machine); returns the labelled records and the
    problems."""
    records, problems = [], []
    configs_per_run = sum(len(with_also(configs_of(b, t))) for b in builds for t in transports)
    progress = Progress(configs_per_run * rounds * len(points))
    for build in builds:
        configs = {t: with_also(configs_of(build, t)) for t in transports}
        for round_index in range(rounds):
            for transport in transports:
                for point in points:
                    for config in configs[transport]:
                        found, problem = run_point(build, transport, config, point)
                        if problem:
                            problems.append(problem)
                            progress.note(f"  note: {problem}")
                        records += labelled(found, build, transport, config, round_index)
                        progress.step()
    return records, problems


def launched(program_of, timeout):
    """A run_point for rounds_of that launches program_of(build, point) on
    'point' ranks, or on point[0] ranks when the point is a tuple."""

    def run_point(build, transport, config, point):
        nprocs = point[0] if isinstance(point, tuple) else point
        return run_records(build, nprocs, program_of(build, point), transport, config, timeout)

    return run_point


def summarize_by(records: list[dict], keys: tuple, fields: tuple) -> list[dict]:
    """Medians of 'fields' over the records that agree on 'keys'."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    return [
        {
            **dict(zip(keys, key)),
            **{f: statistics.median(r[f] for r in rs) for f in fields},
            "rounds": len(rs),
        }
        for key, rs in sorted(groups.items())
    ]


def halo(
    builds, transports, nprocs_list, cells, halo_bytes, steps, rounds, trials, out, timeout, rate
):
    """APSM's ghost-cell exchange, strong scaling over nprocs_list."""

    def program_of(build, nprocs):
        name = str(build.directory / "tandem-bench-halo")
        return [name, str(cells), str(halo_bytes), str(steps), str(trials)]

    def configs_of(build, transport):  # no blocking call in the exchange: nothing to lend
        return [c for c in configs_for(build, transport) if not c.name.endswith("-lend")]

    records, problems = rounds_of(
        builds, transports, nprocs_list, configs_of, launched(program_of, timeout), rounds
    )
    keys = ("mpi", "transport", "config", "ranks")
    summary = summarize_by(records, keys, ("step_s", "compute_s", "comm_s", "hidden"))
    result = document(
        "halo",
        rounds,
        trials,
        problems,
        records,
        summary,
        cells=cells,
        halo_bytes=halo_bytes,
        shaped_rate=rate if "shaped" in transports else None,
    )
    path = save(out, result, halo_table(summary))
    replot(result, out)
    return path


def halo_table(summary: list[dict]) -> str:
    columns = ["MPI", "transport", "ranks", "config", "step (ms)", "compute (ms)"]
    return markdown(
        columns + ["exchange (ms)", "hidden"],
        (
            [s["mpi"], s["transport"], s["ranks"], s["config"], f"{1e3 * s['step_s']:.2f}"]
            + [f"{1e3 * s['compute_s']:.2f}", f"{1e3 * s['comm_s']:.2f}"]
            + [f"{100 * s['hidden']:.0f}%"]
            for s in summary
        ),
    )


def rma(builds, transports, sizes, work, flavours, rounds, trials, out, timeout, rate):
    """A truly passive target (bench/rma_passive.c): rank 0 gets each size
    from rank 1's window under a lock while rank 1 computes 'work' seconds
    without MPI calls, and while it waits in a barrier (the pure time); for
    each window flavour (allocate, create)."""

    def program_of(build, point):
        name = str(build.directory / "tandem-bench-rma-passive")
        return [name, ",".join(map(str, sizes)), f"{work:g}", str(trials), point[1]]

    records, problems = rounds_of(
        builds,
        transports,
        [(2, flavour) for flavour in flavours],
        rma_configs,
        launched(program_of, timeout),
        rounds,
    )
    keys = ("mpi", "transport", "flavour", "bytes", "config")
    summary = summarize_by(records, keys, ("pure_s", "busy_s", "busy_over_pure", "wrong_bytes"))
    result = document(
        "rma",
        rounds,
        trials,
        problems,
        records,
        summary,
        work_s=work,
        shaped_rate=rate if "shaped" in transports else None,
    )
    path = save(out, result, rma_table(summary))
    replot(result, out)
    return path


def rma_table(summary: list[dict]) -> str:
    """Pure and busy get times, and busy over pure (about 1 for a passive
    target, the computation over the pure time for one that is not)."""
    columns = ["MPI", "transport", "window", "size", "config", "pure (ms)", "busy (ms)"]
    return markdown(
        columns + ["busy / pure", "wrong bytes"],
        (
            [s["mpi"], s["transport"], s["flavour"], size_label(s["bytes"]), s["config"]]
            + [f"{1e3 * s['pure_s']:.2f}", f"{1e3 * s['busy_s']:.2f}"]
            + [f"{s['busy_s'] / s['pure_s']:.1f}" if s["pure_s"] > 0 else "-"]
            + [f"{s['wrong_bytes']:.0f}"]
            for s in summary
        ),
    )


def smb(builds, transports, sizes, rounds, trials, out, timeout, rate):
    """Host overhead and application availability of MPI_Get and MPI_Put
    (bench/rma_smb.c, Sandia's SMB test as DART-MPI's paper adapted it): rank 0
    gets or puts each size, works, flushes, while rank 1 runs the same work
    without MPI calls; the work doubles until an iteration takes 1.5 times
    the transfer alone. 'trials' iterations per work count."""

    def program_of(build, point):
        name = str(build.directory / "tandem-bench-rma-smb")
        return [name, "get,put", ",".join(map(str, sizes)), str(trials)]

    records, problems = rounds_of(
        builds, transports, [2], rma_configs, launched(program_of, timeout), rounds
    )
    keys = ("mpi", "transport", "op", "bytes", "config")
    fields = ("availability", "overhead_s", "base_s", "target_slowdown", "wrong_bytes")
    summary = summarize_by(records, keys, fields)
    result = document(
        "smb",
        rounds,
        trials,
        problems,
        records,
        summary,
        shaped_rate=rate if "shaped" in transports else None,
    )
    path = save(out, result, smb_table(summary))
    replot(result, out)
    return path


def smb_table(summary: list[dict]) -> str:
    """Availability (1 - overhead / base_t: the share of the transfer the
    origin computed through; below 0 where it waited for the target's work)
    and overhead, with the transfer alone and what the target's work lost."""
    columns = ["MPI", "transport", "op", "size", "config", "availability", "overhead (us)"]
    return markdown(
        columns + ["transfer (us)", "target slowdown", "wrong bytes", "rounds"],
        (
            [s["mpi"], s["transport"], s["op"], size_label(s["bytes"]), s["config"]]
            + [f"{100 * s['availability']:.0f}%", f"{1e6 * s['overhead_s']:.1f}"]
            + [f"{1e6 * s['base_s']:.1f}", f"{100 * s['target_slowdown']:+.0f}%"]
            + [f"{s['wrong_bytes']:.0f}", s["rounds"]]
            for s in summary
        ),
    )


def heat(builds, transports, nprocs_list, cells, steps, rounds, trials, out, timeout, rate):
    """3D heat conduction with one-sided halos (bench/heat3d.c, DART-MPI's
    application): an edge^3 grid (edge the cube root of 'cells') in slabs,
    halos read with MPI_Rget, blocking and overlapped in each launch."""
    edge = max(8, round(cells ** (1 / 3)))

    def program_of(build, nprocs):
        name = str(build.directory / "tandem-bench-heat3d")
        return [name, str(edge), str(steps), str(trials)]

    records, problems = rounds_of(
        builds, transports, nprocs_list, rma_configs, launched(program_of, timeout), rounds
    )
    keys = ("mpi", "transport", "ranks", "config")
    fields = ("blocking_s", "overlapped_s", "update_s", "speedup")
    summary = summarize_by(records, keys, fields)
    for s in summary:  # the overlapped step against native's in the same transport
        native = next(
            (n for n in summary if n["config"] == "native" and all(n[k] == s[k] for k in keys[:3])),
            None,
        )
        s["vs_native"] = native["overlapped_s"] / s["overlapped_s"] if native else None
        s["agree"] = all(
            r["agree"] for r in records if all(r[k] == s[k] for k in keys) and "agree" in r
        )
    result = document(
        "heat",
        rounds,
        trials,
        problems,
        records,
        summary,
        edge=edge,
        steps=steps,
        shaped_rate=rate if "shaped" in transports else None,
    )
    path = save(out, result, heat_table(summary))
    replot(result, out)
    return path


def heat_table(summary: list[dict]) -> str:
    """Time per step, blocking and overlapped, and the overlapped step's
    speedup over native's overlapped step in the same transport."""
    columns = ["MPI", "transport", "ranks", "config", "blocking (ms)", "overlapped (ms)"]
    return markdown(
        columns + ["update alone (ms)", "speedup over native", "grids agree"],
        (
            [s["mpi"], s["transport"], s["ranks"], s["config"]]
            + [f"{1e3 * s['blocking_s']:.2f}", f"{1e3 * s['overlapped_s']:.2f}"]
            + [f"{1e3 * s['update_s']:.2f}"]
            + [f"{s['vs_native']:.2f}x" if s["vs_native"] else "-"]
            + ["yes" if s["agree"] else "NO"]
            for s in summary
        ),
    )


def io_configs(build: Build, transport: str) -> list[Config]:
    configs = [
        Config("native", False),
        Config("tandem-drive", True, {"TANDEM_PROGRESS": "drive"}),
        Config("tandem-proxy", True, {"TANDEM_PROGRESS": "proxy"}),
    ]
    if build.family == "MPICH":
        configs.append(Config("mpich-async-thread", False, {"MPIR_CVAR_ASYNC_PROGRESS": "1"}))
    return configs


def rma_configs(build: Build, transport: str) -> list[Config]:
    """io_configs (on simulated hosts, Tandem with no setting too), and a
    progress process per host serving the MPI_Win_allocate windows with no
    thread: on MPICH where the ranks of a host share its memory (the tcp and
    shaped transports make every process a host of its own), on Open MPI
    across the simulated hosts. There Open MPI runs every configuration on
    UCX (OMPI_MCA_pml=ucx, which brings its one-sided component): Open MPI
    4.1 makes no window across hosts over its TCP BTL."""
    configs = io_configs(build, transport)
    if transport == "hosts":
        configs.append(Config("tandem-auto", True))
    served = ("shm", "hosts") if build.family == "MPICH" else ("hosts",)
    if transport in served:
        configs.append(
            Config("tandem-ghosts", True, {"TANDEM_GHOSTS": "1", "TANDEM_PROGRESS": "off"})
        )
    if build.family == "Open MPI" and transport == "hosts":
        for config in configs:
            config.env = {"OMPI_MCA_pml": "ucx", **config.env}
    return configs


def io(builds, nprocs_list, size, rounds, trials, out, timeout, directory: Path):
    """MPI_File_iwrite_at of 'size' bytes per rank while computing."""

    def program_of(build, nprocs):
        target = directory / f"tandem-io-bench-{os.getpid()}.dat"
        return [
            str(build.directory / "tandem-bench-io-overlap"),
            str(target),
            str(size),
            str(trials),
        ]

    records, problems = rounds_of(
        builds, ["shm"], nprocs_list, io_configs, launched(program_of, timeout), rounds
    )
    keys = ("mpi", "config", "ranks", "bytes")
    summary = summarize_by(records, keys, ("availability", "slowdown", "transfer_s"))
    result = document("io", rounds, trials, problems, records, summary, directory=str(directory))
    table = markdown(
        ["MPI", "ranks", "size", "config", "availability", "slowdown", "write alone (ms)"],
        (
            [s["mpi"], s["ranks"], size_label(s["bytes"]), s["config"]]
            + [f"{100 * s['availability']:.0f}%", f"{100 * s['slowdown']:+.0f}%"]
            + [f"{1e3 * s['transfer_s']:.1f}"]
            for s in summary
        ),
    )
    path = save(out, result, table)
    replot(result, out)
    return path


def plot_lines(
    summary, x_key, y_key, scale, ylabel, path: Path, title: str, result: dict | None = None
) -> Path:
    """One panel per MPI, transport (and number of ranks, unless they are the x
    axis): y against x, one line per configuration in its colour. Sizes go on a
    log2 axis in KiB and MiB; a share in % on a common 0-100% axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def panel_of(s):
        ranks = s.get("ranks") if x_key != "ranks" else None
        return (s["mpi"], s.get("transport", ""), ranks or 0)

    panels = sorted({panel_of(s) for s in summary})
    percent = y_key in ("availability", "overlap")
    values = [scale * s[y_key] for s in summary if s[y_key] is not None]
    logarithmic = bool(values) and min(values) > 0 and max(values) > 100 * min(values)
    fig, axes = plt.subplots(
        1, len(panels), figsize=(5 * len(panels), 4.2), squeeze=False, sharey=percent
    )
    for ax, panel in zip(axes[0], panels):
        mpi, transport, ranks = panel
        rows = [s for s in summary if panel_of(s) == panel]
        for config in sorted({s["config"] for s in rows}, key=plot_order):
            line = sorted((s for s in rows if s["config"] == config), key=lambda s: s[x_key])
            ys = [scale * s[y_key] for s in line]
            ax.plot([s[x_key] for s in line], ys, label=config, **line_style(config))
        name = ", ".join(
            [mpi]
            + ([transport_label(transport, result or {})] if transport else [])
            + ([f"{ranks} rank{'s' if ranks != 1 else ''}"] if ranks else [])
        )
        ax.set_title(name, fontsize=10)
        if x_key == "bytes":
            size_axis(ax, {s["bytes"] for s in rows})
        else:
            ax.set_xticks(sorted({s[x_key] for s in rows}))
            ax.set_xlabel(X_LABELS.get(x_key, x_key))
        if percent:
            ax.set_ylim(-5, 105)
        elif logarithmic:
            ax.set_yscale("log")
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=7)
    fig.suptitle(f"{title}: {run_note(result)}" if result else title)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


X_LABELS = {"idle_us": "idle before the post (us)", "ops_per_line": "operations per line"}


def replot(result: dict, out: Path) -> list[Path]:
    """Draw a run's plots again from its JSON document (as saved by 'save') into
    'out', and return their paths; each benchmark draws its plots with this at
    the end of its run. Without matplotlib (the lent machine's python may
    lack it) it draws nothing and says so: the JSON is enough to draw them
    elsewhere."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print(f"no plots: matplotlib is not installed (the results are in {out})", file=sys.stderr)
        return []
    which, summary = result["benchmark"], result["summary"]
    if which in ("overlap", "eager"):
        return plot(result, out, which)
    if which == "monitor":
        return [plot_monitor_cost(summary["per_message"], out / "monitor.png")]
    if which == "place":
        return [plot_place(result, out)]
    figures = []  # (rows, x, y, scale, y label, file, title)
    if which == "halo":
        figures.append(
            (summary, "ranks", "step_s", 1e3, "time per step (ms)", "halo", "Ghost cells")
        )
    elif which == "io":
        figures.append((summary, "ranks", "availability", 100, "availability (%)", "io", "MPI-IO"))
    elif which == "rma":
        for flavour in sorted({s["flavour"] for s in summary}):
            rows = [s for s in summary if s["flavour"] == flavour]
            title = f"Passive target, MPI_Win_{flavour}, 2 ranks"
            figures.append(
                (
                    rows,
                    "bytes",
                    "busy_s",
                    1e3,
                    "get while the target computes (ms)",
                    f"rma_{flavour}",
                    title,
                )
            )
    elif which == "heat":
        figures.append(
            (
                summary,
                "ranks",
                "overlapped_s",
                1e3,
                "overlapped step (ms)",
                "heat",
                "3D heat conduction, halos by MPI_Rget",
            )
        )
    elif which == "smb":
        for op in sorted({s["op"] for s in summary}):
            rows = [s for s in summary if s["op"] == op]
            title = f"MPI_{op.capitalize()} + work + flush, the target computing, 2 ranks"
            figures.append(
                (rows, "bytes", "availability", 100, "availability (%)", f"smb_{op}", title)
            )
    elif which == "post":
        figures.append((summary, "idle_us", "post_s", 1e6, "post (us)", "post", "MPI_Ibcast post"))
    elif which == "coll":
        for collective in sorted({s["collective"] for s in summary}):
            rows = [s for s in summary if s["collective"] == collective]
            ranks = ", ".join(map(str, sorted({r["ranks"] for r in result["records"]})))
            title = f"OSU overlap of {collective}, {ranks} ranks"
            figures.append(
                (rows, "bytes", "overlap", 1, "overlap (%)", f"coll_{collective}", title)
            )
    elif which == "ioapp":
        for nprocs in sorted({s["ranks"] for s in summary}):
            rows = [
                {**s, "config": f"{s['config']} {s['mode']}"}
                for s in summary
                if s["ranks"] == nprocs
            ]
            title = f"I/O application, {nprocs} ranks"
            figures.append(
                (rows, "ops_per_line", "time_s", 1, "time (s)", f"ioapp_{nprocs}", title)
            )
    elif which == "nbc":
        modes = (("block", "block_s"), ("nbc", "nbc_s"), ("nbc+overlap", "nbc_overlap_s"))
        for collective in sorted({s["collective"] for s in summary}):
            rows = [
                {**s, "config": f"{s['config']} {mode}", "ms": s[key]}
                for s in summary
                if s["collective"] == collective
                for mode, key in modes
            ]
            title = f"{collective}: block, nbc and nbc+overlap"
            figures.append((rows, "bytes", "ms", 1e3, "latency (ms)", f"nbc_{collective}", title))
    return [
        plot_lines(rows, x, y, scale, label, out / f"{name}.png", title, result)
        for rows, x, y, scale, label, name, title in figures
    ]


def monitor_configs(build: Build, transport: str, output: Path) -> list[Config]:
    """Without Tandem, with Tandem and monitoring off, with TANDEM_MONITOR=1,
    and Open MPI's own monitoring (its reference: enable 2, no file)."""
    configs = [
        Config("native", False),
        Config("tandem", True, {"TANDEM_MONITOR": "0"}),
        Config(
            "tandem-monitor",
            True,
            {"TANDEM_MONITOR": "1", "TANDEM_MONITOR_OUTPUT": str(output / "run")},
        ),
    ]
    if build.family == "Open MPI":
        configs.append(
            Config("ompi-monitoring", False, {}, ["--mca", "pml_monitoring_enable", "2"])
        )
    return configs


def monitor(builds, sizes, nprocs_list, cells, halo_bytes, steps, rounds, trials, out, timeout):
    """The cost of monitoring: per message (a tight loop of self-sends and
    receives on one rank) and on the ghost-cell mini-app (shared memory)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tandem-bench-monitor-") as scratch:

        def configs_of(build, transport):
            return monitor_configs(build, transport, Path(scratch))

        def cost_program(build, size):
            return [str(build.directory / "tandem-bench-monitor-cost"), str(size), str(trials)]

        def halo_program(build, nprocs):  # paired: monitoring on and off inside each run
            name = str(build.directory / "tandem-bench-halo")
            return [name, str(cells), str(halo_bytes), str(steps), str(trials), "monitor"]

        def halo_configs(build, transport):
            return [Config("tandem", True)]

        def cost_point(build, transport, config, size):
            return run_records(build, 1, cost_program(build, size), transport, config, timeout)

        cost, problems = rounds_of(builds, ["shm"], sizes, configs_of, cost_point, rounds)
        halo_records, halo_problems = rounds_of(
            builds, ["shm"], nprocs_list, halo_configs, launched(halo_program, timeout), rounds
        )
    cost_summary = summarize_by(cost, ("mpi", "config", "bytes"), ("send_ns", "recv_ns"))
    halo_summary = summarize_by(
        halo_records, ("mpi", "ranks"), ("step_s", "step_monitor_s", "monitor_overhead")
    )
    result = document(
        "monitor",
        rounds,
        trials,
        problems + halo_problems,
        cost + halo_records,
        {"per_message": cost_summary, "halo": halo_summary},
        cells=cells,
        halo_bytes=halo_bytes,
    )
    path = save(out, result, monitor_table(cost_summary, halo_summary))
    replot(result, out)
    return path


def monitor_table(cost: list[dict], halo_rows: list[dict]) -> str:
    """Per-message times with their difference from Tandem with monitoring off
    (for Open MPI's monitoring: from native), and the mini-app's step with
    monitoring off and on in the same runs (median of the per-trial ratios)."""

    def reference(rows, row, config):
        return next(
            r
            for r in rows
            if r["mpi"] == row["mpi"]
            and r["config"] == config
            and all(r[k] == row[k] for k in ("bytes", "ranks") if k in row)
        )

    lines = [
        "| MPI | size | config | send (ns) | receive (ns) | monitoring cost send / receive (ns) |",
        "|---|---|---|---|---|---|",
    ]
    for row in cost:
        base = {"tandem-monitor": "tandem", "ompi-monitoring": "native"}.get(row["config"])
        extra = ""
        if base:
            ref = reference(cost, row, base)
            extra = (
                f"{row['send_ns'] - ref['send_ns']:+.1f} / {row['recv_ns'] - ref['recv_ns']:+.1f}"
            )
        lines.append(
            f"| {row['mpi']} | {size_label(row['bytes'])} | {row['config']} | {row['send_ns']:.1f} | "
            f"{row['recv_ns']:.1f} | {extra} |"
        )
    lines += [
        "",
        "| MPI | ranks | step, monitoring off (ms) | step, monitoring on (ms) | overhead |",
        "|---|---|---|---|---|",
    ]
    for row in halo_rows:
        lines.append(
            f"| {row['mpi']} | {row['ranks']} | {1e3 * row['step_s']:.3f} | "
            f"{1e3 * row['step_monitor_s']:.3f} | {100 * row['monitor_overhead']:+.2f}% |"
        )
    return "\n".join(lines) + "\n"


def plot_monitor_cost(cost: list[dict], path: Path) -> Path:
    """Bars: time per send and per receive, per MPI and configuration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(r["mpi"], r["bytes"]) for r in cost})
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4), squeeze=False)
    for ax, (mpi, size) in zip(axes[0], panels):
        rows = [r for r in cost if (r["mpi"], r["bytes"]) == (mpi, size)]
        names = [r["config"] for r in rows]
        xs = range(len(rows))
        ax.bar([x - 0.2 for x in xs], [r["send_ns"] for r in rows], 0.4, label="send")
        ax.bar([x + 0.2 for x in xs], [r["recv_ns"] for r in rows], 0.4, label="receive")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(names, rotation=20, fontsize=8)
        ax.set_ylabel("ns per message")
        ax.set_title(f"{mpi}, {size}-byte self-messages")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


COLLECTIVES = ("ibcast", "iallreduce", "iscatter", "ialltoall")


def coll_configs(build: Build, transport: str) -> list[Config]:
    """The MPI's own collectives, alone and with its progress thread, against
    Tandem's schedules moved by the progress thread (yielding, and waiting on
    the sockets where the transport has them)."""
    tandem = {"TANDEM_PROGRESS": "proxy", "TANDEM_COLL": "tandem"}
    if transport != "shm":  # TCP and the shaped network stand for separate nodes
        tandem["TANDEM_COLL_SHM"] = "0"
    configs = [Config("native", False), Config("tandem-coll", True, tandem)]
    if transport != "shm":
        configs.append(Config("tandem-coll-event", True, dict(tandem, TANDEM_POLL="event")))
    if build.family == "MPICH":
        configs.append(Config("mpich-async-thread", False, {"MPIR_CVAR_ASYNC_PROGRESS": "1"}))
    return configs


def coll(builds, transports, sizes, rounds, trials, out: Path, rate: str, timeout: float) -> Path:
    """OSU's overlap of ibcast, iallreduce, iscatter and ialltoall, 2 ranks."""

    def run_point(build, transport, config, collective):
        program = [
            str(build.directory / "tandem-bench-coll-overlap"),
            collective,
            ",".join(map(str, sizes)),
            str(trials),
            str(settle_for(transport, rate)),
        ]
        return run_records(build, 2, program, transport, config, timeout)

    records, problems = rounds_of(builds, transports, COLLECTIVES, coll_configs, run_point, rounds)
    keys = ("mpi", "transport", "config", "collective", "bytes")
    summary = summarize_by(records, keys, ("pure_s", "compute_s", "overall_s", "overlap"))
    result = document("coll", rounds, trials, problems, records, summary, rate=rate)
    path = save(out, result, coll_table(summary))
    replot(result, out)
    return path


def coll_table(summary: list[dict]) -> str:
    return markdown(
        ["MPI", "transport", "collective", "size", "config", "pure (ms)", "overlap"],
        (
            [s["mpi"], s["transport"], s["collective"], size_label(s["bytes"]), s["config"]]
            + [f"{1e3 * s['pure_s']:.3f}", f"{s['overlap']:.0f}%"]
            for s in summary
        ),
    )


IOAPP_MODES = "block,nbc4,nbc8,nbc16"


def ioapp(
    builds, transports, nprocs_list, ops_list, input_mib, rounds, trials, out, timeout, directory
):
    """FastMPJ's I/O-intensive application: rank 0 reads text files and
    scatters blocks of lines, blocking against 4, 8 and 16 concurrent
    MPI_Iscatter, every rank processing lines (ops_list: operations per line)."""
    points = [(n, ops) for n in nprocs_list for ops in ops_list]

    def run_point(build, transport, config, point):
        nprocs, ops = point
        program = [
            str(build.directory / "tandem-bench-coll-io-app"),
            str(directory),
            IOAPP_MODES,
            str(ops),
            str(trials),
            "512",  # KiB per rank and scatter, as in FastMPJ's paper
            str(input_mib),
        ]
        records, problem = run_records(build, nprocs, program, transport, config, timeout)
        wrong = [r for r in records if not r["correct"]]
        if wrong:
            problem = f"{build.family} {config.name} {nprocs} ranks: lines lost or repeated"
        return records, problem

    records, problems = rounds_of(builds, transports, points, coll_configs, run_point, rounds)
    keys = ("mpi", "transport", "config", "ranks", "ops_per_line", "mode")
    summary = summarize_by(records, keys, ("time_s",))
    result = document(
        "ioapp", rounds, trials, problems, records, summary, modes=IOAPP_MODES, input_mib=input_mib
    )
    path = save(out, result, ioapp_table(summary))
    replot(result, out)
    return path


def less_time(time, base) -> str:
    """How much less time 'time' took than 'base', as a percentage."""
    if not time or not base:
        return "-"
    gain = 100 * (1 - time / base)
    return f"{gain:.0f}% less" if gain >= 0 else f"{-gain:.0f}% more"


def ioapp_table(summary: list[dict]) -> str:
    """Time per mode, and the gain of each nonblocking mode over the blocking
    scatter of the same configuration and over native blocking."""
    lines = [
        "| MPI | transport | ranks | ops/line | config | block (s) | nbc4 | nbc8 | nbc16 "
        "| nbc16 vs its block | nbc16 vs native block |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    table: dict[tuple, dict] = {}
    for s in summary:
        key = (s["mpi"], s["transport"], s["ranks"], s["ops_per_line"], s["config"])
        table.setdefault(key, {})[s["mode"]] = s["time_s"]
    for key, modes in sorted(table.items()):
        mpi, transport, ranks, ops, config = key
        native = table.get((mpi, transport, ranks, ops, "native"), {}).get("block")
        block, best = modes.get("block"), modes.get("nbc16")
        cells = " | ".join(f"{modes[m]:.3f}" if m in modes else "-" for m in IOAPP_MODES.split(","))
        lines.append(
            f"| {mpi} | {transport} | {ranks} | {ops} | {config} | {cells} | "
            f"{less_time(best, block)} | {less_time(best, native)} |"
        )
    return "\n".join(lines) + "\n"


def nbc_configs(build: Build, transport: str) -> list[Config]:
    """As coll_configs, Tandem running the blocking collectives too."""
    configs = coll_configs(build, transport)
    for c in configs:
        if c.tandem:
            c.env = {**c.env, "TANDEM_COLL_BLOCKING": "tandem"}
    return configs


def post(builds, transports, nprocs_list, sizes, idles, rounds, trials, out, timeout) -> Path:
    """What MPI_Ibcast costs to post and to wait for, right after the process
    was busy or idle for a while (Tandem's progress thread asleep)."""
    points = [(n, b) for n in nprocs_list for b in sizes]

    def program_of(build, point):
        idle = ",".join(map(str, idles))
        return [str(build.directory / "tandem-bench-coll-post"), str(point[1]), idle, str(trials)]

    run_point = launched(program_of, timeout)
    records, problems = rounds_of(builds, transports, points, coll_configs, run_point, rounds)
    keys = ("mpi", "transport", "config", "ranks", "bytes", "idle_us")
    summary = summarize_by(records, keys, ("post_s", "wait_s"))
    result = document("post", rounds, trials, problems, records, summary)
    columns = ["MPI", "transport", "ranks", "size", "idle before (us)", "config"]
    table = markdown(
        columns + ["post (us)", "wait (us)"],
        (
            [s["mpi"], s["transport"], s["ranks"], size_label(s["bytes"]), s["idle_us"]]
            + [s["config"]]
            + [f"{1e6 * s['post_s']:.2f}", f"{1e6 * s['wait_s']:.2f}"]
            for s in summary
        ),
    )
    path = save(out, result, table)
    replot(result, out)
    return path


def nbc(builds, transports, nprocs_list, sizes, rounds, trials, out, timeout) -> Path:
    """FastMPJ's micro-benchmark: block, nbc and nbc+overlap latencies of
    broadcast and scatter."""
    points = [(n, c) for n in nprocs_list for c in ("bcast", "scatter")]

    def program_of(build, point):
        sizes_arg = ",".join(map(str, sizes))
        return [str(build.directory / "tandem-bench-coll-seed"), point[1], sizes_arg, str(trials)]

    run_point = launched(program_of, timeout)
    records, problems = rounds_of(builds, transports, points, nbc_configs, run_point, rounds)
    keys = ("mpi", "transport", "config", "ranks", "collective", "bytes")
    summary = summarize_by(records, keys, ("block_s", "nbc_s", "nbc_overlap_s"))
    result = document("nbc", rounds, trials, problems, records, summary)
    columns = ["MPI", "transport", "ranks", "collective", "size", "config"]
    table = markdown(
        columns + ["block (ms)", "nbc (ms)", "nbc+overlap (ms)"],
        (
            [s["mpi"], s["transport"], s["ranks"], s["collective"], size_label(s["bytes"])]
            + [s["config"]]
            + [f"{1e3 * s[key]:.3f}" for key in ("block_s", "nbc_s", "nbc_overlap_s")]
            for s in summary
        ),
    )
    path = save(out, result, table)
    replot(result, out)
    return path


# ------------------------------------------------------------- placement

PLACE_KERNELS = ("pairs", "stencil", "cg")
PLACE_RANKS_PER_HOST = 2  # this machine's cores: each simulated host runs as many ranks
PLACE_EXHAUSTIVE_UP_TO = 8  # ranks: the best order by trying every one of them
# Tandem renumbers the world and, for the record, monitors; no progress thread
# (auto would start one across hosts), which would share the 2 cores with
# the 4 or 8 ranks and blur what the order changes.
PLACE_ENV = {"TANDEM_PROGRESS": "off"}


def round_robin(ranks: int, hosts: int, per_host: int):
    """The bad order: rank r on host r % hosts, core r // hosts (ranks that
    follow each other, the heavy pairs of the kernels, on different hosts)."""
    from .mapping import Placement

    host = [r % hosts for r in range(ranks)]
    core = [r // hosts for r in range(ranks)]
    names = [f"host{i}" for i in range(hosts)]
    return Placement(names, per_host, host, core, list(core), "round-robin", {})


def exhaustive_best(weight, machine):
    """The leaf of each rank in the order of least cost among every order of
    up to PLACE_EXHAUSTIVE_UP_TO ranks on a machine of hosts of flat cores
    (where only the hosts of the ranks change the cost): every split of the
    ranks into the hosts, by the weight that crosses hosts."""
    import itertools

    import numpy as np

    from . import place

    ranks, per_host = len(weight), machine.cores_per_host
    best, best_across = None, None
    for order in itertools.permutations(range(ranks)):
        if any(order[i] > order[i + 1] for i in range(0, ranks - 1) if (i + 1) % per_host):
            continue  # the same split, cores inside a host in another order
        leaf_of_rank = np.empty(ranks, dtype=np.int64)
        leaf_of_rank[list(order)] = np.arange(ranks)
        across = place.cost(weight, leaf_of_rank, machine).across_hosts
        if best_across is None or across < best_across - 1e-9:
            best, best_across = leaf_of_rank, across
    return best


def place_mappings(weight, hosts: int, per_host: int, directory: Path, tag: str) -> dict:
    """Each algorithm's mapping of 'weight' on hosts x per_host cores, and the
    best order: exhaustive up to PLACE_EXHAUSTIVE_UP_TO ranks, else the least
    costly of the algorithms'. Written as MAPPING files in 'directory';
    returns {name: {"path", "leaf_of_rank", "cost", "seconds"}}."""
    import numpy as np

    from . import place

    machine = place.machine_from_shape(hosts, per_host)
    found = {}
    for algorithm in place.ALGORITHMS:
        start = time.perf_counter()
        try:
            leaf_of_rank = place.place(weight, machine, algorithm)
        except TandemError as error:  # Scotch's library missing: said, and left out
            found[algorithm] = {"error": str(error)}
            continue
        found[algorithm] = {"leaf_of_rank": leaf_of_rank, "seconds": time.perf_counter() - start}
    placed = {name: entry for name, entry in found.items() if "leaf_of_rank" in entry}
    if len(weight) <= PLACE_EXHAUSTIVE_UP_TO:
        best, how = exhaustive_best(weight, machine), "exhaustive"
    else:
        name = min(
            placed, key=lambda n: place.cost(weight, placed[n]["leaf_of_rank"], machine).hop_bytes
        )
        best, how = placed[name]["leaf_of_rank"], f"best of the algorithms ({name})"
    found["best"] = {"leaf_of_rank": best, "how": how}
    identity = place.cost(weight, np.arange(len(weight)), machine)
    for name, entry in found.items():
        if "leaf_of_rank" not in entry:
            continue
        leaf_of_rank = entry["leaf_of_rank"]
        path = directory / f"{tag}-{name}.map"
        extra = {"cost": {"identity": identity.as_dict()}}
        place.placement_of(leaf_of_rank, machine, name, extra).write(path)
        entry.update(
            path=str(path),
            leaf_of_rank=[int(leaf) for leaf in leaf_of_rank],
            cost=place.cost(weight, leaf_of_rank, machine).as_dict(),
        )
    return found


def place_kernel_program(build: Build, kernel: str, size: int, iterations: int, trials: int):
    name = str(build.directory / "tandem-bench-place-kernels")
    return [name, kernel, str(size), str(iterations), str(trials)]


def place_on_hosts(
    build, net, kernels, size, iterations, trials, rounds, out, timeout, progress
) -> tuple[list[dict], list[dict], list[str]]:
    """On the hosts 'net': each kernel monitored in the bad order, mapped by
    each algorithm, then every order timed, interleaved round by round.
    Returns the timing records, the mappings and the problems."""
    import numpy as np

    from . import place

    global hosts_network
    hosts = net.count
    ranks = hosts * PLACE_RANKS_PER_HOST
    directory = out / "maps"
    directory.mkdir(parents=True, exist_ok=True)
    family = build.family.lower().replace(" ", "")
    bad = round_robin(ranks, hosts, PLACE_RANKS_PER_HOST)
    bad_path = directory / f"{family}-{hosts}hosts-round-robin.map"
    bad.write(bad_path)
    records, mappings, problems = [], [], []
    hosts_network = net
    try:
        orders = {}
        for kernel in kernels:
            tag = f"{family}-{hosts}hosts-{kernel}"
            prefix = out / "records" / tag
            prefix.parent.mkdir(parents=True, exist_ok=True)
            for stale in prefix.parent.glob(f"{tag}.*"):
                stale.unlink()
            monitored = Config(
                "monitor",
                True,
                {**PLACE_ENV, "TANDEM_REORDER": str(bad_path), "TANDEM_MONITOR": "1",
                 "TANDEM_MONITOR_OUTPUT": str(prefix)},
            )  # fmt: skip
            program = place_kernel_program(build, kernel, size, iterations, 1)
            _, problem = run_records(build, ranks, program, "hosts", monitored, timeout)
            progress.step()
            if problem:
                problems.append(problem)
                progress.note(f"  note: {problem}")
                continue
            weight = place.read_traffic(str(prefix), "all").weight
            found = place_mappings(weight, hosts, PLACE_RANKS_PER_HOST, directory, tag)
            bad_leaves = [h * PLACE_RANKS_PER_HOST + c for h, c in zip(bad.host, bad.core)]
            machine = place.machine_from_shape(hosts, PLACE_RANKS_PER_HOST)
            found["bad"] = {
                "path": str(bad_path),
                "leaf_of_rank": bad_leaves,
                "cost": place.cost(weight, np.array(bad_leaves), machine).as_dict(),
            }
            for name, entry in found.items():
                mappings.append(
                    {"mpi": build.family, "hosts": hosts, "ranks": ranks, "kernel": kernel,
                     "order": name, "record": str(prefix) + ".json",
                     **{k: v for k, v in entry.items() if k != "path"}}
                )  # fmt: skip
            orders[kernel] = {n: e["path"] for n, e in found.items() if "path" in e}
        for round_index in range(rounds):
            for kernel, paths in orders.items():
                for name in ORDER_NAMES:
                    if name not in paths:
                        continue
                    config = Config(name, True, {**PLACE_ENV, "TANDEM_REORDER": paths[name]})
                    program = place_kernel_program(build, kernel, size, iterations, trials)
                    found, problem = run_records(build, ranks, program, "hosts", config, timeout)
                    if problem:
                        problems.append(problem)
                        progress.note(f"  note: {problem}")
                    for r in labelled(found, build, "hosts", config, round_index):
                        records.append({**r, "hosts": hosts, "order": name, "link": net.link})
                    progress.step()
    finally:
        hosts_network = None
    return records, mappings, problems


ORDER_NAMES = ("bad", "treematch", "scotch", "greedy", "best")


def reorder_latency(builds, rounds, trials, out, timeout, progress) -> tuple[list, list]:
    """The 8-byte ping-pong latency on one host's shared memory without
    Tandem, with Tandem and no TANDEM_REORDER, and with TANDEM_REORDER
    mapping the identity and the reversed order, interleaved."""
    from .mapping import Placement

    directory = out / "maps"
    directory.mkdir(parents=True, exist_ok=True)
    maps = {}
    for name, cores in (("identity", [0, 1]), ("reversed", [1, 0])):
        maps[name] = directory / f"latency-{name}.map"
        Placement(["host0"], 2, [0, 0], cores, cores, name, {}).write(maps[name])
    configs = [
        Config("native", False),
        Config("tandem", True),
        Config("tandem-reorder-identity", True, {"TANDEM_REORDER": str(maps["identity"])}),
        Config("tandem-reorder-reversed", True, {"TANDEM_REORDER": str(maps["reversed"])}),
    ]
    records, problems = [], []
    for build in builds:
        program = [str(build.directory / "tandem-bench-pingpong"), "8", str(trials), "0"]
        for round_index in range(rounds):
            for config in configs:
                found, problem = run_records(build, 2, program, "shm", config, timeout)
                if problem:
                    problems.append(problem)
                    progress.note(f"  note: {problem}")
                records += labelled(found, build, "shm", config, round_index)
                progress.step()
    return records, problems


def place_bench(
    builds, host_counts, link, kernels, size, iterations, sizes, rounds, trials, out, timeout
) -> Path:
    """tandem bench place (docs/PLACEMENT.md): kernels in a bad order against
    the same renumbered by each placement, on simulated hosts; the time
    tandem place takes on synthetic matrices; the 8-byte latency under
    TANDEM_REORDER."""
    from . import place

    launches = len(builds) * (
        sum(len(kernels) * (1 + rounds * len(ORDER_NAMES)) for _ in host_counts) + rounds * 4
    )
    progress = Progress(launches)
    records, mappings, problems = [], [], []
    for build in builds:
        for count in host_counts:
            with Hosts(count, link) as net:
                found = place_on_hosts(
                    build, net, kernels, size, iterations, trials, rounds, out, timeout, progress
                )
            records += found[0]
            mappings += found[1]
            problems += found[2]
    latency_records, latency_problems = reorder_latency(
        builds, rounds, trials, out, timeout, progress
    )
    problems += latency_problems
    keys = ("mpi", "hosts", "kernel", "order")
    summary = summarize_by([r for r in records if r.get("correct")], keys, ("iteration_s",))
    wrong = [r for r in records if not r.get("correct")]
    problems += [
        f"{r['mpi']} {r['hosts']} hosts {r['kernel']} {r['order']}: a message did not carry "
        "its sender's rank"
        for r in wrong
    ]
    latency_summary = []
    for (mpi, config), rs in sorted(group_by(latency_records, ("mpi", "config")).items()):
        values = [r["latency_us"] for r in rs if r.get("test") == "pingpong"]
        if values:
            latency_summary.append(
                {"mpi": mpi, "config": config, "latency_us": statistics.median(values),
                 "min_us": min(values), "max_us": max(values), "rounds": len(values)}
            )  # fmt: skip
    timing = place.timings(sizes, list(place.ALGORITHMS))
    result = document(
        "place",
        rounds,
        trials,
        problems,
        records,
        recovered(summary, mappings),
        hosts={"counts": host_counts, "link": link, "ranks_per_host": PLACE_RANKS_PER_HOST},
        kernels=list(kernels),
        bytes=size,
        iterations=iterations,
        mappings=mappings,
        place_timings=timing,
        latency={"records": latency_records, "summary": latency_summary},
    )
    path = save(out, result, place_table(result))
    replot(result, out)
    return path


def group_by(records: list[dict], keys: tuple) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    return groups


def recovered(summary: list[dict], mappings: list[dict]) -> list[dict]:
    """Each order's median time with the share of the gap between the bad
    order and the best order that it recovers: (bad - it) / (bad - best).
    Where the best order costs no less than the bad one in the model (a 2 x 2
    stencil on 2 hosts: every split cuts 2 of its 4 edges) there is no gap,
    and the share is None, whatever the times say."""
    times = {(s["mpi"], s["hosts"], s["kernel"], s["order"]): s["iteration_s"] for s in summary}
    costs = {
        (m["mpi"], m["hosts"], m["kernel"], m["order"]): m["cost"]["hop_bytes"]
        for m in mappings
        if "cost" in m
    }
    for s in summary:
        key = (s["mpi"], s["hosts"], s["kernel"])
        bad, best = times.get(key + ("bad",)), times.get(key + ("best",))
        bad_cost, best_cost = costs.get(key + ("bad",)), costs.get(key + ("best",))
        s["gap_in_model"] = (
            bad_cost is not None and best_cost is not None and best_cost < bad_cost * (1 - 1e-9)
        )
        gap = bad - best if bad is not None and best is not None else None
        if s["gap_in_model"] and gap and gap > 0:
            s["recovered"] = (bad - s["iteration_s"]) / gap
        else:
            s["recovered"] = None
    return summary


def place_table(result: dict) -> str:
    """The time per iteration of every order, the share of the gap each
    placement recovers, the time tandem place takes, and the latency."""
    summary = result["summary"]
    costs = {
        (m["mpi"], m["hosts"], m["kernel"], m["order"]): m["cost"]["across_hosts_share"]
        for m in result["mappings"]
        if "cost" in m
    }
    rows = []
    for mpi, hosts, kernel in sorted({(s["mpi"], s["hosts"], s["kernel"]) for s in summary}):
        found = {
            s["order"]: s
            for s in summary
            if (s["mpi"], s["hosts"], s["kernel"]) == (mpi, hosts, kernel)
        }
        cells = []
        for name in ORDER_NAMES:
            s = found.get(name)
            if s is None:
                cells.append("-")
                continue
            share = costs.get((mpi, hosts, kernel, name))
            cell = f"{1e3 * s['iteration_s']:.2f}"
            if share is not None:
                cell += f" ({100 * share:.0f}%)"
            if name not in ("bad", "best") and s.get("recovered") is not None:
                cell += f", {100 * s['recovered']:.0f}%"
            elif name not in ("bad", "best") and not s.get("gap_in_model", True):
                cell += ", no gap"
            cells.append(cell)
        rows.append([mpi, hosts, hosts * PLACE_RANKS_PER_HOST, kernel, *cells])
    text = (
        "Time per iteration (ms), in parentheses the share of the bytes that cross hosts, "
        "then the share of the gap between the bad order and the best that the placement "
        "recovers (no gap: the best order costs as much as the bad one in the model):\n\n"
    )
    text += markdown(["MPI", "hosts", "ranks", "kernel", *ORDER_NAMES], rows)
    text += "\nHow long tandem place takes (synthetic matrices, 16 cores per host):\n\n"
    text += markdown(
        ["ranks", "algorithm", "seconds", "hop-bytes / identity's", "bytes across hosts"],
        (
            [t["ranks"], t["algorithm"], t.get("error", f"{t.get('seconds', 0):.3f}")]
            + (
                [f"{t['hop_bytes_vs_identity']:.3f}", f"{100 * t['across_hosts_share']:.1f}%"]
                if "error" not in t
                else ["", ""]
            )
            for t in result["place_timings"]
        ),
    )
    text += "\n8-byte ping-pong latency on one host's shared memory (us; median, min-max over rounds):\n\n"
    text += markdown(
        ["MPI", "config", "latency (us)", "min-max (us)"],
        (
            [
                s["mpi"],
                s["config"],
                f"{s['latency_us']:.3f}",
                f"{s['min_us']:.3f}-{s['max_us']:.3f}",
            ]
            for s in result["latency"]["summary"]
        ),
    )
    return text


def plot_place(result: dict, out: Path) -> Path:
    """One panel per MPI and host count: time per iteration of each kernel
    by order; a last panel: tandem place's time against the ranks."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = result["summary"]
    panels = sorted({(s["mpi"], s["hosts"]) for s in summary})
    fig, axes = plt.subplots(
        1, len(panels) + 1, figsize=(5 * (len(panels) + 1), 4.2), squeeze=False
    )
    colours = {"bad": "black", "treematch": "tab:blue", "scotch": "tab:orange",
               "greedy": "tab:green", "best": "tab:gray"}  # fmt: skip
    for ax, (mpi, hosts) in zip(axes[0], panels):
        kernels = sorted({s["kernel"] for s in summary if (s["mpi"], s["hosts"]) == (mpi, hosts)})
        width = 0.8 / len(ORDER_NAMES)
        for i, name in enumerate(ORDER_NAMES):
            values = []
            for kernel in kernels:
                match = [
                    s for s in summary
                    if (s["mpi"], s["hosts"], s["kernel"], s["order"]) == (mpi, hosts, kernel, name)
                ]  # fmt: skip
                values.append(1e3 * match[0]["iteration_s"] if match else 0)
            xs = [k + (i - len(ORDER_NAMES) / 2 + 0.5) * width for k in range(len(kernels))]
            ax.bar(xs, values, width, label=name, color=colours[name])
        ax.set_xticks(range(len(kernels)))
        ax.set_xticklabels(kernels)
        ax.set_ylabel("time per iteration (ms)")
        link = result.get("hosts", {}).get("link") or "unshaped"
        ax.set_title(
            f"{mpi}, {hosts} hosts x {PLACE_RANKS_PER_HOST} ranks, links {link}", fontsize=10
        )
        ax.legend(fontsize=7)
    ax = axes[0][-1]
    timing = [t for t in result["place_timings"] if "seconds" in t]
    for algorithm in sorted({t["algorithm"] for t in timing}):
        line = sorted((t for t in timing if t["algorithm"] == algorithm), key=lambda t: t["ranks"])
        ax.plot([t["ranks"] for t in line], [max(t["seconds"], 1e-4) for t in line], marker="o",
                label=algorithm, color=colours.get(algorithm))  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("ranks")
    ax.set_ylabel("tandem place (s)")
    ax.set_title("how long the mapping takes", fontsize=10)
    ax.legend(fontsize=7)
    fig.suptitle(f"Placement: {run_note(result)}")
    fig.tight_layout()
    path = out / "place.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path
