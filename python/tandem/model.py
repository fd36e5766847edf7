"""tandem model: how many virtual ranks per core (docs/VIRTUAL.md, "The
model").

TinyMPI's report models a 2D stencil (compute, then 4 Irecv + 4 Isend +
Waitall) run with V virtual ranks on each of C cores of N hosts from three
times of one rank per step: its computation T_comp, its messages inside the
process T_shmem (one copy by the CPU), and its messages over the network
T_net (Gropp's max-rate model: the C cores of a host share the NIC's
bandwidth, each core injecting at most B_core). A core runs its V ranks one
after another, so the CPU's work is V (T_comp + T_shmem + K T_ovhd) (K calls
of T_ovhd each), the network's V T_net, and the two overlap:

    T(V) = max(cpu, net) + lost

The report's lost overlap is half a rank's computation (a message that
comes during a compute burst waits for its end): lost = T_comp / 2
("tinympi"). With one rank per core nothing overlaps (T(1) = cpu + net),
and with no network nothing is lost (T = cpu); Tandem's default
("pipeline") takes the bubble of a pipeline of V stages instead: the first
rank's messages travel while nothing else computes, and the last rank's
computation while nothing travels, lost = min(cpu, net) / V.

A link shaped by a token bucket (tc's tbf, as tandem's simulated hosts'
links are) lets the bytes of its bucket through at the unshaped rate after
a pause: a host whose messages of one step fit the bucket, refilled during
the step's computation, sends them at the unshaped rate, and only the rest
at the link's (link_time()); and no step takes less than its bytes at the
link's rate, which the bucket does not raise. Without a bucket (burst_net 0, a real NIC)
the network term is the max-rate model's alone.

The parameters are measured on the machine by `tandem model calibrate`
(calibrate() below) and kept in a JSON file; predict() is pure arithmetic
on them, unit-tested on a fixed file.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import MISSING, asdict, dataclass, field
from pathlib import Path

from .builds import Build, TandemError
from .launch import launch_command, launcher_environment
from .shaping import SHAPED_BURST_BYTES, burst_bytes

FORMULAS = ("pipeline", "tinympi")
CALLS_PER_STEP = 8  # K: 4 receives and 4 sends (or 4 MPI_Sendrecv, 8 operations)
MAX_V = 16


@dataclass
class Calibration:
    """The machine's parameters, in seconds and bytes per second."""

    compute_point_s: float  # a: one point of one step with kmax 0
    compute_kmax_s: float  # b: each of kmax iterations more, per point
    latency_shm_s: float  # L_s: one way, 8 bytes, between virtual ranks of a core
    bandwidth_shm: float  # B_s: 4 MiB messages between virtual ranks of a process
    latency_net_s: float  # L_N: one way, 8 bytes, between processes of two hosts
    bandwidth_net: float  # B_NIC-NIC: 4 MiB messages over the (shaped) link
    bandwidth_core: float  # B_CORE-NIC: the same over an unshaped link (one core's rate)
    switch_s: float  # T_ovhd: a switch between virtual ranks, per call
    link: str | None = None  # the link the network was measured on
    # bytes of the shaped link's token bucket (tc tbf's burst), sent at the
    # unshaped rate after a pause; 0: none (an unshaped link, a real NIC)
    burst_net: float = 0.0
    mpi: str = ""  # the build measured
    measured: str = ""  # when (UTC)
    load: list[float] = field(default_factory=list)  # the load averages then
    commands: list[str] = field(default_factory=list)  # what printed the numbers


@dataclass
class Stencil:
    """bench/virt_stencil.c's sizes: a global grid gx x gy of doubles, kmax
    iterations per point and step, halo rows or columns per message."""

    gx: int = 8192
    gy: int = 128
    kmax: int = 4
    halo: int = 2


def load(path: Path) -> Calibration:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise TandemError(
            f"{path}: no calibration; run `tandem model calibrate` (root, for the network) first"
        ) from None
    except (OSError, ValueError) as error:
        raise TandemError(f"{path}: not a calibration file: {error}") from None
    names = Calibration.__dataclass_fields__
    required = [
        n for n, f in names.items() if f.default is MISSING and f.default_factory is MISSING
    ]
    missing = [n for n in required if not isinstance(data.get(n), (int, float))]
    if missing:
        raise TandemError(f"{path}: not a calibration file: no {', '.join(missing)}")
    if "burst_net" not in data and data.get("link"):
        # calibrated before the bucket was modelled: tandem's links had it
        data["burst_net"] = float(SHAPED_BURST_BYTES)
    return Calibration(**{k: v for k, v in data.items() if k in names})


def save(calibration: Calibration, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(calibration), indent=1) + "\n")


def check_shape(stencil: Stencil, hosts: int, cores: int, v: int) -> str | None:
    """Why bench/virt_stencil.c refuses these sizes, or None."""
    if stencil.gy % (hosts * cores) or stencil.gx % v:
        return (
            f"--grid {stencil.gx},{stencil.gy}: GY must be a multiple of the {hosts * cores} "
            f"cores and GX of {v} ranks per core"
        )
    if stencil.gy // (hosts * cores) < stencil.halo or stencil.gx // v < stencil.halo:
        return f"--grid {stencil.gx},{stencil.gy}: a tile is narrower than --halo {stencil.halo}"
    return None


def terms(cal: Calibration, st: Stencil, hosts: int, cores: int, v: int) -> dict[str, float]:
    """One rank's times per step, as bench/virt_stencil.c decomposes the
    grid: core k of the hosts x cores holds GY / (hosts cores) rows, which
    its V ranks split in columns; east and west neighbours are ranks of the
    same core, north and south those of the cores above and below, on
    another host for the first and last core of a host when hosts > 1."""
    nx, ny = st.gx / v, st.gy / (hosts * cores)
    comp = nx * ny * (cal.compute_point_s + st.kmax * cal.compute_kmax_s)
    ew_bytes = 8.0 * st.halo * ny
    ns_bytes = 8.0 * st.halo * (nx + 2 * st.halo)
    # The core that waits longest: with one core per host both its north
    # and south neighbours are remote, else one of them (the host's first
    # or last core); one host has no network.
    remote = 0 if hosts == 1 else (2 if cores == 1 else 1)
    shmem = 2 * (cal.latency_shm_s + ew_bytes / cal.bandwidth_shm)
    shmem += (2 - remote) * (cal.latency_shm_s + ns_bytes / cal.bandwidth_shm)
    # Max-rate: the cores of a host that send over the network at once (all
    # of them with one core, else the first and last) share the NIC.
    senders = 1 if cores == 1 else min(cores, 2)
    unshaped = senders * cal.bandwidth_core
    rate = min(cal.bandwidth_net, unshaped)
    net = sustained = 0.0
    if remote:
        # what the host's NIC sends per step, its V ranks' messages, while
        # the bucket refills during the core's computation of a step; and
        # in the long run no faster than the link's rate
        step_bytes = v * remote * senders * ns_bytes
        sent_s = link_time(step_bytes, rate, unshaped, cal.burst_net, v * comp)
        net = remote * cal.latency_net_s + sent_s / v
        sustained = step_bytes / rate / v
    ovhd = CALLS_PER_STEP * cal.switch_s
    return {"comp": comp, "shmem": shmem, "net": net, "ovhd": ovhd, "sustained": sustained}


def link_time(nbytes: float, rate: float, unshaped: float, burst: float, refill_s: float) -> float:
    """Seconds to send 'nbytes' over a link of 'rate' whose token bucket of
    'burst' bytes refilled at 'rate' for 'refill_s' since the last send:
    while the bucket lasts the bytes go at the 'unshaped' rate (the bucket
    drains at unshaped - rate), the rest at the link's."""
    bucket = min(burst, rate * refill_s)
    if bucket <= 0 or unshaped <= rate:
        return nbytes / rate
    fast = min(nbytes, bucket * unshaped / (unshaped - rate))
    return fast / unshaped + (nbytes - fast) / rate


def predict_one(
    cal: Calibration, st: Stencil, hosts: int, cores: int, v: int, formula: str = "pipeline"
) -> dict[str, float]:
    """The time per step of V ranks per core, with its terms."""
    if formula not in FORMULAS:
        raise TandemError(f"--formula {formula}: expected one of {', '.join(FORMULAS)}")
    t = terms(cal, st, hosts, cores, v)
    cpu = v * (t["comp"] + t["shmem"] + t["ovhd"])
    net = v * t["net"]
    lost = t["comp"] / 2 if formula == "tinympi" else min(cpu, net) / v
    # a bucket lends bytes, not rate: a step takes at least its bytes at the
    # link's rate (a link the stencil saturates)
    step = max(max(cpu, net) + lost, v * t["sustained"])
    return {"v": v, "step_s": step, "cpu_s": cpu, "net_s": net, "lost_s": lost}


def predict(
    cal: Calibration,
    st: Stencil,
    hosts: int,
    cores: int,
    vs: list[int] | None = None,
    formula: str = "pipeline",
) -> list[dict[str, float]]:
    """Predictions for each V the stencil's sizes allow (default 1 to 16)."""
    chosen = vs or list(range(1, MAX_V + 1))
    return [
        predict_one(cal, st, hosts, cores, v, formula)
        for v in chosen
        if check_shape(st, hosts, cores, v) is None
    ]


def best(predictions: list[dict[str, float]]) -> dict[str, float]:
    return min(predictions, key=lambda p: (p["step_s"], p["v"]))


# ------------------------------------------------------------ calibration


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_json(command: list[str], env: dict[str, str], timeout: float) -> dict:
    """Run a benchmark command; the last line of its output that is a JSON
    object."""
    result = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=timeout, check=False
    )
    for line in reversed(result.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise TandemError(
        f"{' '.join(command)}: exit status {result.returncode}, no JSON: "
        f"{(result.stderr or result.stdout).strip()[-400:]}"
    )


def virtual_command(build: Build, processes: int, cores: int, v: int, program: list[str]):
    env = {"TANDEM_VIRT_RANKS": str(v), "TANDEM_VIRT_CORES": str(cores)}
    unbound = ["--bind-to", "none"] if cores > 1 and build.family == "Open MPI" else []
    return launch_command(build, processes, program, False, env, unbound)


def calibrate(
    build: Build,
    link: str,
    stencil: Stencil,
    timeout: float = 120,
    say=lambda line: print(line, file=sys.stderr),
) -> Calibration:
    """Measure the parameters (median of 3 runs each): the switch, the
    ping-pong and 4 MiB bandwidth between virtual ranks of one process, the
    stencil's computation (one rank, no neighbour but itself) at kmax 0 and
    kmax 8, and the ping-pong and bandwidth between processes on 2 simulated
    hosts, over a link of 'link' and over an unshaped one."""
    from .hosts import Hosts, missing_requirements

    missing = missing_requirements(link)
    if missing:
        raise TandemError(f"tandem model calibrate measures the network on 2 hosts: {missing}")
    env = launcher_environment(build)
    d = build.directory
    commands: list[str] = []

    def median_of(command: list[str], key: str, runs: int = 3, wrap=None) -> float:
        commands.append(" ".join(command))
        values = []
        for _ in range(runs):
            values.append(float(run_json(wrap(command) if wrap else command, env, timeout)[key]))
        say(f"  {key} {statistics.median(values):.6g} ({' '.join(command[-3:])})")
        return statistics.median(values)

    say(f"tandem model calibrate: {build.directory.name}, load {load_average()}")
    switch_ns = median_of([str(d / "tandem-bench-virt-switch"), "2000000"], "tandem_ns")
    pingpong = [str(d / "tandem-bench-virt-pingpong"), "100000", "20"]
    shm = virtual_command(build, 1, 1, 2, pingpong)
    latency_shm_us = median_of(shm, "latency_us")
    bandwidth_shm = median_of(shm, "bandwidth_gbs") * 1e9
    stencil_words = [
        str(d / "tandem-bench-virt-stencil"),
        "--grid",
        f"{stencil.gx},{stencil.gy}",
        "--halo",
        str(stencil.halo),
        "--steps",
        "20",
        "--exchange",
        "blocking",
    ]
    points = stencil.gx * stencil.gy
    compute = {}
    for kmax in (0, 8):
        command = virtual_command(build, 1, 1, 1, [*stencil_words, "--kmax", str(kmax)])
        compute[kmax] = median_of(command, "compute_s") / points
    per_kmax = max(compute[8] - compute[0], 0.0) / 8
    net_words = [str(d / "tandem-bench-virt-pingpong"), "2000", "5"]
    measured = {}
    for shaped in (link, None):
        with Hosts(2, shaped) as net:
            command = net.launch_command(
                build, 2, net_words, False, {"TANDEM_VIRT_RANKS": "1", "TANDEM_VIRT_CORES": "1"}
            )
            commands.append(f"on 2 hosts, link {shaped or 'unshaped'}: " + " ".join(net_words))
            runs = [run_json(command, env, timeout) for _ in range(3)]
        latency = statistics.median(r["latency_us"] for r in runs)
        bandwidth = statistics.median(r["bandwidth_gbs"] for r in runs) * 1e9
        say(f"  2 hosts, link {shaped or 'unshaped'}: {latency:.2f} us, {bandwidth / 1e9:.3f} GB/s")
        measured[shaped] = (latency, bandwidth)
    return Calibration(
        compute_point_s=compute[0],
        compute_kmax_s=per_kmax,
        latency_shm_s=latency_shm_us * 1e-6,
        bandwidth_shm=bandwidth_shm,
        latency_net_s=measured[link][0] * 1e-6,
        bandwidth_net=measured[link][1],
        bandwidth_core=measured[None][1],
        switch_s=switch_ns * 1e-9,
        link=link,
        burst_net=float(burst_bytes(link)) if link else 0.0,
        mpi=build.directory.name,
        measured=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        load=load_average(),
        commands=commands,
    )


# ------------------------------------------------------------ output


def table(
    cal: Calibration, st: Stencil, hosts: int, cores: int, formula: str, vs: list[int] | None
) -> str:
    rows = predict(cal, st, hosts, cores, vs, formula)
    if not rows:
        raise TandemError(
            f"--grid {st.gx},{st.gy}: no V divides it (GY must be a multiple of the "
            f"{hosts * cores} cores, GX of V)"
        )
    top = best(rows)
    lines = [
        f"tandem model ({formula}): grid {st.gx} x {st.gy}, kmax {st.kmax}, halo {st.halo}, "
        f"{hosts} host(s) x {cores} core(s); calibration of {cal.mpi or '?'}, link "
        f"{cal.link or '?'}",
        "",
        "| V | ranks | step (ms) | cpu (ms) | network (ms) | lost overlap (ms) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for p in rows:
        mark = " **best**" if p is top else ""
        lines.append(
            f"| {p['v']}{mark} | {hosts * cores * p['v']} | {p['step_s'] * 1e3:.3f} | "
            f"{p['cpu_s'] * 1e3:.3f} | {p['net_s'] * 1e3:.3f} | {p['lost_s'] * 1e3:.3f} |"
        )
    first = rows[0]
    lines += [
        "",
        f"best V = {top['v']}: {top['step_s'] * 1e3:.3f} ms per step"
        + (
            f", {first['step_s'] / top['step_s']:.2f}x V = {first['v']}'s"
            if first is not top
            else ""
        ),
    ]
    return "\n".join(lines)
