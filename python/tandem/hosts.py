"""Several hosts on one machine, which the MPI libraries take for separate
nodes (docs/HOSTS.md).

Each host is a network namespace, a UTS namespace (its own host name) and a
mount namespace (its own /sys, so that UCX sees the host's network devices,
and its own boot id). A switch, a network namespace of its own, holds a
bridge; every host is joined to it by a veth pair, the host's end named
DEVICE and addressed SUBNET.i/24 (host i, counted from 1). Every run has its
own switch, so runs share the addresses and never reach each other.

    switch:  br0 -+- h1 <==veth==> tandem0 127.200.0.1/24  (host 1: mpirun, ranks)
                  +- h2 <==veth==> tandem0 127.200.0.2/24  (host 2: ranks)

What keeps a namespace is a process in it: one holder per host and one for
the switch (tandem/hold.py), started by `unshare` and reading a pipe from
tandem. Whenever tandem ends, normally, on an error or a signal, or killed,
the pipe closes: each holder kills what is left in its namespace and
exits, the kernel frees the namespaces and their links, and the switch's
holder removes the run's directory (STATE_ROOT/NAME: the agent, the boot
ids, run.json) and what the MPI libraries named after its hosts (Open
MPI's session directories and segments). There is no bind mount under
/run/netns to forget.
`tandem hosts --clean` ends the holders and processes of runs whose tandem
is gone, should any be left (a holder killed with SIGKILL).

The launchers reach a host through the agent, a script in the run's
directory that does what ssh would: it runs its arguments, joined, with
/bin/sh inside the host's namespaces (nsenter into the holder's). The
launcher itself runs in host 1, as on the first node of a batch job.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .builds import Build, TandemError
from .hold import remove_files_of
from .launch import launch_command
from .shaping import rate_bits, tbf

STATE_ROOT = Path("/run/tandem-hosts")  # one directory per run, named as its hosts begin
DEVICE = "tandem0"  # each host's end of its link, in its own namespace
BRIDGE = "br0"  # in the switch's namespace, with one port h1, h2, ... per host
SUBNET = "127.200.0"  # host i has SUBNET.i/24 (loopback range only: nothing leaves)
MAX_HOSTS = 64
HOLD = Path(__file__).with_name("hold.py")
TOOLS = ("ip", "unshare", "nsenter", "mount", "umount")


def placement(nprocs: int, count: int) -> list[int]:
    """Ranks per host, block-wise: nprocs // count each, the remainder one
    more on the first hosts (hosts past the ranks get none)."""
    each, extra = divmod(nprocs, count)
    return [each + (1 if i < extra else 0) for i in range(count)]


def machine_cpus() -> list[int]:
    """The CPUs this process may run on, which the hosts divide."""
    return sorted(os.sched_getaffinity(0))


def cpu_split(cpus: list[int], count: int) -> list[list[int]]:
    """The CPUs of each of 'count' hosts, as nodes of their own have them:
    'cpus' in consecutive blocks, one more on the first hosts where they do
    not divide evenly."""
    sizes = placement(len(cpus), count)
    starts = [sum(sizes[:i]) for i in range(count)]
    return [cpus[start : start + size] for start, size in zip(starts, sizes)]


def cpu_list(cpus: list[int]) -> str:
    """CPUs as taskset -c and the kernel write them: 0-7,9."""
    runs: list[list[int]] = []
    for cpu in cpus:
        if runs and cpu == runs[-1][-1] + 1:
            runs[-1].append(cpu)
        else:
            runs.append([cpu])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def missing_requirements(link: str | None) -> str | None:
    """What the machine lacks to make hosts, as a sentence, or None."""
    tools = list(TOOLS) + (["tc"] if link else [])
    absent = [tool for tool in tools if shutil.which(tool) is None]
    problems = []
    if os.geteuid() != 0:
        problems.append("root (network, UTS and mount namespaces need it)")
    if absent:
        problems.append(f"{', '.join(absent)} (not found in PATH)")
    if not problems:
        return None
    return f"--hosts needs {' and '.join(problems)}; nothing was created"


def process_start(pid: int) -> int | None:
    """When process 'pid' started (clock ticks after boot), or None if there
    is none or it ended (a zombie): with the pid it names one process, even
    after a pid is reused."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # comm may hold spaces and parentheses
    return None if fields[0] == "Z" else int(fields[19])


def processes_in(namespaces: set[str]) -> list[int]:
    """The processes whose network namespace ("net:[inode]") is one of these."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "ns" / "net") in namespaces:
                    found.append(int(entry.name))
            except OSError:
                continue  # gone meanwhile
    return found


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):  # gone meanwhile
            os.kill(pid, signal.SIGKILL)


@dataclass
class Host:
    name: str  # its host name: what MPI_Get_processor_name says there
    address: str  # of DEVICE
    holder: subprocess.Popen
    net: str = ""  # its network namespace, "net:[inode]": the agent checks it


@dataclass
class Hosts:
    """'count' hosts joined by a bridge, each link limited to 'link' (a tc
    rate) in both directions when given. Use as a context manager: the hosts
    exist inside the with block only."""

    count: int
    link: str | None = None
    # Each host's own CPUs (True), all hosts on every CPU (False), or None:
    # their own where the machine has at least 2 CPUs for each host.
    split_cpus: bool | None = None
    name: str = ""  # the run's: the prefix of its host names and its directory's name
    directory: Path = Path()
    hosts: list[Host] = field(default_factory=list)
    switch: subprocess.Popen | None = None
    cpu_sets: list[list[int]] = field(default_factory=list)  # by host; empty: shared

    def __enter__(self) -> Hosts:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ making

    def start(self) -> None:
        if not 1 <= self.count <= MAX_HOSTS:
            raise TandemError(f"--hosts {self.count}: expected 1 to {MAX_HOSTS} hosts")
        if self.link is not None:
            rate_bits(self.link, "--link")
        missing = missing_requirements(self.link)
        if missing:
            raise TandemError(missing)
        self.cpu_sets = self.divide_cpus()
        self.directory = self.make_directory()
        try:
            self.make_namespaces()
            self.make_links()
            self.write_agent()
            self.write_record()
        except BaseException:
            self.close()
            raise

    def divide_cpus(self) -> list[list[int]]:
        """Each host's CPUs, or none where the hosts share the machine's. A
        host of its own CPUs is a node: its ranks, their progress threads
        and its spare cores never land on another host's (sharing, a
        thread that Tandem pins to a CPU it sees free could share it with a
        rank of the other host, busy, and wait for its time slices)."""
        cpus = machine_cpus()
        split = self.split_cpus
        if split is None:
            split = len(cpus) >= 2 * self.count and shutil.which("taskset") is not None
        if not split:
            return []
        if len(cpus) < self.count:
            raise TandemError(
                f"{self.count} hosts with CPUs of their own need as many CPUs; "
                f"this process may run on {len(cpus)}"
            )
        if shutil.which("taskset") is None:
            raise TandemError("hosts with CPUs of their own need taskset (util-linux)")
        return cpu_split(cpus, self.count)

    def confined(self, index: int) -> list[str]:
        """The words that keep a command on host 'index' (from 0) on its CPUs."""
        if not self.cpu_sets:
            return []
        return ["taskset", "-c", cpu_list(self.cpu_sets[index])]

    def make_directory(self) -> Path:
        """The run's directory, under a name no other run has now: tandem +
        this process's id (+ nN for the Nth set of hosts of one process)."""
        try:
            STATE_ROOT.mkdir(mode=0o755, parents=True, exist_ok=True)
            for n in range(1, 1000):
                self.name = f"tandem{os.getpid()}" + (f"n{n}" if n > 1 else "")
                directory = STATE_ROOT / self.name
                try:
                    directory.mkdir(mode=0o700)
                except FileExistsError:
                    continue  # another set of this process, or a killed run of the same pid
                (directory / "run.json").write_text(json.dumps(self.owner()) + "\n")
                return directory
        except OSError as error:
            raise TandemError(f"cannot make the run's directory in {STATE_ROOT}: {error}") from None
        raise TandemError(f"no free run name in {STATE_ROOT}; try `tandem hosts --clean`")

    def owner(self) -> dict:
        return {"owner": os.getpid(), "owner_start": process_start(os.getpid())}

    def start_holder(self, *args: str, host: bool) -> subprocess.Popen:
        namespaces = ["--net", "--uts", "--mount", "--propagation", "slave"] if host else ["--net"]
        return subprocess.Popen(
            ["unshare", *namespaces, "--", sys.executable, str(HOLD), str(self.directory), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # a Ctrl-C is tandem's to handle, not theirs
        )

    def make_namespaces(self) -> None:
        """Start the holders, all at once, and wait until each is ready."""
        for i in range(1, self.count + 1):
            (self.directory / f"boot_id-{i}").write_text(f"{uuid.uuid4()}\n")
            (self.directory / f"sys-{i}").mkdir()
        self.switch = self.start_holder(host=False)
        for i in range(1, self.count + 1):
            name = f"{self.name}-h{i}"
            holder = self.start_holder(name, str(i), host=True)
            self.hosts.append(Host(name, f"{SUBNET}.{i}", holder))
        for what, holder in [("the switch", self.switch)] + [
            (h.name, h.holder) for h in self.hosts
        ]:
            line = holder.stdout.readline()
            if line != b"ready\n":
                holder.wait()
                error = holder.stderr.read().decode(errors="replace").strip()
                raise TandemError(f"cannot make {what}: {error or 'its holder ended'}")
            holder.stdout.close()
            holder.stderr.close()
        for host in self.hosts:
            host.net = os.readlink(f"/proc/{host.holder.pid}/ns/net")

    def inside(self, pid: int, *command: str, stdin: str | None = None) -> None:
        """Run 'command' in the network namespace of process 'pid'."""
        full = ["nsenter", "--target", str(pid), "--net", "--", *command]
        result = subprocess.run(full, input=stdin, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            where = stdin.strip().replace("\n", "; ") if stdin else ""
            raise TandemError(
                f"{shlex.join(command)} {where}: {result.stderr.strip() or result.returncode}"
            )

    def make_links(self) -> None:
        """The bridge, a veth pair per host, the addresses and the shaping."""
        assert self.switch is not None
        lines = [f"link add {BRIDGE} type bridge", f"link set {BRIDGE} up"]
        for i, host in enumerate(self.hosts, 1):
            lines += [
                f"link add h{i} type veth peer name {DEVICE} netns {host.holder.pid}",
                f"link set h{i} master {BRIDGE}",
                f"link set h{i} up",
            ]
        self.inside(self.switch.pid, "ip", "-batch", "-", stdin="\n".join(lines) + "\n")
        for host in self.hosts:
            batch = f"addr add {host.address}/24 dev {DEVICE}\nlink set {DEVICE} up\n"
            self.inside(host.holder.pid, "ip", "-batch", "-", stdin=batch)
        if self.link:  # both directions: the host's sending, and the switch's to it
            shaping = " ".join(tbf(self.link))
            for i, host in enumerate(self.hosts, 1):
                batch = f"qdisc replace dev {DEVICE} root {shaping}\n"
                self.inside(host.holder.pid, "tc", "-batch", "-", stdin=batch)
                batch = f"qdisc replace dev h{i} root {shaping}\n"
                self.inside(self.switch.pid, "tc", "-batch", "-", stdin=batch)

    @property
    def agent(self) -> Path:
        return self.directory / "agent"

    def write_agent(self) -> None:
        """The launchers' remote shell (see the top of this file)."""
        nsenter = shutil.which("nsenter")
        cases = "\n".join(
            f"    {h.name}) pid={h.holder.pid} net='{h.net}' confine='{' '.join(self.confined(i))}' ;;"
            for i, h in enumerate(self.hosts)
        )
        self.agent.write_text(
            f"""#!/bin/sh
# The remote shell of tandem's simulated hosts {self.name} (tandem/hosts.py):
# runs its arguments after the host name, joined, with /bin/sh on that host,
# as ssh does, inside the host's namespaces.
while [ $# -gt 0 ] && [ "${{1#-}}" != "$1" ]; do shift; done  # ssh options (Hydra's -x)
host=$1
shift
case $host in
{cases}
    *) echo "tandem hosts: no host $host in {self.name}" >&2; exit 255 ;;
esac
if [ "$(readlink /proc/$pid/ns/net)" != "$net" ]; then
    echo "tandem hosts: host $host is gone: its run ended" >&2
    exit 255
fi
# shellcheck disable=SC2086 # confine is words: taskset -c CPUS, or none
exec {nsenter} --target "$pid" --net --uts --mount --wd="$PWD" -- $confine /bin/sh -c "$*"
"""
        )
        self.agent.chmod(0o755)

    def write_record(self) -> None:
        """run.json: what `tandem hosts` shows and --clean needs."""
        record = {
            **self.owner(),
            "link": self.link,
            "switch": self.switch.pid if self.switch else None,
            "cpus": [cpu_list(c) for c in self.cpu_sets],
            "hosts": [
                {"name": h.name, "address": h.address, "holder": h.holder.pid, "net": h.net}
                for h in self.hosts
            ],
        }
        (self.directory / "run.json").write_text(json.dumps(record, indent=1) + "\n")

    # ----------------------------------------------------------- removing

    def close(self) -> None:
        """End the holders (each ends what is left on its host) and remove the
        run's directory. Safe to call on hosts made in part, and twice."""
        holders = [h.holder for h in self.hosts] + ([self.switch] if self.switch else [])
        for holder in holders:
            with contextlib.suppress(OSError):  # it ended already
                holder.stdin.close()
        namespaces = {h.net for h in self.hosts if h.net}
        for holder in holders:
            try:
                holder.wait(timeout=10)
            except subprocess.TimeoutExpired:  # stopped, or stuck: end it and its host here
                holder.kill()
                holder.wait()
        kill_all(processes_in(namespaces))
        if self.directory != Path():
            remove_files_of(self.name)
            shutil.rmtree(self.directory, ignore_errors=True)
        self.hosts, self.switch = [], None

    def sweep(self) -> None:
        """Kill every process on the hosts but their holders: what a launch
        that was killed left (its ranks run in process groups of their own)."""
        holders = {h.holder.pid for h in self.hosts}
        kill_all([p for p in processes_in({h.net for h in self.hosts}) if p not in holders])

    # ---------------------------------------------------------- launching

    def enter(self, cwd: str | os.PathLike | None = None) -> list[str]:
        """The words that run a command on host 1, in 'cwd' (default: the
        current directory)."""
        return [
            "nsenter",
            "--target",
            str(self.hosts[0].holder.pid),
            "--net",
            "--uts",
            "--mount",
            f"--wd={os.path.abspath(cwd or os.getcwd())}",
            "--",
            *self.confined(0),
        ]

    def launcher_settings(
        self,
        build: Build,
        nprocs: int,
        placed: bool = False,
        cores_each: int = 1,
        bound: bool = True,
        pml: str = "ob1",
    ) -> tuple[list[str], dict[str, str]]:
        """The launcher's arguments and the ranks' variables that place
        'nprocs' ranks block-wise on the hosts, through the agent, with TCP
        between hosts over DEVICE and shared memory as the MPI chooses inside;
        each process is bound to 'cores_each' cores (a process of virtual
        ranks has a kernel thread on each). 'placed': the caller's launcher
        arguments place the ranks (a rankfile, Hydra's machinefile or
        configfile naming these hosts): no host list or binding of the hosts'
        own; 'bound' False: Open MPI binds no rank, as Hydra by default).
        'pml': Open MPI's messaging layer, ob1 (its TCP BTL between hosts)
        or ucx (UCX over TCP, and UCX's one-sided component: Open MPI 4.1
        makes no window across hosts over its TCP BTL)."""
        counts = placement(nprocs, self.count)
        host_list = ",".join(f"{h.name}:{n}" for h, n in zip(self.hosts, counts) if n)
        if pml not in ("ob1", "ucx"):
            raise TandemError(f"OMPI_MCA_pml={pml} on the simulated hosts: give ob1 or ucx")
        if build.family == "Open MPI":
            binding = self.core_binding(nprocs, cores_each) if bound else ["--bind-to", "none"]
            where = [] if placed else ["--host", host_list, *binding]
            if pml == "ucx":
                # UCX's TCP transport is not among the ones Open MPI takes by
                # default (pml_ucx_tls); UCX_NET_DEVICES keeps it on the link.
                # osc/sm keeps the windows within a host (and
                # MPI_Win_allocate_shared, which osc/ucx fails), as Open MPI
                # chooses by default where UCX runs.
                messaging = ["--mca", "pml", "ucx", "--mca", "osc", "sm,ucx"]
                messaging += ["--mca", "pml_ucx_tls", "any", "--mca", "pml_ucx_devices", "any"]
                ucx = {"UCX_TLS": "self,sm,tcp", "UCX_NET_DEVICES": DEVICE}
            else:
                messaging = ["--mca", "pml", "ob1", "--mca", "btl", "self,vader,tcp"]
                ucx = {}
            return [
                *where,
                # rsh through the agent, even where the environment names
                # another launcher (tools/device-pack's plm isolated)
                "--mca",
                "plm",
                "rsh",
                "--mca",
                "plm_rsh_agent",
                str(self.agent),
                *messaging,
                "--mca",
                "btl_tcp_if_include",
                DEVICE,
                "--mca",
                "oob_tcp_if_include",
                DEVICE,
            ], ucx
        launcher = ["-launcher", "ssh", "-launcher-exec", str(self.agent)]
        where = [] if placed else ["-hosts", host_list]
        return launcher + where + ["-iface", DEVICE], {
            "UCX_TLS": "self,sm,tcp",
            "UCX_NET_DEVICES": DEVICE,
        }

    def core_binding(self, nprocs: int, cores_each: int = 1) -> list[str]:
        """Open MPI's binding of the ranks. On hosts of their own CPUs, each
        host binds its ranks to its cores, one each ('cores_each' C: C each)
        while they fit, else none. On hosts that share the machine's cores,
        as one mpirun binds them on one host: rank r on core r (on cores r C
        to r C + C - 1) while the ranks' cores are no more than the
        machine's, else none. (By default each host would bind its own ranks
        from core 0 on, so that the first ranks of all hosts shared core 0
        while other cores idled.)"""
        if self.cpu_sets:  # each host binds its own ranks to its own cores
            counts = placement(nprocs, self.count)
            if any(n * cores_each > len(c) for n, c in zip(counts, self.cpu_sets)):
                return ["--bind-to", "none"]
            # A rankfile of the CPUs' own numbers: Open MPI 4.1's binding
            # (--bind-to core) sees every host's CPUs and binds host 2's
            # first rank to core 0, which its host does not have.
            rankfile = self.directory / f"rankfile-{nprocs}x{cores_each}-own"
            lines, rank = [], 0
            for host, count, cpus in zip(self.hosts, counts, self.cpu_sets):
                for k in range(count):
                    mine = cpus[k * cores_each : (k + 1) * cores_each]
                    lines.append(f"rank {rank}={host.name} slot={','.join(map(str, mine))}\n")
                    rank += 1
            rankfile.write_text("".join(lines))
            return ["--rankfile", str(rankfile), "--mca", "rmaps_rank_file_physical", "1"]
        if nprocs * cores_each > len(machine_cpus()):
            return ["--bind-to", "none"]
        rankfile = self.directory / f"rankfile-{nprocs}x{cores_each}"
        if not rankfile.exists():
            names = [
                h.name for h, n in zip(self.hosts, placement(nprocs, self.count)) for _ in range(n)
            ]
            c = cores_each
            slots = [f"{r * c}" if c == 1 else f"{r * c}-{r * c + c - 1}" for r in range(nprocs)]
            rankfile.write_text(
                "".join(f"rank {r}={name} slot={slots[r]}\n" for r, name in enumerate(names))
            )
        return ["--rankfile", str(rankfile)]

    def launch_command(
        self,
        build: Build,
        nprocs: int,
        program: list[str],
        with_tandem: bool = True,
        env: dict[str, str] | None = None,
        launcher_args: list[str] | None = None,
        cwd: str | os.PathLike | None = None,
        placed: bool = False,
        cores_each: int = 1,
        bound: bool = True,
    ) -> list[str]:
        """launch.launch_command on the hosts: the same ranks' variables and
        launcher arguments (after the hosts' own), run on host 1; 'placed' as
        in launcher_settings ('nprocs' None: Hydra's configfile says it); each
        process bound to 'cores_each' cores where Open MPI binds them, unless
        not 'bound'. Open MPI's OMPI_MCA_pml in 'env' (ob1 by default, or
        ucx) picks its messaging between the hosts (launcher_settings)."""
        pml = (env or {}).get("OMPI_MCA_pml", "ob1")
        args, rank_env = self.launcher_settings(
            build,
            nprocs or 1,
            placed,
            cores_each,
            bound,
            pml if build.family == "Open MPI" else "ob1",
        )
        command = launch_command(
            build,
            nprocs,
            program,
            with_tandem,
            {**rank_env, **(env or {})},
            args + list(launcher_args or []),
        )
        return self.enter(cwd) + command

    def link_bytes(self) -> dict[str, int]:
        """The bytes each host has sent to the switch so far, by host name."""
        assert self.switch is not None
        result = subprocess.run(
            ["nsenter", "--target", str(self.switch.pid), "--net", "--", "ip", "-s", "-j", "link"],
            capture_output=True,
            text=True,
            check=True,
        )
        received = {d["ifname"]: d["stats64"]["rx"]["bytes"] for d in json.loads(result.stdout)}
        return {h.name: received[f"h{i}"] for i, h in enumerate(self.hosts, 1)}


# ------------------------------------------------------ tandem hosts [--clean]


@dataclass
class Run:
    """A run's directory in STATE_ROOT, as `tandem hosts` finds it."""

    directory: Path
    record: dict
    holders: list[int]  # processes holding its namespaces (hold.py with its directory)

    @property
    def owner_alive(self) -> bool:
        owner = self.record.get("owner")
        return owner is not None and process_start(owner) == self.record.get("owner_start")

    @property
    def hosts(self) -> list[str]:
        return [h["name"] for h in self.record.get("hosts", [])]


def holders_of(directory: Path) -> list[int]:
    """The holders started for 'directory', found by their command lines."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(w.endswith(b"/" + HOLD.name.encode()) for w in words[:2]) and (
            str(directory).encode() in words
        ):
            found.append(int(entry.name))
    return found


def runs() -> list[Run]:
    """Every run's directory, made by any tandem on this machine."""
    if not STATE_ROOT.is_dir():
        return []
    found = []
    for directory in sorted(STATE_ROOT.iterdir()):
        try:
            record = json.loads((directory / "run.json").read_text())
        except (OSError, ValueError):
            record = {}
        found.append(Run(directory, record, holders_of(directory)))
    return found


def clean(run: Run) -> int:
    """End what a run whose tandem is gone left: its holders (each ends the
    processes on its host), then any process still on its hosts, then its
    directory. Returns the number of processes ended."""
    namespaces = {h["net"] for h in run.record.get("hosts", []) if h.get("net")}
    for pid in run.holders:
        with contextlib.suppress(OSError):  # gone meanwhile
            namespaces.add(os.readlink(f"/proc/{pid}/ns/net"))
    ended = set(processes_in(namespaces)) | set(run.holders)
    for pid in run.holders:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while any(process_start(pid) is not None for pid in run.holders):
        if time.monotonic() > deadline:  # stopped, or stuck
            kill_all(run.holders)
        time.sleep(0.05)
    for _ in range(100):
        left = processes_in(namespaces)
        if not left:
            break
        kill_all(left)
        time.sleep(0.05)
    remove_files_of(run.directory.name)
    shutil.rmtree(run.directory, ignore_errors=True)
    return len(ended)
