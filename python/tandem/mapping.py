"""The MAPPING file of tandem place (docs/PLACEMENT.md) and its writers: an
Open MPI rankfile and Hydra's machinefile with its binding, or a -configfile
that binds each rank. No numpy here: tandem run reads a mapping with it."""

from __future__ import annotations

import dataclasses
import json
import socket
from dataclasses import dataclass
from pathlib import Path

from .builds import TandemError

FORMAT = "tandem-placement"
VERSION = 1


def host_names(count: int, names: str | None) -> list[str]:
    """'count' host names: from --host-names (comma-separated, or @FILE with a
    name at the start of each line, as hostfiles have), else this machine's
    name for one host and host0, host1, ... for more."""
    if names is None:
        if count == 1:
            return [socket.gethostname()]
        return [f"host{i}" for i in range(count)]
    if names.startswith("@"):
        path = Path(names[1:])
        try:
            lines = path.read_text().splitlines()
        except OSError as error:
            raise TandemError(
                f"--host-names {names}: cannot read {path}: {error.strerror}"
            ) from None
        found = [line.split()[0].split(":")[0] for line in lines if line.split()]
        found = [name for name in found if not name.startswith("#")]
    else:
        found = [name for name in names.split(",") if name]
    if len(found) < count:
        raise TandemError(
            f"--host-names {names}: {len(found)} name(s) for {count} hosts; expected at least "
            f"{count} (comma-separated, or @FILE with one host per line)"
        )
    return found[:count]


@dataclass
class Placement:
    """A MAPPING file: where each rank runs."""

    hosts: list[str]
    cores_per_host: int
    host: list[int]  # of each rank: an index into 'hosts'
    core: list[int]  # of each rank: the core's logical index on its host
    cpu: list[int]  # of each rank: the operating system's number of that core's CPU
    algorithm: str = ""
    extra: dict | None = None  # what else the file holds (cost, kind, record)

    @property
    def ranks(self) -> int:
        return len(self.host)

    def to_json(self) -> dict:
        doc = {
            "format": FORMAT,
            "version": VERSION,
            "ranks": self.ranks,
            "hosts": self.hosts,
            "cores_per_host": self.cores_per_host,
            "algorithm": self.algorithm,
        }
        doc.update(self.extra or {})
        doc["mapping"] = [
            {"rank": r, "host": self.host[r], "core": self.core[r], "cpu": self.cpu[r]}
            for r in range(self.ranks)
        ]
        return doc

    def write(self, path: str | Path) -> None:
        """The JSON with a line per member and one per rank."""
        doc = self.to_json()
        mapping = doc.pop("mapping")
        members = [f" {json.dumps(name)}: {json.dumps(value)}" for name, value in doc.items()]
        ranks = ",\n".join(f"  {json.dumps(entry)}" for entry in mapping)
        members.append(f' "mapping": [\n{ranks}\n ]')
        Path(path).write_text("{\n" + ",\n".join(members) + "\n}\n")


def load_placement(path: str | Path) -> Placement:
    """Read and check a MAPPING file; a TandemError names what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise TandemError(f"{path}: no such file; expected a MAPPING that tandem place -o wrote")
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise TandemError(f"{path}: not a JSON mapping: {error}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise TandemError(f"{path}: format is {found!r}, expected {FORMAT!r}")
    hosts, per_host, entries = doc.get("hosts"), doc.get("cores_per_host"), doc.get("mapping")
    if (
        not isinstance(hosts, list)
        or not hosts
        or not all(isinstance(h, str) and h and not any(c.isspace() for c in h) for h in hosts)
    ):
        raise TandemError(f"{path}: hosts: expected a list of host names, found {hosts!r}")
    if type(per_host) is not int or per_host < 1:
        raise TandemError(
            f"{path}: cores_per_host: expected a positive integer, found {per_host!r}"
        )
    if not isinstance(entries, list) or len(entries) != doc.get("ranks"):
        raise TandemError(f"{path}: mapping: expected one entry per rank ({doc.get('ranks')!r})")
    host, core, cpu, seen = [], [], [], set()
    for rank, entry in enumerate(entries):
        at = f"{path}: mapping[{rank}]"
        if not isinstance(entry, dict) or entry.get("rank") != rank:
            raise TandemError(
                f"{at}: expected {{'rank': {rank}, 'host': H, 'core': C}} in rank order"
            )
        h, c = entry.get("host"), entry.get("core")
        if type(h) is not int or not 0 <= h < len(hosts):
            raise TandemError(
                f"{at}.host: expected an index from 0 to {len(hosts) - 1}, found {h!r}"
            )
        if type(c) is not int or not 0 <= c < per_host:
            raise TandemError(f"{at}.core: expected 0 to {per_host - 1}, found {c!r}")
        if (h, c) in seen:
            raise TandemError(f"{at}: core {c} of {hosts[h]} holds another rank already")
        seen.add((h, c))
        host.append(h)
        core.append(c)
        cpu.append(entry.get("cpu", c) if type(entry.get("cpu", c)) is int else c)
    extra = {
        k: v
        for k, v in doc.items()
        if k
        not in ("format", "version", "ranks", "hosts", "cores_per_host", "algorithm", "mapping")
    }
    return Placement(hosts, per_host, host, core, cpu, str(doc.get("algorithm", "")), extra)


def with_hosts(placement: Placement, names: list[str] | None) -> Placement:
    """The placement on other hosts: host i of the file becomes names[i] (the
    MPI's host list, simulated hosts); the names of the file without them."""
    if not names:
        return placement
    if len(names) < len(placement.hosts):
        raise TandemError(
            f"the mapping places ranks on {len(placement.hosts)} hosts but the host list has "
            f"{len(names)}: {', '.join(names)}"
        )
    return Placement(
        list(names[: len(placement.hosts)]),
        placement.cores_per_host,
        placement.host,
        placement.core,
        placement.cpu,
        placement.algorithm,
        placement.extra,
    )


def on_cpus(placement: Placement, cpu_sets: list[list[int]]) -> Placement:
    """The placement on hosts of their own CPUs (simulated hosts that divide
    this machine's: cpu_sets[i] are host i's): core c of host i becomes the
    c-th CPU of cpu_sets[i], as its number on the machine. No sets: as it is."""
    if not cpu_sets:
        return placement
    core = []
    for r in range(placement.ranks):
        h, c = placement.host[r], placement.core[r]
        if c >= len(cpu_sets[h]):
            raise TandemError(
                f"rank {r}: core {c} of {placement.hosts[h]}, which has {len(cpu_sets[h])} "
                f"CPUs of this machine's ({len(cpu_sets)} hosts share them)"
            )
        core.append(cpu_sets[h][c])
    return dataclasses.replace(placement, core=core, cpu=list(core))


def rankfile(placement: Placement) -> str:
    """Open MPI's rankfile: `rank R=HOST slot=CORE`, CORE a logical core index
    (mpirun's default; --mca rmaps_rank_file_physical 1 would read CPU numbers)."""
    return "".join(
        f"rank {r}={placement.hosts[placement.host[r]]} slot={placement.core[r]}\n"
        for r in range(placement.ranks)
    )


def hydra_runs(placement: Placement) -> list[tuple[str, list[int]]]:
    """The ranks in order as runs on one host: (host, CPUs of the run's ranks).
    Hydra starts one proxy per line of its machinefile (consecutive lines of
    one host are one), and a proxy's i-th process takes the i-th CPU of
    -bind-to user:LIST."""
    runs: list[tuple[str, list[int]]] = []
    for r in range(placement.ranks):
        name = placement.hosts[placement.host[r]]
        if runs and runs[-1][0] == name:
            runs[-1][1].append(placement.cpu[r])
        else:
            runs.append((name, [placement.cpu[r]]))
    return runs


def hydra_binding(placement: Placement) -> str | None:
    """-bind-to's user:LIST when one list binds every run right, else None."""
    runs = hydra_runs(placement)
    longest = max((cpus for _, cpus in runs), key=len)
    if all(cpus == longest[: len(cpus)] for _, cpus in runs):
        return "user:" + ",".join(map(str, longest))
    return None


def hydra_machinefile(placement: Placement) -> str:
    """Hydra's machinefile: `HOST:COUNT` lines, the ranks in order."""
    return "".join(f"{host}:{len(cpus)}\n" for host, cpus in hydra_runs(placement))


def hydra_configfile(placement: Placement, program: list[str]) -> str:
    """Hydra's -configfile: one line per rank, `-n 1 taskset -c CPU PROGRAM
    ARGS`, for a mapping that no single -bind-to user:LIST expresses, with the
    machinefile (-f) saying each rank's host: Hydra 4.0.2 started every line
    on the first line's host when the lines named their hosts (`-host`).
    (Hydra splits its lines at blanks: no word of the program may hold one.)"""
    bad = [word for word in program if not word or any(c.isspace() or c in "'\"" for c in word)]
    if bad:
        raise TandemError(
            f"the program's word {bad[0]!r} holds a blank or a quote, which Hydra's -configfile "
            "cannot carry; this mapping needs one line per rank there (no single -bind-to "
            "user:LIST binds it)"
        )
    words = " ".join(program)
    return "".join(f"-n 1 taskset -c {placement.cpu[r]} {words}\n" for r in range(placement.ranks))


def hydra_text(placement: Placement) -> str:
    """What `tandem place --hydra` writes: the machinefile, then the binding
    as a comment line, or the per-rank form when no list binds it."""
    binding = hydra_binding(placement)
    text = hydra_machinefile(placement)
    if binding:
        return text + f"# mpiexec -f THIS_FILE -bind-to {binding} -n {placement.ranks} PROGRAM\n"
    return text + (
        "# no single -bind-to user:LIST binds this mapping (a host's runs of ranks need other "
        "CPUs);\n# bind each rank: mpiexec -f THIS_FILE -configfile FILE, FILE holding per rank "
        "`-n 1 taskset -c CPU PROGRAM`:\n"
        + "".join(
            f"#   rank {r} (on {placement.hosts[placement.host[r]]}): taskset -c "
            f"{placement.cpu[r]}\n"
            for r in range(placement.ranks)
        )
    )
