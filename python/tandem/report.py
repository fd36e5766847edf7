"""tandem report: the communication matrices that TANDEM_MONITOR=1 records, as
heatmaps, a message-size histogram, TreeMatch .mat files and a text summary.

At MPI_Finalize the library writes one job file PREFIX.json: for every rank and
every kind of traffic, the messages, bytes and message-size histogram it
recorded with each peer (MPI_COMM_WORLD ranks), and the collective operations
of each communicator it belonged to. Row i, column j of a matrix is what rank i
recorded with peer j: the destination or target, except for p2p_recv, where
the peer is the source; for io_read and io_write only the diagonal counts.
The "all" kind, which the library sums as it records, counts every byte
between ranks once (docs/MONITORING.md, "What all counts"): the report's
totals and TreeMatch matrices are its.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .builds import TandemError

FORMAT = "tandem-monitor"
VERSION = 2  # 2 added "all" (from version 1, the report added coll and coll_internal)
KINDS = (
    "p2p_send",
    "p2p_recv",
    "coll",
    "coll_internal",
    "osc_put",
    "osc_get",
    "io_read",
    "io_write",
    "all",
)
# What the library sums into "all": p2p_send, osc_put, osc_get, and each
# collective as coll_internal's messages (Tandem ran it) or its coll volume
# (the MPI library did). For the report's labels only.
ALL_PARTS = "p2p_send + osc_put + osc_get + each collective once (coll_internal or coll)"
IO_KINDS = ("io_read", "io_write")
PATTERNS = ("one_to_all", "all_to_one", "all_to_all")
BINS = 66  # bin 0: empty messages; bin k >= 1: sizes in [2^(k-1), 2^k)
# What the rows and the columns of each kind's matrices are.
AXES = {
    "p2p_send": ("sending rank", "destination rank"),
    "p2p_recv": ("receiving rank", "source rank"),
    "coll": ("sending rank", "destination rank"),
    "coll_internal": ("sending rank", "destination rank"),
    "osc_put": ("origin rank", "target rank"),
    "osc_get": ("origin rank", "target rank"),
    "io_read": ("rank", "rank"),
    "io_write": ("rank", "rank"),
    "all": ("sending or origin rank", "destination or target rank"),
}
INT64_MAX = np.iinfo(np.int64).max


@dataclass
class Traffic:
    """What every rank recorded for one kind: row = recording rank, column = peer."""

    messages: np.ndarray  # N x N
    bytes: np.ndarray  # N x N
    histogram: np.ndarray  # N x N x BINS

    @property
    def total_messages(self) -> int:
        return int(self.messages.sum())

    @property
    def total_bytes(self) -> int:
        return int(self.bytes.sum())

    @property
    def active(self) -> bool:
        return bool(self.messages.any() or self.bytes.any())


@dataclass
class Collectives:
    """The collective operations one rank recorded on one communicator."""

    name: str
    rank: int
    procs: list[int]
    operations: dict[str, int] = field(default_factory=dict)  # by pattern
    bytes: dict[str, int] = field(default_factory=dict)  # by pattern


@dataclass
class Job:
    """The contents of one PREFIX.json."""

    path: Path
    world_size: int
    mpi: str
    traffic: dict[str, Traffic]  # every kind of KINDS
    communicators: list[Collectives]
    hosts: list[str] = field(default_factory=list)  # each rank's, where the file names them

    def active_kinds(self) -> list[str]:
        return [kind for kind in KINDS if self.traffic[kind].active]

    def all_bytes(self) -> np.ndarray:
        return self.traffic["all"].bytes

    def all_messages(self) -> np.ndarray:
        return self.traffic["all"].messages


def job_path(prefix: str | Path) -> Path:
    """PREFIX.json; a prefix already ending in .json names the job file itself."""
    path = Path(prefix)
    return path if path.suffix == ".json" else path.with_name(path.name + ".json")


def output_prefix(prefix: str | Path) -> Path:
    """The prefix of the report's files: PREFIX without a trailing .json."""
    path = Path(prefix)
    return path.with_suffix("") if path.suffix == ".json" else path


def integers(value, shape: tuple[int, ...], path: Path, where: str) -> np.ndarray:
    """'value' as an int64 array of 'shape', or a TandemError saying what is wrong."""
    expected = f"{' x '.join(map(str, shape))} non-negative integers"
    try:
        array = np.array(value)
    except (ValueError, TypeError):
        raise TandemError(f"{path}: {where}: expected {expected}, found ragged lists") from None
    if array.shape != shape:
        found = "a single value" if not array.shape else " x ".join(map(str, array.shape))
        raise TandemError(f"{path}: {where}: expected {expected}, found {found}")
    if array.dtype.kind not in "iu" or (array.dtype.kind == "u" and array.max() > INT64_MAX):
        raise TandemError(f"{path}: {where}: expected {expected}, found {array.dtype} values")
    if array.min() < 0:
        raise TandemError(f"{path}: {where}: expected {expected}, found {array.min()}")
    return array.astype(np.int64)


def count(value, path: Path, where: str) -> int:
    """A non-negative integer field."""
    if type(value) is not int or value < 0:
        raise TandemError(f"{path}: {where}: expected a non-negative integer, found {value!r}")
    return value


def member(obj: dict, name: str, kind: type, path: Path, where: str):
    """obj[name], which must be a 'kind' (dict, list, str)."""
    what = {dict: "an object", list: "a list", str: "a string"}[kind]
    if name not in obj:
        raise TandemError(f"{path}: {where}: no {name!r} member; expected {what}")
    if not isinstance(obj[name], kind):
        raise TandemError(f"{path}: {where}.{name}: expected {what}, found {obj[name]!r}")
    return obj[name]


def load_communicators(entry: dict, rank: int, size: int, path: Path) -> list[Collectives]:
    where = f"ranks[{rank}]"
    if "communicators" not in entry:
        return []
    found = []
    for index, comm in enumerate(member(entry, "communicators", list, path, where)):
        at = f"{where}.communicators[{index}]"
        if not isinstance(comm, dict):
            raise TandemError(f"{path}: {at}: expected an object, found {comm!r}")
        name = member(comm, "name", str, path, at)
        procs = member(comm, "procs", list, path, at)
        if not all(type(p) is int and 0 <= p < size for p in procs):
            raise TandemError(
                f"{path}: {at}.procs: expected ranks from 0 to {size - 1}, found {procs!r}"
            )
        record = Collectives(name, rank, procs)
        for pattern in PATTERNS:
            numbers = member(comm, pattern, dict, path, at)
            for what in ("operations", "bytes"):
                value = count(numbers.get(what), path, f"{at}.{pattern}.{what}")
                getattr(record, what)[pattern] = value
        found.append(record)
    return found


def load(prefix: str | Path) -> Job:
    """Read and check PREFIX.json; a TandemError names the file, what is wrong and
    what was expected."""
    path = job_path(prefix)
    if not path.is_file():
        raise TandemError(
            f"{path}: no such file; expected the job file that a run with TANDEM_MONITOR=1 "
            "writes at MPI_Finalize (tandem run --monitor=PREFIX writes PREFIX.json)"
        )
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as error:
        raise TandemError(f"{path}: cannot be read: {error}") from None
    except json.JSONDecodeError as error:
        raise TandemError(f"{path}: not valid JSON: {error}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise TandemError(f"{path}: format is {found!r}, expected {FORMAT!r}")
    if doc.get("version") != VERSION or type(doc.get("version")) is not int:
        earlier = (
            " (an earlier Tandem wrote it: run the program again)"
            if doc.get("version") == 1
            else ""
        )
        raise TandemError(
            f"{path}: version {doc.get('version')!r} is not known; expected {VERSION}{earlier}"
        )
    size = doc.get("world_size")
    if type(size) is not int or size < 1:
        raise TandemError(f"{path}: world_size: expected a positive integer, found {size!r}")
    mpi = member(doc, "mpi", str, path, "the job")
    ranks = member(doc, "ranks", list, path, "the job")
    if len(ranks) != size:
        raise TandemError(
            f"{path}: ranks: expected {size} entries (world_size), found {len(ranks)}"
        )

    rows: dict[str, dict[str, list[np.ndarray]]] = {
        kind: {"messages": [], "bytes": [], "histogram": []} for kind in KINDS
    }
    communicators = []
    hosts: list[str] = []
    for rank, entry in enumerate(ranks):
        where = f"ranks[{rank}]"
        if not isinstance(entry, dict):
            raise TandemError(f"{path}: {where}: expected an object, found {entry!r}")
        if entry.get("rank") != rank:
            raise TandemError(
                f"{path}: {where}.rank is {entry.get('rank')!r}, expected {rank} "
                "(one entry per rank, in rank order)"
            )
        counters = member(entry, "counters", dict, path, where)
        for kind in KINDS:
            if kind not in counters:
                raise TandemError(
                    f"{path}: {where}.counters: no {kind!r} entry; "
                    f"expected every kind: {', '.join(KINDS)}"
                )
            at = f"{where}.counters.{kind}"
            if not isinstance(counters[kind], dict):
                raise TandemError(f"{path}: {at}: expected an object, found {counters[kind]!r}")
            for what, shape in (
                ("messages", (size,)),
                ("bytes", (size,)),
                ("histogram", (size, BINS)),
            ):
                if what not in counters[kind]:
                    raise TandemError(f"{path}: {at}: no {what!r} member")
                rows[kind][what].append(integers(counters[kind][what], shape, path, f"{at}.{what}"))
        communicators += load_communicators(entry, rank, size, path)
        if "host" in entry:
            hosts.append(member(entry, "host", str, path, where))

    traffic = {}
    diagonal = np.eye(size, dtype=bool)
    for kind in KINDS:
        messages = np.stack(rows[kind]["messages"])
        volume = np.stack(rows[kind]["bytes"])
        histogram = np.stack(rows[kind]["histogram"])
        if kind in IO_KINDS:  # rank i's own reads or writes are at [i][i]; the rest is unused
            messages = np.where(diagonal, messages, 0)
            volume = np.where(diagonal, volume, 0)
            histogram = np.where(diagonal[:, :, None], histogram, 0)
        traffic[kind] = Traffic(messages, volume, histogram)
    return Job(path, size, mpi, traffic, communicators, hosts if len(hosts) == size else [])


def human(size: int) -> str:
    """A byte count in binary units: 512 B, 1.5 KiB, 3.0 GiB."""
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        value /= 1024
        if value < 1024 or unit == "EiB":
            return f"{value:.1f} {unit}"
    raise AssertionError("not reached")


def bin_label(index: int) -> str:
    """The sizes of histogram bin 'index' by their lower bound: 0, 1, 2, 4, ..., 1K, 2K."""
    if index == 0:
        return "0"
    low = 1 << (index - 1)
    for unit in ("", "K", "M", "G", "T", "P", "E"):
        if low < 1024:
            return f"{low}{unit}"
        low >>= 10
    raise AssertionError("not reached")


def table(header: list[str], rows: list[list], indent: str = "  ") -> list[str]:
    """Lines of a plain text table: the first column left-aligned, the others right."""
    cells = [header] + [[str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = []
    for row in cells:
        first = row[0].ljust(widths[0])
        rest = [cell.rjust(width) for cell, width in zip(row[1:], widths[1:])]
        lines.append(indent + "  ".join([first, *rest]).rstrip())
    return lines


def top_pairs(job: Job, limit: int = 5) -> list[tuple[int, int, int, int]]:
    """(sender, receiver, bytes, messages) of the pairs that exchanged the most bytes,
    over every communication kind; ties go to the lower ranks."""
    volume = job.all_bytes()
    messages = job.all_messages()
    pairs = [
        (int(i), int(j), int(volume[i, j]), int(messages[i, j]))
        for i, j in zip(*np.nonzero(volume + messages))
    ]
    pairs.sort(key=lambda pair: (-pair[2], -pair[3], pair[0], pair[1]))
    return pairs[:limit]


def collectives_by_name(job: Job) -> list[tuple[str, int, dict[str, int], dict[str, int]]]:
    """(name, ranks that recorded it, operations, bytes) per communicator name,
    operations and bytes summed over those ranks."""
    groups: dict[str, tuple[set[int], dict[str, int], dict[str, int]]] = {}
    for comm in job.communicators:
        ranks, operations, volume = groups.setdefault(
            comm.name, (set(), dict.fromkeys(PATTERNS, 0), dict.fromkeys(PATTERNS, 0))
        )
        ranks.add(comm.rank)
        for pattern in PATTERNS:
            operations[pattern] += comm.operations[pattern]
            volume[pattern] += comm.bytes[pattern]
    return [(name, len(r), o, v) for name, (r, o, v) in groups.items()]


def rank_ranges(ranks: list[int]) -> str:
    """Ranks as runs: 0-3,6,8-9."""
    runs: list[list[int]] = []
    for rank in ranks:
        if runs and rank == runs[-1][-1] + 1:
            runs[-1].append(rank)
        else:
            runs.append([rank])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else f"{r[0]}" for r in runs)


def hosts_section(job: Job) -> list[str]:
    """Where the ranks ran and what each host sent to the others, when they
    ran on more than one host."""
    names = sorted(set(job.hosts), key=job.hosts.index)
    if len(names) < 2:
        return []
    volume = job.all_bytes()
    rows, between = [], 0
    for name in names:
        mine = [r for r in range(job.world_size) if job.hosts[r] == name]
        others = [r for r in range(job.world_size) if job.hosts[r] != name]
        sent = int(volume[np.ix_(mine, others)].sum())
        between += sent
        rows.append([name, rank_ranges(mine), sent, human(sent)])
    total = int(volume.sum())
    share = f", {100 * between / total:.0f}% of all" if total else ""
    lines = ["", f"hosts, all communication between them ({human(between)}{share}):"]
    return lines + table(["host", "ranks", "bytes to other hosts", ""], rows)


def summary(job: Job) -> str:
    """The text summary of a job (what PREFIX_summary.txt holds)."""
    lines = [
        f"Tandem monitor report: {job.path}",
        f"world size {job.world_size}, MPI: {job.mpi}",
        "",
        "traffic per kind:",
    ]
    rows = []
    for kind in KINDS:
        traffic = job.traffic[kind]
        if traffic.active:
            rows.append(
                [kind, traffic.total_messages, traffic.total_bytes, human(traffic.total_bytes)]
            )
    if rows:
        lines += table(["kind", "messages", "bytes", ""], rows)
    else:
        lines.append("  none recorded")
    idle = [kind for kind in KINDS if not job.traffic[kind].active]
    if idle:
        lines.append(f"  no traffic: {', '.join(idle)}")

    lines += ["", f"top pairs by bytes, all communication ({ALL_PARTS}):"]
    pairs = top_pairs(job)
    if pairs:
        lines += table(
            ["sender -> receiver", "bytes", "", "messages"],
            [[f"{i} -> {j}", size, human(size), n] for i, j, size, n in pairs],
        )
    else:
        lines.append("  none")

    sent = job.all_bytes().sum(axis=1)
    messages = job.all_messages().sum(axis=1)
    lines += ["", "sent per rank, all communication:"]
    lines += table(
        ["rank", "messages", "bytes", ""],
        [
            [rank, int(messages[rank]), int(sent[rank]), human(int(sent[rank]))]
            for rank in range(job.world_size)
        ],
    )
    if sent.sum() > 0:
        busiest = int(sent.argmax())
        imbalance = sent[busiest] / sent.mean()
        lines.append(f"  imbalance (max/mean bytes sent): {imbalance:.2f}, max on rank {busiest}")

    lines += hosts_section(job)

    read = job.traffic["io_read"].bytes.diagonal()
    written = job.traffic["io_write"].bytes.diagonal()
    if read.any() or written.any():
        lines += ["", "I/O per rank:"]
        lines += table(
            ["rank", "bytes read", "", "bytes written", ""],
            [
                [
                    rank,
                    int(read[rank]),
                    human(int(read[rank])),
                    int(written[rank]),
                    human(int(written[rank])),
                ]
                for rank in range(job.world_size)
            ],
        )

    groups = collectives_by_name(job)
    if groups:
        lines += ["", "collectives per communicator (operations and bytes summed over its ranks):"]
        header = ["communicator", "ranks"]
        for pattern in PATTERNS:
            header += [f"{pattern.replace('_', '-')} ops", "bytes"]
        rows = []
        for name, ranks, operations, volume in groups:
            row = [name, ranks]
            for pattern in PATTERNS:
                row += [operations[pattern], volume[pattern]]
            rows.append(row)
        lines += table(header, rows)
    return "\n".join(lines) + "\n"


def write_matrix(matrix: np.ndarray, path: Path) -> Path:
    """A matrix in TreeMatch's input format: N lines of N numbers, no header."""
    path.write_text("".join(" ".join(str(int(v)) for v in row) + "\n" for row in matrix))
    return path


BYTE_UNITS = (("B", 1), ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("TiB", 1 << 40))
COUNT_UNITS = (("", 1), ("thousands", 10**3), ("millions", 10**6), ("billions", 10**9))
LABELLED_RANKS = 16  # up to this many ranks, every cell of a heatmap shows its value


def readable_unit(largest: int, units) -> tuple[str, int]:
    """The largest of 'units' (name, size) that 'largest' holds at least once."""
    return [unit for unit in units if unit[1] <= max(largest, 1)][-1]


def cell_text(value: float) -> str:
    """A heatmap cell's value in at most 3 significant digits: 0, 3, 1.5, 0.25, 512."""
    if value == 0:
        return "0"
    if value < 0.01:
        return "<0.01"
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def heatmap_figure(job: Job, kind: str):
    """Two panels, bytes and messages, row = recording rank, column = peer;
    the colour bars in a readable unit, and for up to LABELLED_RANKS ranks
    each cell's value written in it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    traffic = job.traffic[kind]
    rows, columns = AXES[kind]
    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    panels = (
        (traffic.bytes, "bytes", human(traffic.total_bytes), BYTE_UNITS),
        (traffic.messages, "messages", f"{traffic.total_messages} messages", COUNT_UNITS),
    )
    for ax, (matrix, label, total, units) in zip(axes, panels):
        unit, scale = readable_unit(int(matrix.max()), units)
        values = matrix / scale
        image = ax.imshow(values, cmap="viridis", interpolation="nearest")
        ticks = MaxNLocator(integer=True) if scale == 1 else None
        fig.colorbar(image, ax=ax, label=f"{label}, in {unit}" if unit else label, ticks=ticks)
        ax.set_title(f"{label}: {total}")
        ax.set_xlabel(columns)
        ax.set_ylabel(rows)
        if job.world_size <= LABELLED_RANKS:
            ax.set_xticks(range(job.world_size))
            ax.set_yticks(range(job.world_size))
            size = 10 if job.world_size <= 8 else 7
            for (row, column), value in np.ndenumerate(values):
                dark = image.norm(value) < 0.5  # the dark end of viridis: white text
                ax.text(
                    column,
                    row,
                    cell_text(value),
                    ha="center",
                    va="center",
                    fontsize=size,
                    color="white" if dark else "black",
                )
    fig.suptitle(
        f"{kind}, {job.world_size} ranks, {job.mpi}: "
        f"{traffic.total_messages} messages, {human(traffic.total_bytes)}"
    )
    fig.tight_layout()
    return fig


def plot_heatmap(job: Job, kind: str, path: Path) -> Path:
    """heatmap_figure written to 'path' as PNG."""
    fig = heatmap_figure(job, kind)
    import matplotlib.pyplot as plt  # after heatmap_figure chose its backend

    fig.savefig(path, dpi=80, bbox_inches="tight")
    plt.close(fig)
    return path


def plot_histogram(job: Job, kinds: list[str], path: Path) -> Path:
    """Messages per size bin, summed over ranks and peers, one series per kind."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    counts = {kind: job.traffic[kind].histogram.sum(axis=(0, 1)) for kind in kinds}
    used = np.nonzero(sum(counts.values()))[0]
    first, last = (int(used[0]), int(used[-1])) if used.size else (0, 1)
    bins = np.arange(first, last + 1)
    width = 0.8 / len(kinds)
    fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(bins) + 2), 4.5))
    for index, kind in enumerate(kinds):
        offset = (index - (len(kinds) - 1) / 2) * width
        ax.bar(bins + offset, counts[kind][first : last + 1], width, label=kind)
    positive = np.concatenate([c[c > 0] for c in counts.values()])
    if positive.size and positive.max() >= 100 * positive.min():
        ax.set_yscale("log")
    else:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xticks(bins)
    ax.set_xticklabels([bin_label(b) for b in bins], rotation=45 if len(bins) > 12 else 0)
    ax.set_xlabel("message size in bytes (bin: from the size shown to twice it)")
    ax.set_ylabel("messages")
    ax.set_title(f"Message sizes, {job.world_size} ranks, {job.mpi}, all ranks and peers")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=80, bbox_inches="tight")
    plt.close(fig)
    return path


def write_report(job: Job, prefix: str | Path, out_dir: str | Path | None = None) -> list[Path]:
    """Write the heatmaps, the histogram, the .mat files and the summary of 'job'
    as OUT_DIR/NAME_*, NAME being the last part of 'prefix' and OUT_DIR the
    directory of 'prefix' by default; returns the files written.

    A kind with no traffic gets no files; those a former report left for it
    under the same names are removed, so that none describes another run.
    The "all" matrices, TreeMatch's input, are written in any case."""
    prefix = output_prefix(prefix)
    out = Path(out_dir) if out_dir is not None else prefix.parent
    if out.exists() and not out.is_dir():
        raise TandemError(f"{out}: not a directory")
    out.mkdir(parents=True, exist_ok=True)
    name = prefix.name
    active = job.active_kinds()
    written = []
    for kind in KINDS:
        heatmap = out / f"{name}_{kind}_heatmap.png"
        matrices = (out / f"{name}_{kind}_bytes.mat", out / f"{name}_{kind}_msgs.mat")
        if kind in active:
            written.append(plot_heatmap(job, kind, heatmap))
        else:
            heatmap.unlink(missing_ok=True)
        if kind in active or kind == "all":
            written.append(write_matrix(job.traffic[kind].bytes, matrices[0]))
            written.append(write_matrix(job.traffic[kind].messages, matrices[1]))
        else:
            for stale in matrices:
                stale.unlink(missing_ok=True)
    histogram = out / f"{name}_histogram.png"
    measured = [kind for kind in active if kind != "all"]  # "all" is their sum
    if measured:
        written.append(plot_histogram(job, measured, histogram))
    else:
        histogram.unlink(missing_ok=True)
    text = out / f"{name}_summary.txt"
    text.write_text(summary(job))
    written.append(text)
    return written
