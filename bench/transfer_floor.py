#!/usr/bin/env python3
"""What a transfer costs the machine's CPUs at the least, with no MPI library:
two processes move SIZE bytes over a TCP socket with one blocking sendall and
one blocking MSG_WAITALL receive, asleep in the kernel meanwhile, so every
cycle spent is the kernel's own (copies, the TCP stack, the shaper). That is
the floor under any MPI library's transfer, and the part of it that no
progress engine can hide when every core computes: a computation sharing the
machine with the transfer loses at least that much.

Both processes' CPU time (getrusage) and the whole machine's busy time
(/proc/stat, which also counts the interrupts and softirqs charged to no
process) are reported per transfer, the machine's less what it spent in an
idle interval of the same length. One JSON line per network.

With --cpus one both processes run on one CPU: the time a transfer takes
when one core does all of it, as when one rank computes and its peer lends
the other core (TANDEM_WAIT). Over loopback both ends' copies are this
machine's work, so against the time on two CPUs it bounds the share of a
transfer that any progress engine can hide behind one rank's computation.

    sudo python3 bench/transfer_floor.py [--size BYTES] [--trials N] [--networks shaped,tcp] \
        [--cpus two|one]

Run as root for the shaped network (the tandem-net namespace of
ARCHITECTURE.md, made here if missing).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from tandem.bench import NETNS, shaped_network

TICK = os.sysconf("SC_CLK_TCK")


def machine_busy() -> float:
    """Seconds every CPU of the machine spent on anything but idling."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / TICK  # user .. steal; guest time is inside user


def pin(cpu: int) -> None:
    """One CPU per process, as the MPI launchers bind two ranks."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) > 1:
        os.sched_setaffinity(0, {cpus[cpu % len(cpus)]})


CPUS = {"two": (0, 1), "one": (1, 1)}  # --cpus: the sender's CPU, the receiver's


def process_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def receiver(listener: socket.socket, size: int, trials: int, cpu: int, report) -> None:
    pin(cpu)
    connection, _ = listener.accept()
    buffer = bytearray(size)
    view = memoryview(buffer)
    for trial in range(trials + 2):  # two warm-up transfers
        if trial == 2:
            start = process_cpu()
        got = connection.recv_into(view, size, socket.MSG_WAITALL)
        if got != size:
            raise SystemExit(f"transfer_floor: received {got} of {size} bytes")
        connection.sendall(b"k")
    report.write(json.dumps({"receiver_cpu_s": (process_cpu() - start) / trials}))
    report.close()


def measure(size: int, trials: int, cpus: str) -> dict:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read_end)
        receiver(listener, size, trials, CPUS[cpus][1], os.fdopen(write_end, "w"))
        os._exit(0)
    os.close(write_end)
    pin(CPUS[cpus][0])
    sender = socket.create_connection(listener.getsockname())
    data = os.urandom(size)  # real pages: zeros from calloc would all read one page
    for trial in range(trials + 2):
        if trial == 2:
            cpu, busy, wall = process_cpu(), machine_busy(), time.monotonic()
        sender.sendall(data)
        if sender.recv(1) != b"k":
            raise SystemExit("transfer_floor: the receiver went away")
    sender_cpu = (process_cpu() - cpu) / trials
    busy = machine_busy() - busy
    wall = time.monotonic() - wall
    with os.fdopen(read_end) as report:
        result = json.loads(report.read())
    os.waitpid(child, 0)
    os.sched_setaffinity(0, range(os.cpu_count() or 1))
    idle_busy = machine_busy()
    time.sleep(wall)  # what the machine spends meanwhile with no transfer
    idle_busy = machine_busy() - idle_busy
    result.update(
        sender_cpu_s=sender_cpu,
        machine_cpu_s=max(0.0, busy - idle_busy) / trials,
        wall_s=wall / trials,
    )
    return result


def child_main(args) -> None:
    """One network's rounds, inside its namespace: medians of the rounds."""
    rounds = [measure(args.size, args.trials, args.cpus) for _ in range(args.rounds)]
    summary = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
    summary.update(
        test="transfer_floor",
        network=args.network,
        cpus_used=args.cpus,
        bytes=args.size,
        trials=args.trials,
        rounds=args.rounds,
        cpus=os.cpu_count(),
    )
    summary["machine_share_of_wall"] = summary["machine_cpu_s"] / summary["wall_s"]
    print(json.dumps(summary), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=4 << 20)
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--networks", default="shaped,tcp")
    parser.add_argument(
        "--cpus",
        choices=sorted(CPUS),
        default="two",
        help="two: sender and receiver on CPUs of their own; one: both on one CPU",
    )
    parser.add_argument("--network", help=argparse.SUPPRESS)  # set in the child
    args = parser.parse_args()
    if args.network:
        child_main(args)
        return 0
    for network in args.networks.split(","):
        if network not in ("shaped", "tcp"):
            parser.error(f"--networks: unknown network {network!r} (accepted: shaped, tcp)")
        prefix = []
        if network == "shaped":
            shaped_network("2gbit")
            prefix = ["ip", "netns", "exec", NETNS]
        command = [
            *prefix,
            sys.executable,
            __file__,
            "--network",
            network,
            f"--size={args.size}",
            f"--trials={args.trials}",
            f"--rounds={args.rounds}",
            f"--cpus={args.cpus}",
        ]
        subprocess.run(command, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
