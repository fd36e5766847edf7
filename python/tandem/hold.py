"""The process that holds the namespaces of one simulated host, or of the
switch that joins them (tandem/hosts.py starts it; it is no module to import).

    unshare --net --uts --mount --propagation slave -- python3 hold.py DIR NAME INDEX
    unshare --net -- python3 hold.py DIR

A host's holder names its host (UTS namespace), shows sysfs of its own
network namespace at /sys (UCX lists network devices from
/sys/class/net, which shows the namespace of whoever mounted sysfs), gives
the host a boot id of its own (DIR/boot_id-INDEX over
/proc/sys/kernel/random/boot_id: UCX reaches a peer through shared memory
when their boot ids are equal, which would bypass the network between
hosts), accepts 127.0.0.0/8 addresses off the loopback device
(route_localnet) and narrows the loopback device to 127.0.0.1/32, so that
the other hosts' 127.x addresses are not local. Then it prints "ready" and
reads its standard input until tandem closes it, or ends in any way (the
kernel closes it then), or until SIGTERM; then it kills every process left
in its network namespace and exits: with no process left in them, the
kernel frees the namespaces, and with them the host's veth link. The
switch's holder also removes DIR, the run's files, and the files the MPI
libraries named after its hosts.

Nothing else keeps a namespace: no bind mount under /run/netns, so a run
that ends however leaves nothing that must be removed by hand."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


class Failed(Exception):
    pass


class Stop(Exception):
    """SIGTERM: end as on the end of the standard input."""


def stop(signum, frame) -> None:
    raise Stop


def run(*command: str, stdin: str | None = None) -> None:
    result = subprocess.run(command, input=stdin, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise Failed(f"{' '.join(command)}: {result.stderr.strip() or result.returncode}")


def set_up_host(directory: Path, name: str, index: str) -> None:
    socket.sethostname(name)
    sysfs = directory / f"sys-{index}"
    run("mount", "-t", "sysfs", "sysfs", str(sysfs))
    # the cgroup tree, where hwloc finds the CPUs the ranks may use
    if os.path.isdir("/sys/fs/cgroup"):
        subprocess.run(
            ["mount", "--rbind", "/sys/fs/cgroup", str(sysfs / "fs" / "cgroup")],
            capture_output=True,
            check=False,
        )
    run("umount", "-l", "/sys")
    run("mount", "--move", str(sysfs), "/sys")
    run("mount", "--bind", str(directory / f"boot_id-{index}"), "/proc/sys/kernel/random/boot_id")
    Path("/proc/sys/net/ipv4/conf/all/route_localnet").write_text("1\n")
    run(
        "ip",
        "-batch",
        "-",
        stdin="link set lo up\naddr del 127.0.0.1/8 dev lo\naddr add 127.0.0.1/32 dev lo\n",
    )


def end_namespace_processes() -> None:
    """SIGKILL every other process of this network namespace, until none is left."""
    mine = os.readlink("/proc/self/ns/net")
    for _ in range(50):
        others = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                if os.readlink(f"/proc/{entry}/ns/net") == mine:
                    others.append(int(entry))
            except OSError:
                continue  # gone meanwhile, or a kernel thread
        if not others:
            return
        for pid in others:
            with contextlib.suppress(OSError):  # gone meanwhile
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)


def remove_files_of(run: str) -> None:
    """What the MPI libraries name after the hosts of 'run' and leave when
    their processes are killed: Open MPI's session directories
    (TMPDIR/ompi.HOST.UID) and its shared-memory segments
    (/dev/shm/vader_segment.HOST.*). Host names are the run's alone."""
    directories = {os.environ.get("TMPDIR") or "/tmp", "/tmp"}
    patterns = [f"{d}/ompi.{run}-h*" for d in directories] + [f"/dev/shm/vader_segment.{run}-h*"]
    for path in [p for pattern in patterns for p in glob.glob(pattern)]:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)


def main(argv: list[str]) -> int:
    directory = Path(argv[1])
    try:
        if len(argv) == 4:
            set_up_host(directory, argv[2], argv[3])
    except (Failed, OSError) as error:
        print(f"{error}", file=sys.stderr, flush=True)
        return 1
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # meant for tandem, which ends the run
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    print("ready", flush=True)
    try:
        while os.read(0, 4096):
            pass
    except Stop:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    end_namespace_processes()
    if len(argv) == 2:
        remove_files_of(directory.name)
        shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
