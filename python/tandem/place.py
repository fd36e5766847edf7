"""tandem place: a rank-to-core mapping from the monitoring record of a run
(docs/PLACEMENT.md).

The machine is a balanced tree: hosts at the top, then the levels of one
host (package, L3, L2 caches) down to its cores, the leaves. Leaf p is the
p-th core in depth-first order, the order of hwloc's logical indices and of
Open MPI's default by-core layout, so the run's current layout, rank r on
leaf r, is the identity. Two cores are as far apart as the number of tree
edges between them (2 x the height of their lowest common ancestor), and
a mapping costs the sum over rank pairs of the bytes they exchanged times
that distance (hop-bytes). Three algorithms map ranks to leaves:

- treematch: TreeMatch's bottom-up grouping (Jeannot, Mercier and Tessier,
  "Process Placement in Multicore Clusters: Algorithmic Issues and Practical
  Techniques"): at the lowest level, the ranks (padded with idle ones up to
  the number of cores) are grouped by the level's arity so that as much
  traffic as possible stays inside the groups; the matrix between groups is
  summed and the groups are grouped by the next level's arity, up to the
  hosts; the groups are then laid on the tree top-down, in order. Each
  grouping is TreeMatch's greedy one for large arities: a group starts with
  the unit that exchanges the most with the units left, and takes the unit
  that exchanges the most with its members until it is full; a pass of
  swaps between groups then keeps every swap that adds intra-group traffic.
- scotch: Scotch's graph mapping onto a tree-leaf architecture, through its
  library (libscotch, Debian's libscotch-dev), with one rank per core.
- greedy: the baseline: the rank that exchanges the most with those placed
  (the busiest first) goes to the free core where it adds the least cost.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import re
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .builds import TandemError
from .mapping import Placement, host_names

ALGORITHMS = ("treematch", "scotch", "greedy")
KINDS = ("all", "p2p", "coll", "osc")
# The hwloc objects that make the levels of a host's tree, outer first; the
# others (NUMA nodes, L1 caches, groups, PUs) are passed through. Cores are
# the leaves; a core's first PU names its CPU.
HWLOC_LEVELS = ("Package", "L3Cache", "L2Cache", "Core")


@dataclass
class Machine:
    """H hosts of one shape: 'arities' are the children per object of each
    level below a host (the last: cores per innermost object), 'cpus' the
    operating system's CPU number of each core of a host, in leaf order."""

    hosts: list[str]
    levels: list[str]  # the name of each level of 'arities'
    arities: list[int]
    cpus: list[int]

    @property
    def cores_per_host(self) -> int:
        return math.prod(self.arities)

    @property
    def leaves(self) -> int:
        return len(self.hosts) * self.cores_per_host

    def tree(self) -> list[int]:
        """The arities from the top: hosts, then the host's levels; levels of
        arity 1 are left out (they change no distance)."""
        return [a for a in [len(self.hosts), *self.arities] if a > 1]

    def describe(self) -> str:
        shape = " x ".join(f"{a} {name}" for name, a in zip(self.levels, self.arities))
        return f"{len(self.hosts)} host(s) x {shape} = {self.leaves} cores"


def machine_from_shape(hosts: int, cores: int, names: str | None = None) -> Machine:
    """--hosts H --cores C: H hosts of C cores, core c being CPU c."""
    if hosts < 1:
        raise TandemError(f"--hosts {hosts}: expected at least 1 host")
    if cores < 1:
        raise TandemError(f"--cores {cores}: expected at least 1 core per host")
    return Machine(host_names(hosts, names), ["cores"], [cores], list(range(cores)))


def hwloc_kind(node: ElementTree.Element) -> str:
    """The level an hwloc XML object makes, or "" for one passed through:
    hwloc 2 names caches L3Cache, L2Cache; hwloc 1 names them Cache with a
    depth attribute."""
    kind = node.get("type", "")
    if kind == "Cache":
        kind = f"L{node.get('depth', '')}Cache"
    return kind if kind in HWLOC_LEVELS else ""


def hwloc_children(node: ElementTree.Element) -> list[ElementTree.Element]:
    """The nearest objects below 'node' that make a level."""
    found = []
    for child in node.findall("object"):
        found += [child] if hwloc_kind(child) else hwloc_children(child)
    return found


def first_pu(node: ElementTree.Element) -> int | None:
    for child in node.iter("object"):
        if child.get("type") == "PU" and child.get("os_index") is not None:
            return int(child.get("os_index"))
    return None


def machine_from_topology(path: str, hosts: int = 1, names: str | None = None) -> Machine:
    """An hwloc XML file (hwloc-ls --of xml, lstopo file.xml): its levels
    Package, L3, L2 and Core, which must be balanced (every object of a level
    with as many children), as TreeMatch needs; 'hosts' copies of it."""
    where = f"--topology {path}"
    try:
        root = ElementTree.parse(path).getroot()
    except OSError as error:
        raise TandemError(f"{where}: cannot read it: {error.strerror}") from None
    except ElementTree.ParseError as error:
        raise TandemError(
            f"{where}: not XML ({error}); expected hwloc-ls --of xml output"
        ) from None
    machine = root if root.get("type") == "Machine" else root.find(".//object[@type='Machine']")
    if machine is None:
        raise TandemError(
            f"{where}: no Machine object; expected an hwloc topology (hwloc-ls --of xml)"
        )
    levels, arities, layer = [], [], [machine]
    while True:
        below = [hwloc_children(node) for node in layer]
        if not any(below):
            break
        counts = {len(children) for children in below}
        kinds = {hwloc_kind(child) for children in below for child in children}
        if len(counts) != 1 or len(kinds) != 1:
            raise TandemError(
                f"{where}: the tree is not balanced ({', '.join(sorted(kinds))} objects, "
                f"{sorted(counts)} per parent); tandem place needs every object of a level "
                "to hold as many of the next (use --hosts H --cores C instead)"
            )
        levels.append(kinds.pop())
        arities.append(counts.pop())
        layer = [child for children in below for child in children]
    if not levels or levels[-1] != "Core":
        raise TandemError(f"{where}: no Core objects at the bottom of its tree; found {levels}")
    cpus = [first_pu(core) for core in layer]
    cpus = [cpu if cpu is not None else index for index, cpu in enumerate(cpus)]
    if hosts < 1:
        raise TandemError(f"--hosts {hosts}: expected at least 1 host")
    return Machine(host_names(hosts, names), levels, arities, cpus)


def traffic_matrix(job, kind: str, message_cost: float = 0.0) -> np.ndarray:
    """The symmetric weight between ranks from a report.Job: the bytes of
    'kind' both ways, plus 'message_cost' bytes per message; the diagonal
    (a rank's messages to itself) is zero.

    all: every byte once (docs/MONITORING.md); p2p: point-to-point sends;
    osc: puts and gets; coll: the collectives' part of all (all less the
    others), which is what Tandem's own collectives sent where Tandem ran
    them and the logical volume where the MPI library did."""
    if kind not in KINDS:
        raise TandemError(f"--kind {kind}: not known; expected one of {', '.join(KINDS)}")
    parts = {"all": ["all"], "p2p": ["p2p_send"], "osc": ["osc_put", "osc_get"]}
    if kind == "coll":
        volume = job.traffic["all"].bytes.astype(float)
        messages = job.traffic["all"].messages.astype(float)
        for part in ("p2p_send", "osc_put", "osc_get"):
            volume -= job.traffic[part].bytes
            messages -= job.traffic[part].messages
        volume, messages = np.maximum(volume, 0), np.maximum(messages, 0)
    else:
        volume = sum(job.traffic[part].bytes.astype(float) for part in parts[kind])
        messages = sum(job.traffic[part].messages.astype(float) for part in parts[kind])
    weight = volume + message_cost * messages
    weight = weight + weight.T
    np.fill_diagonal(weight, 0)
    return weight


# ------------------------------------------------------------ the traffic

# The lines of Open MPI's monitoring files (PREFIX.<rank>.prof) that tandem
# place reads, by kind: E user point-to-point sends (with
# pml_monitoring_enable 1 also the messages inside collectives), I the
# messages inside collectives (enable 2), S/R one-sided puts and gets. The C
# lines are the collectives' logical volume, which the I (or E) lines hold
# already as the messages the algorithm sent: they are not read.
PROF_KINDS = {"all": "EISR", "p2p": "E", "coll": "I", "osc": "SR"}


@dataclass
class Traffic:
    """The symmetric weight between ranks that tandem place maps, and where it
    came from (for its messages and the MAPPING's "record")."""

    weight: np.ndarray
    source: str  # the file (or files) read
    what: str  # the traffic weighed, as tandem place prints it


def read_traffic(prefix: str, kind: str, message_cost: float = 0.0) -> Traffic:
    """The traffic of PREFIX: Tandem's record PREFIX.json; else Open MPI's
    monitoring files PREFIX.<rank>.prof (--mca pml_monitoring_filename
    PREFIX); or PREFIX itself, a TreeMatch matrix (.mat: N lines of N
    numbers, as tandem report writes), taken as bytes."""
    from . import report

    if kind not in KINDS:
        raise TandemError(f"--kind {kind}: not known; expected one of {', '.join(KINDS)}")
    weighed = "bytes" + (f" + {message_cost:g} per message" if message_cost else "")
    path = Path(prefix)
    if path.suffix == ".mat":
        return Traffic(read_mat(path), str(path), "a TreeMatch matrix (its numbers as bytes)")
    files = [] if report.job_path(prefix).is_file() else prof_files(prefix)
    if not files:
        if not report.job_path(prefix).is_file():
            raise TandemError(
                f"{report.job_path(prefix)}: no such file, nor {path.name}.<rank>.prof beside "
                "it; expected the job file that a run with TANDEM_MONITOR=1 writes at "
                "MPI_Finalize (tandem run --monitor=PREFIX writes PREFIX.json), Open MPI's "
                "monitoring files (--mca pml_monitoring_filename PREFIX) or a TreeMatch "
                "matrix FILE.mat"
            )
        job = report.load(prefix)
        weight = traffic_matrix(job, kind, message_cost)
        return Traffic(weight, str(report.job_path(prefix)), f"{kind} ({weighed})")
    volume, messages = read_prof(files, kind)
    weight = volume + message_cost * messages
    weight = weight + weight.T
    np.fill_diagonal(weight, 0)
    source = f"{path.parent / (path.name + '.*.prof')} ({len(files)} files)"
    lines = "+".join(PROF_KINDS[kind])
    return Traffic(weight, source, f"{kind} ({lines} lines of Open MPI's monitoring, {weighed})")


def prof_files(prefix: str) -> list[Path]:
    """PREFIX.<rank>.prof, in rank order."""
    path = Path(prefix)
    found = []
    if path.parent.is_dir():
        pattern = re.compile(re.escape(path.name) + r"\.(\d+)\.prof")
        for entry in path.parent.iterdir():
            match = pattern.fullmatch(entry.name)
            if match:
                found.append((int(match.group(1)), entry))
    return [entry for _, entry in sorted(found)]


PROF_LINE = re.compile(r"([EISRC])\t(\d+)\t(\d+)\t(\d+) bytes\t(\d+) msgs sent(\t[\d,]*)?")


def read_prof(files: list[Path], kind: str) -> tuple[np.ndarray, np.ndarray]:
    """The bytes and messages of 'kind' from one rank's .prof file each
    (Open MPI 4.1's monitoring, or Tandem's files in its format): row =
    sending rank, column = peer."""
    size = len(files)
    for index, path in enumerate(files):
        if int(path.name.rsplit(".", 2)[-2]) != index:
            raise TandemError(
                f"{path}: no {path.name.rsplit('.', 2)[0]}.{index}.prof beside it; expected "
                f"one file per rank, 0 to {size - 1}"
            )
    volume, messages = np.zeros((size, size)), np.zeros((size, size))
    for path in files:
        try:
            lines = path.read_text().splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise TandemError(f"{path}: cannot be read: {error}") from None
        for number, line in enumerate(lines, 1):
            if not line or line.startswith("#") or line[0] not in "EISRC":
                continue  # comments, and D, O2A, A2O, A2A: per communicator
            match = PROF_LINE.fullmatch(line)
            if match is None:
                raise TandemError(
                    f"{path}:{number}: {line[:80]!r} is not a monitoring line; expected "
                    "'E<TAB>SRC<TAB>DST<TAB>N bytes<TAB>M msgs sent' (Open MPI's "
                    "pml_monitoring_enable_output 3)"
                )
            letter, src, dst = match.group(1), int(match.group(2)), int(match.group(3))
            if not (0 <= src < size and 0 <= dst < size):
                raise TandemError(
                    f"{path}:{number}: ranks {src} -> {dst}, but there are files for ranks "
                    f"0 to {size - 1} only"
                )
            if letter in PROF_KINDS[kind]:
                volume[src, dst] += int(match.group(4))
                messages[src, dst] += int(match.group(5))
    return volume, messages


def read_mat(path: Path) -> np.ndarray:
    """A TreeMatch matrix: N lines of N non-negative numbers (blanks or
    commas between them), made symmetric (both directions added)."""
    try:
        lines = [line for line in path.read_text().splitlines() if line.strip()]
    except OSError as error:
        raise TandemError(f"{path}: cannot read it: {error.strerror}") from None
    except UnicodeDecodeError:
        raise TandemError(f"{path}: not text; expected N lines of N numbers") from None
    rows = []
    for number, line in enumerate(lines, 1):
        try:
            rows.append([float(word) for word in line.replace(",", " ").split()])
        except ValueError:
            raise TandemError(
                f"{path}:{number}: {line[:80]!r} holds something other than numbers; "
                "expected N lines of N numbers (a TreeMatch matrix)"
            ) from None
    if not rows or any(len(row) != len(rows) for row in rows):
        lengths = sorted({len(row) for row in rows})
        raise TandemError(
            f"{path}: {len(rows)} lines of {lengths} numbers; expected N lines of N numbers "
            "(a square TreeMatch matrix)"
        )
    weight = np.array(rows)
    if (weight < 0).any() or not np.isfinite(weight).all():
        raise TandemError(f"{path}: negative or infinite numbers; expected weights of 0 or more")
    weight = weight + weight.T
    np.fill_diagonal(weight, 0)
    return weight


# ------------------------------------------------------------------ cost


def block_sizes(tree: list[int]) -> list[int]:
    """The leaves below one object of each level, from the cores up:
    1, then the product of the arities below each level."""
    sizes = [1]
    for arity in reversed(tree[1:]):
        sizes.append(sizes[-1] * arity)
    return sizes


def in_blocks(weight: np.ndarray, leaf_of_rank: np.ndarray, size: int) -> float:
    """The weight between ranks whose leaves lie in one block of 'size' leaves."""
    if size == 1:
        return float(weight.diagonal().sum())
    block = leaf_of_rank // size
    order = np.argsort(block, kind="stable")
    ends = np.cumsum(np.bincount(block))
    total = 0.0
    for start, end in zip(np.concatenate(([0], ends[:-1])), ends):
        if end > start:
            members = order[start:end]
            total += weight[np.ix_(members, members)].sum()
    return float(total)


@dataclass
class Cost:
    hop_bytes: float  # sum over ordered rank pairs of weight x edges between their cores
    total: float  # the weight between distinct ranks
    across_hosts: float  # the part of 'total' between ranks on different hosts

    @property
    def host_share(self) -> float:
        return self.across_hosts / self.total if self.total else 0.0

    def as_dict(self) -> dict:
        return {
            "hop_bytes": self.hop_bytes,
            "weight": self.total,
            "across_hosts": self.across_hosts,
            "across_hosts_share": round(self.host_share, 6),
        }


def cost(weight: np.ndarray, leaf_of_rank: np.ndarray, machine: Machine) -> Cost:
    """What the ranks placed on 'leaf_of_rank' cost on 'machine'. Each pair
    crosses 2 edges per level above its cores' lowest common ancestor."""
    leaf_of_rank = np.asarray(leaf_of_rank)
    total = float(weight.sum())
    tree = machine.tree()
    hop_bytes = 0.0
    for size in block_sizes(tree):  # a pair in different blocks of a level climbs above it
        hop_bytes += 2 * (total - in_blocks(weight, leaf_of_rank, size))
    per_host = machine.cores_per_host
    across = total - in_blocks(weight, leaf_of_rank, per_host)
    return Cost(hop_bytes / 2, total / 2, across / 2)  # each pair is in 'weight' twice


# ------------------------------------------------------------ algorithms


def greedy_groups(weight: np.ndarray, arity: int) -> np.ndarray:
    """TreeMatch's greedy grouping: len(weight) / arity groups of 'arity'
    units (rows of the result), each started by the unit that exchanges the
    most with the units left, and filled with the unit that exchanges the
    most with its members. 'weight' is symmetric: rows are read, not columns."""
    units = len(weight)
    taken = np.zeros(units)  # -inf once a unit is in a group
    left = weight.sum(axis=1)  # each free unit's weight with the free units
    groups = np.empty((units // arity, arity), dtype=np.int64)
    for group in groups:
        seed = int(np.argmax(left))
        taken[seed] = left[seed] = -np.inf
        left -= weight[seed]
        gain = weight[seed] + taken
        group[0] = seed
        for slot in range(1, arity):
            unit = int(np.argmax(gain))
            gain += weight[unit]
            taken[unit] = left[unit] = gain[unit] = -np.inf
            left -= weight[unit]
            group[slot] = unit
    return groups


def improve_groups(weight: np.ndarray, groups: np.ndarray, passes: int = 2) -> np.ndarray:
    """Swaps of two units of different groups that add intra-group weight,
    the best for each unit in turn, 'passes' times over the units."""
    units, count = len(weight), len(groups)
    if count < 2:
        return groups
    group_of = np.empty(units, dtype=np.int64)
    for index, members in enumerate(groups):
        group_of[members] = index
    slot_of = np.empty(units, dtype=np.int64)
    slot_of[groups.reshape(-1)] = np.tile(np.arange(groups.shape[1]), count)
    # with[g, x]: x's weight with the members of group g; own[x]: with its own group's
    with_group = np.stack([weight[members].sum(axis=0) for members in groups])
    own = with_group[group_of, np.arange(units)]
    for _ in range(passes):
        moved = False
        for u in range(units):
            a = group_of[u]
            # swapping u (in a) with v (in b): u gains w(u,b) - w(u,a), v gains
            # w(v,a) - w(v,b), less twice the edge u-v, which stays between groups
            column = with_group[:, u]
            gains = column[group_of] - column[a] + with_group[a] - own - 2 * weight[u]
            gains[groups[a]] = -np.inf
            v = int(np.argmax(gains))
            if gains[v] <= 1e-9 * max(1.0, own[u]):
                continue
            b = group_of[v]
            groups[a, slot_of[u]], groups[b, slot_of[v]] = v, u
            slot_of[u], slot_of[v] = slot_of[v], slot_of[u]
            group_of[u], group_of[v] = b, a
            delta = weight[v] - weight[u]
            with_group[a] += delta
            with_group[b] -= delta
            own[groups[a]] = with_group[a, groups[a]]
            own[groups[b]] = with_group[b, groups[b]]
            moved = True
        if not moved:
            break
    return groups


def treematch(weight: np.ndarray, machine: Machine) -> np.ndarray:
    """TreeMatch: group bottom-up by each level's arity, then lay the groups
    on the tree top-down; returns the leaf of each rank."""
    ranks, leaves = len(weight), machine.leaves
    matrix = weight
    if ranks < leaves:  # the cores beyond the ranks hold idle ranks
        matrix = np.zeros((leaves, leaves))
        matrix[:ranks, :ranks] = weight
    members = np.arange(leaves).reshape(leaves, 1)  # each unit's ranks, in leaf order
    for arity in reversed(machine.tree()):
        groups = greedy_groups(matrix, arity)
        if matrix.any():
            groups = improve_groups(matrix, groups)
        # the weight between groups: their rows summed, then their columns
        rows = sum(matrix[groups[:, slot]] for slot in range(arity))
        matrix = sum(rows[:, groups[:, slot]] for slot in range(arity))
        np.fill_diagonal(matrix, 0)
        members = members[groups.reshape(-1)].reshape(len(groups), -1)
    layout = members.reshape(-1)  # the rank (or idle core) on each leaf
    leaf_of_rank = np.empty(leaves, dtype=np.int64)
    leaf_of_rank[layout] = np.arange(leaves)
    return leaf_of_rank[:ranks]


def greedy(weight: np.ndarray, machine: Machine) -> np.ndarray:
    """The baseline: the unplaced rank with the most weight to those placed
    (at first and between clusters, the one with the most weight) goes to the
    free leaf where it adds the least hop-bytes (the lowest such leaf)."""
    ranks, leaves = len(weight), machine.leaves
    sizes = block_sizes(machine.tree())[1:]  # the levels above the cores
    # near[k][b, r]: r's weight with the placed ranks in block b of level k
    near = [np.zeros((leaves // size, ranks)) for size in sizes]
    blocks = [np.arange(leaves) // size for size in sizes]
    placed_weight = np.zeros(ranks)  # each rank's weight with the placed ranks
    busy = weight.sum(axis=1)
    taken = np.zeros(leaves)  # -inf on a leaf taken
    placed = np.zeros(ranks)  # -inf on a rank placed
    leaf_of_rank = np.empty(ranks, dtype=np.int64)
    for _ in range(ranks):
        pull = placed_weight + placed
        rank = int(np.argmax(pull))
        if pull[rank] <= 0:
            rank = int(np.argmax(busy + placed))
        # hop-bytes added on each leaf: 2 per byte and level below the lowest
        # block that holds its peer; the least is the most weight held nearby
        held = np.zeros(leaves)
        for k in range(len(sizes)):
            held += near[k][:, rank][blocks[k]]
        leaf = int(np.argmax(held + taken))
        leaf_of_rank[rank] = leaf
        taken[leaf] = placed[rank] = -np.inf
        placed_weight += weight[rank]
        for k in range(len(sizes)):
            near[k][blocks[k][leaf]] += weight[rank]
    return leaf_of_rank


class Scotch:
    """Scotch's library through ctypes: SCOTCH_graphMap of the traffic graph
    onto a tree-leaf architecture (SCOTCH_archTleaf) of the machine's tree."""

    def __init__(self):
        self.error = None
        try:
            for name in ("scotcherr", "scotch"):  # libscotch calls libscotcherr's SCOTCH_errorPrint
                found = ctypes.util.find_library(name) or f"lib{name}-7.0.so"
                library = ctypes.CDLL(found, mode=ctypes.RTLD_GLOBAL)
            self.lib = library
        except OSError as error:
            self.lib = None
            self.error = (
                f"--algorithm scotch: Scotch's library cannot be loaded ({error}); install it "
                "(apt-get install libscotch-dev) or use --algorithm treematch or greedy"
            )
            return
        self.lib.SCOTCH_graphAlloc.restype = ctypes.c_void_p
        self.lib.SCOTCH_archAlloc.restype = ctypes.c_void_p
        self.lib.SCOTCH_stratAlloc.restype = ctypes.c_void_p
        self.num = ctypes.c_int64 if self.lib.SCOTCH_numSizeof() == 8 else ctypes.c_int32

    def map(self, weight: np.ndarray, machine: Machine) -> np.ndarray:
        if self.lib is None:
            raise TandemError(self.error)
        lib, num = self.lib, self.num
        ranks, tree = len(weight), machine.tree() or [1]
        # Scotch's integers: scale the weights so that the cost of any mapping
        # fits them (at most total x the largest distance)
        largest = 2 * len(tree)
        limit = (np.iinfo(np.int32).max if num is ctypes.c_int32 else 1 << 52) // 4
        total = float(weight.sum()) * largest
        scale = min(1.0, limit / total) if total else 1.0
        rows, columns = np.nonzero(weight)
        loads = np.maximum(np.rint(weight[rows, columns] * scale), 1).astype(np.int64)
        starts = np.searchsorted(rows, np.arange(ranks + 1))

        def numbers(values) -> ctypes.Array:
            values = [int(v) for v in values]
            return (num * max(1, len(values)))(*values)

        verttab, edgetab, edlotab = numbers(starts), numbers(columns), numbers(loads)
        sizes = numbers(tree)
        links = numbers([2 * (len(tree) - level) for level in range(len(tree))])
        parttab = (num * ranks)()
        graph, arch, strat = (
            lib.SCOTCH_graphAlloc(),
            lib.SCOTCH_archAlloc(),
            lib.SCOTCH_stratAlloc(),
        )
        graph, arch, strat = (ctypes.c_void_p(p) for p in (graph, arch, strat))
        try:
            if (
                lib.SCOTCH_graphInit(graph)
                or lib.SCOTCH_archInit(arch)
                or lib.SCOTCH_stratInit(strat)
            ):
                raise TandemError("--algorithm scotch: Scotch could not start (SCOTCH_*Init)")
            status = lib.SCOTCH_graphBuild(
                graph,
                num(0),
                num(ranks),
                verttab,
                None,
                None,
                None,
                num(len(columns)),
                edgetab,
                edlotab,
            )
            if status:
                raise TandemError("--algorithm scotch: SCOTCH_graphBuild refused the traffic graph")
            if lib.SCOTCH_archTleaf(arch, num(len(tree)), sizes, links):
                raise TandemError("--algorithm scotch: SCOTCH_archTleaf refused the machine's tree")
            flags = 0x00004 | 0x00002  # SCOTCH_STRATBALANCE | SCOTCH_STRATSPEED
            lib.SCOTCH_stratGraphMapBuild(
                strat, num(flags), num(machine.leaves), ctypes.c_double(0.0)
            )
            if lib.SCOTCH_graphMap(graph, arch, strat, parttab):
                raise TandemError(
                    "--algorithm scotch: SCOTCH_graphMap failed (its message is above)"
                )
        finally:
            lib.SCOTCH_stratExit(strat)
            lib.SCOTCH_archExit(arch)
            lib.SCOTCH_graphExit(graph)
            for pointer in (graph, arch, strat):
                lib.SCOTCH_memFree(pointer)
        return one_per_leaf(np.array(parttab[:], dtype=np.int64), machine.leaves)


def one_per_leaf(leaf_of_rank: np.ndarray, leaves: int) -> np.ndarray:
    """A mapping with at most one rank per leaf: a rank whose leaf is taken
    by a lower rank moves to the nearest free leaf (leaves near in order are
    near in the tree). Scotch balances loads but may leave two on a leaf."""
    taken = np.zeros(leaves, dtype=bool)
    result = leaf_of_rank.copy()
    later = []
    for rank, leaf in enumerate(leaf_of_rank):
        if 0 <= leaf < leaves and not taken[leaf]:
            taken[leaf] = True
        else:
            later.append(rank)
    for rank in later:
        free = np.nonzero(~taken)[0]
        leaf = int(free[np.argmin(np.abs(free - leaf_of_rank[rank]))])
        taken[leaf] = True
        result[rank] = leaf
    return result


def place(weight: np.ndarray, machine: Machine, algorithm: str) -> np.ndarray:
    """The leaf of each rank by 'algorithm'."""
    ranks = len(weight)
    if ranks > machine.leaves:
        raise TandemError(
            f"{ranks} ranks but the machine has {machine.leaves} cores ({machine.describe()}); "
            "expected at least one core per rank: give more --hosts or --cores"
        )
    if algorithm == "treematch":
        return treematch(weight, machine)
    if algorithm == "scotch":
        return Scotch().map(weight, machine)
    if algorithm == "greedy":
        return greedy(weight, machine)
    raise TandemError(
        f"--algorithm {algorithm}: not known; expected one of {', '.join(ALGORITHMS)}"
    )


# ------------------------------------------------------------- the file


def placement_of(leaf_of_rank: np.ndarray, machine: Machine, algorithm: str, extra: dict):
    per_host = machine.cores_per_host
    host = [int(leaf // per_host) for leaf in leaf_of_rank]
    core = [int(leaf % per_host) for leaf in leaf_of_rank]
    cpu = [machine.cpus[c] for c in core]
    return Placement(machine.hosts, per_host, host, core, cpu, algorithm, extra)


# ------------------------------------------------------------ synthetic


def synthetic(ranks: int, seed: int = 1) -> np.ndarray:
    """A made-up traffic matrix: a 2D 5-point stencil over the ranks in a
    shuffled order, plus heavy pairs; what the timings in PERFORMANCE.md map."""
    rng = np.random.default_rng(seed)
    side = int(math.isqrt(ranks))
    while ranks % side:
        side -= 1
    order = rng.permutation(ranks)
    weight = np.zeros((ranks, ranks))
    for index in range(ranks):
        row, column = divmod(index, ranks // side)
        for dr, dc in ((0, 1), (1, 0)):
            r, c = row + dr, column + dc
            if r < side and c < ranks // side:
                a, b = order[index], order[r * (ranks // side) + c]
                weight[a, b] += 1 << 20
    pairs = rng.permutation(ranks)
    for a, b in zip(pairs[0::2], pairs[1::2]):
        weight[a, b] += 1 << 22
    return weight + weight.T


def timings(sizes: list[int], algorithms: list[str], cores: int = 16) -> list[dict]:
    """Seconds each algorithm takes on synthetic(N) for each N, on N / cores
    hosts of 'cores' cores (one host below 'cores' ranks)."""
    rows = []
    for ranks in sizes:
        weight = synthetic(ranks)
        per_host = min(cores, ranks)
        machine = machine_from_shape(max(1, ranks // per_host), per_host)
        identity = cost(weight, np.arange(ranks), machine)
        for algorithm in algorithms:
            start = time.perf_counter()
            try:
                leaf_of_rank = place(weight, machine, algorithm)
            except TandemError as error:
                rows.append({"ranks": ranks, "algorithm": algorithm, "error": str(error)})
                continue
            seconds = time.perf_counter() - start
            placed = cost(weight, leaf_of_rank, machine)
            rows.append(
                {
                    "ranks": ranks,
                    "algorithm": algorithm,
                    "seconds": round(seconds, 3),
                    "hop_bytes_vs_identity": round(placed.hop_bytes / identity.hop_bytes, 3),
                    "across_hosts_share": round(placed.host_share, 3),
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    """python -m tandem.place [N,N,...]: the timings of PERFORMANCE.md."""
    import argparse
    import platform

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("sizes", nargs="?", default="8,64,512,1024,4096")
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS))
    parser.add_argument("--cores", type=int, default=16, help="cores per host (default 16)")
    args = parser.parse_args(argv)
    rows = timings([int(n) for n in args.sizes.split(",")], args.algorithms.split(","), args.cores)
    print(f"tandem place on synthetic matrices, {platform.node()}, {args.cores} cores per host")
    print("| ranks | algorithm | seconds | hop-bytes / identity's | bytes across hosts |")
    print("|---:|---|---:|---:|---:|")
    for row in rows:
        if "error" in row:
            print(f"| {row['ranks']} | {row['algorithm']} | {row['error']} | | |")
        else:
            print(
                f"| {row['ranks']} | {row['algorithm']} | {row['seconds']:.3f} | "
                f"{row['hop_bytes_vs_identity']:.3f} | {100 * row['across_hosts_share']:.1f}% |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
