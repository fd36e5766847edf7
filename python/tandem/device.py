"""tandem device-report: the tables of a run of bench/device.sh on the lent
16-core machine, and the issue's targets checked against them.

bench/device.sh writes every record, labelled with its MPI, transport,
configuration, round and number of ranks, to node.json, overlap.json,
coll.json, halo.json, rma.json and smb.json; this module takes medians over the rounds, writes
one Markdown table per benchmark and a summary.json, and says for each
target whether the run met it.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from .bench import markdown, size_label

BENCHMARKS = ("overlap", "coll", "halo", "rma", "smb")
SPARE_RANKS = (2, 8)  # overlap: each rank has an idle core for its thread (16 cores)
TARGET_SIZES = (1 << 20, 4 << 20)  # overlap target: 1 to 4 MiB
TANDEM_OVERLAP = ("tandem-drive-yield", "tandem-proxy-yield")
TANDEM_COLL = ("tandem-coll-drive", "tandem-coll")


def load(results: Path, name: str) -> dict | None:
    """RESULTS/NAME.json, or None when the run did not get that far.

    A file that is not valid JSON as a whole (a record line that arrived
    broken) is read record by record: bench/device.sh writes one record per
    line, so the broken ones are left out and listed among the problems."""
    path = results / f"{name}.json"
    if not path.exists():
        return None
    text = path.read_text()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    head, _, body = text.partition('\n"records": [\n')
    doc = json.loads(head.rstrip().rstrip(",") + "}") if body else {}
    doc.setdefault("problems", [])
    doc["records"] = []
    for number, line in enumerate(body.splitlines(), len(head.splitlines()) + 2):
        line = line.strip().rstrip(",")
        if not line.startswith("{"):
            continue
        try:
            doc["records"].append(json.loads(line))
        except json.JSONDecodeError:
            doc["problems"].append(f"{path.name} line {number}: a broken record, left out")
    return doc


def summarize(records: list[dict], keys: tuple, fields: tuple) -> list[dict]:
    """Per group of records agreeing on 'keys': the median over rounds of
    each field, and its spread (largest minus smallest)."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)

    def order(item):  # by each key's value, native first among configurations
        return tuple((v != "native", v) if k == "config" else v for k, v in zip(keys, item[0]))

    rows = []
    for key, rs in sorted(groups.items(), key=order):
        row = {**dict(zip(keys, key)), "rounds": len(rs)}
        for f in fields:
            values = [r[f] for r in rs]
            row[f] = statistics.median(values)
            row[f + "_spread"] = max(values) - min(values)
        rows.append(row)
    return rows


def overlap_rows(doc: dict) -> list[dict]:
    keys = ("mpi", "transport", "launched_ranks", "variant", "bytes", "config")
    fields = ("availability", "slowdown", "transfer_s", "total_s", "availability_min")
    records = [r for r in doc["records"] if all(f in r for f in fields)]
    return summarize(records, keys, fields)


def coll_rows(doc: dict) -> list[dict]:
    keys = ("mpi", "transport", "launched_ranks", "collective", "bytes", "config")
    return summarize(doc["records"], keys, ("pure_s", "compute_s", "overall_s", "overlap"))


def halo_rows(doc: dict) -> list[dict]:
    keys = ("mpi", "transport", "launched_ranks", "config")
    return summarize(doc["records"], keys, ("step_s", "compute_s", "comm_s", "hidden"))


def rma_rows(doc: dict) -> list[dict]:
    keys = ("mpi", "transport", "flavour", "bytes", "config")
    fields = ("pure_s", "busy_s", "busy_over_pure", "wrong_bytes")
    records = [r for r in doc["records"] if all(f in r for f in fields)]
    return summarize(records, keys, fields)


def smb_rows(doc: dict) -> list[dict]:
    keys = ("mpi", "transport", "op", "bytes", "config")
    fields = ("availability", "overhead_s", "base_s", "target_slowdown", "wrong_bytes")
    records = [r for r in doc["records"] if all(f in r for f in fields)]
    return summarize(records, keys, fields)


def native_of(rows: list[dict], row: dict, keys: tuple) -> dict | None:
    """The native configuration's row that matches 'row' on 'keys'."""
    for other in rows:
        if other["config"] == "native" and all(other[k] == row[k] for k in keys):
            return other
    return None


def overlap_table(rows: list[dict]) -> str:
    """availability / slowdown in % (worst pair's availability when several
    pairs ran) / transfer alone: in ms for native, else a multiple of it."""
    keys = ("mpi", "transport", "launched_ranks", "variant", "bytes")
    table = []
    for row in rows:
        native = native_of(rows, row, keys)
        cell = f"{100 * row['availability']:.0f} / {100 * row['slowdown']:+.0f}"
        if row["launched_ranks"] > 2:
            cell += f" (worst pair {100 * row['availability_min']:.0f})"
        if row["config"] == "native":
            transfer = f"{1e3 * row['transfer_s']:.2f} ms"
        elif native and native["transfer_s"] > 0:
            transfer = f"{row['transfer_s'] / native['transfer_s']:.1f}x"
        else:
            transfer = "-"
        table.append(
            [row["mpi"], row["transport"], row["launched_ranks"], row["variant"]]
            + [size_label(row["bytes"]), row["config"], cell, transfer, row["rounds"]]
        )
    columns = ["MPI", "transport", "ranks", "variant", "size", "config"]
    return markdown(columns + ["availability / slowdown (%)", "transfer", "rounds"], table)


def overlap_ranges(rows: list[dict]) -> str:
    """One line per MPI, transport, ranks and configuration, one column per
    size: the lowest and highest availability over the variants, and the
    highest slowdown, in % (the medians over the rounds of overlap_rows)."""
    sizes = sorted({r["bytes"] for r in rows})
    cells: dict[tuple, dict[int, list[dict]]] = {}
    for r in rows:
        key = (r["mpi"], r["transport"], r["launched_ranks"], r["config"])
        cells.setdefault(key, {}).setdefault(r["bytes"], []).append(r)

    def order(key):  # Open MPI first, as in the other tables; native first
        return (key[0] != "Open MPI", key[0], key[1], key[2], key[3] != "native", key[3])

    table = []
    for key in sorted(cells, key=order):
        line = list(key)
        for size in sizes:
            rs = cells[key].get(size)
            if not rs:
                line.append("-")
                continue
            low = min(r["availability"] for r in rs)
            high = max(r["availability"] for r in rs)
            worst = max(r["slowdown"] for r in rs)
            line.append(f"{100 * low:.0f}-{100 * high:.0f} / {100 * worst:+.0f}")
        table.append(line)
    columns = ["MPI", "transport", "ranks", "config"] + [size_label(s) for s in sizes]
    return markdown(columns, table)


def coll_table(rows: list[dict]) -> str:
    columns = ["MPI", "transport", "ranks", "collective", "size", "config"]
    return markdown(
        columns + ["pure (ms)", "overlap", "rounds"],
        (
            [r["mpi"], r["transport"], r["launched_ranks"], r["collective"]]
            + [size_label(r["bytes"]), r["config"], f"{1e3 * r['pure_s']:.3f}"]
            + [f"{r['overlap']:.0f}%", r["rounds"]]
            for r in rows
        ),
    )


def halo_table(rows: list[dict]) -> str:
    columns = ["MPI", "transport", "ranks", "config", "step (ms)", "spread (ms)"]
    return markdown(
        columns + ["compute (ms)", "exchange (ms)", "hidden", "rounds"],
        (
            [r["mpi"], r["transport"], r["launched_ranks"], r["config"]]
            + [f"{1e3 * r['step_s']:.2f}", f"{1e3 * r['step_s_spread']:.2f}"]
            + [f"{1e3 * r['compute_s']:.2f}", f"{1e3 * r['comm_s']:.2f}"]
            + [f"{100 * r['hidden']:.0f}%", r["rounds"]]
            for r in rows
        ),
    )


def against_native(rows: list[dict], keys: tuple, include, check, title) -> list[str]:
    """A target checked cell by cell against native's cell of the same 'keys':
    for each configuration (native too where 'include' lets it), the cells
    'include(row)' keeps, a line 'title(config): met' or 'missed in M of N
    cells', then each miss as 'check(row, native)' words it (None: met)."""
    lines = []
    for config in sorted({r["config"] for r in rows}):
        cells, missed = 0, []
        for r in rows:
            native = native_of(rows, r, keys)
            if r["config"] != config or not native or not include(r):
                continue
            cells += 1
            miss = check(r, native)
            if miss:
                missed.append(miss)
        if cells:
            verdict = "met" if not missed else f"missed in {len(missed)} of {cells} cells"
            lines.append(f"{title(config)}: {verdict}")
            lines += [f"  {m}" for m in missed]
    return lines


def ratio(value: float, reference: float) -> float:
    return value / reference if reference > 0 else float("inf")


def rma_table(rows: list[dict]) -> str:
    columns = ["MPI", "transport", "window", "size", "config", "pure (ms)", "spread (ms)"]
    return markdown(
        columns + ["busy (ms)", "busy / pure", "wrong bytes", "rounds"],
        (
            [r["mpi"], r["transport"], r["flavour"], size_label(r["bytes"]), r["config"]]
            + [f"{1e3 * r['pure_s']:.3f}", f"{1e3 * r['pure_s_spread']:.3f}"]
            + [f"{1e3 * r['busy_s']:.3f}", f"{r['busy_over_pure']:.2f}"]
            + [f"{r['wrong_bytes']:.0f}", r["rounds"]]
            for r in rows
        ),
    )


def rma_target(rows: list[dict]) -> list[str]:
    """Truly passive target: the busy get within 2x the pure get, and the
    pure get no slower than native's + 10%; one line per configuration."""

    def check(r, native):
        pure = ratio(r["pure_s"], native["pure_s"])
        if r["busy_over_pure"] > 2 or (r["config"] != "native" and pure > 1.10):
            return (
                f"{r['mpi']} {r['transport']} {r['flavour']} {size_label(r['bytes'])}: "
                f"busy {r['busy_over_pure']:.1f}x pure, pure {pure:.2f}x native"
            )
        return None

    def title(config):
        native = config == "native"
        return f"rma {config}, busy <= 2x pure" + ("" if native else ", pure <= 1.10x native")

    keys = ("mpi", "transport", "flavour", "bytes")
    return against_native(rows, keys, lambda r: True, check, title)


def smb_table(rows: list[dict]) -> str:
    columns = ["MPI", "transport", "op", "size", "config", "availability", "spread"]
    return markdown(
        columns + ["overhead (us)", "transfer (us)", "target slowdown", "wrong bytes", "rounds"],
        (
            [r["mpi"], r["transport"], r["op"], size_label(r["bytes"]), r["config"]]
            + [f"{100 * r['availability']:.0f}%", f"{100 * r['availability_spread']:.0f}"]
            + [f"{1e6 * r['overhead_s']:.1f}", f"{1e6 * r['base_s']:.1f}"]
            + [f"{100 * r['target_slowdown']:+.0f}%", f"{r['wrong_bytes']:.0f}", r["rounds"]]
            for r in rows
        ),
    )


def smb_target(rows: list[dict]) -> list[str]:
    """SMB availability of get and put at 64 KiB and above: >= 90%, with an
    overhead below native's; one line per configuration."""

    def check(r, native):
        if r["availability"] < 0.90 or r["overhead_s"] >= native["overhead_s"]:
            return (
                f"{r['mpi']} {r['transport']} {r['op']} {size_label(r['bytes'])}: "
                f"{100 * r['availability']:.0f}%, overhead {1e6 * r['overhead_s']:.1f} us "
                f"against native {1e6 * native['overhead_s']:.1f}"
            )
        return None

    return against_native(
        rows,
        ("mpi", "transport", "op", "bytes"),
        lambda r: r["config"] != "native" and r["bytes"] >= 65536,
        check,
        lambda config: f"smb {config}, >= 90% at 64 KiB and above, overhead < native",
    )


def overlap_target(rows: list[dict]) -> list[str]:
    """With a spare core per rank: availability >= 95% at <= 3% slowdown,
    1-4 MiB, every variant, transport and MPI; one line per configuration."""
    lines = []
    for config in sorted({r["config"] for r in rows if r["config"] != "native"}):
        cells = [
            r
            for r in rows
            if r["config"] == config
            and r["launched_ranks"] in SPARE_RANKS
            and r["bytes"] in TARGET_SIZES
        ]
        if not cells:
            continue
        missed = [
            f"{r['mpi']} {r['transport']} {r['launched_ranks']} ranks {r['variant']} "
            f"{size_label(r['bytes'])}: {100 * r['availability']:.0f} / "
            f"{100 * r['slowdown']:+.0f}"
            for r in cells
            if r["availability"] < 0.95 or r["slowdown"] > 0.03
        ]
        verdict = "met" if not missed else f"missed in {len(missed)} of {len(cells)} cells"
        lines.append(f"overlap {config}, >= 95% at <= +3%, 1-4 MiB, 2 and 8 ranks: {verdict}")
        lines += [f"  {m}" for m in missed]
    return lines


def coll_target(rows: list[dict]) -> list[str]:
    """Nonblocking collectives: >= 90% overlap at <= native + 10% pure time."""

    def check(r, native):
        pure = ratio(r["pure_s"], native["pure_s"])
        if r["overlap"] < 90 or pure > 1.10:
            return (
                f"{r['mpi']} {r['transport']} {r['launched_ranks']} ranks "
                f"{r['collective']} {size_label(r['bytes'])}: {r['overlap']:.0f}%, "
                f"pure {pure:.2f}x native"
            )
        return None

    return against_native(
        rows,
        ("mpi", "transport", "launched_ranks", "collective", "bytes"),
        lambda r: r["config"] != "native",
        check,
        lambda config: f"coll {config}, >= 90% at <= 1.10x native pure time",
    )


def busy_target(halo: list[dict], overlap: list[dict]) -> list[str]:
    """Every core running a rank (14 or more ranks): never slower than native
    by more than native's own spread between rounds: the ghost-cell step,
    and the overlap benchmark's post + work + wait."""
    measured = [("halo", halo, ("mpi", "transport", "launched_ranks"), "step_s")]
    keys = ("mpi", "transport", "launched_ranks", "variant", "bytes")
    measured.append(("overlap", overlap, keys, "total_s"))
    lines = []
    for name, rows, match, field in measured:
        for row in rows:
            if row["launched_ranks"] < 14 or row["config"] == "native":
                continue
            native = native_of(rows, row, match)
            if not native:
                continue
            slower = row[field] - native[field]
            verdict = "within" if slower <= native[field + "_spread"] else "beyond"
            where = " ".join(str(row[k]) for k in match if k != "bytes")
            if "bytes" in match:
                where += f" {size_label(row['bytes'])}"
            lines.append(
                f"{name} {where} {row['config']}: {1e3 * row[field]:.3f} ms against native "
                f"{1e3 * native[field]:.3f} (spread {1e3 * native[field + '_spread']:.3f}): "
                f"{verdict} the spread"
            )
    return lines


def report(results: Path, out: Path | None = None) -> Path:
    """Tables (NAME.md, and overlap-ranges.md: the variants of each size in
    one cell), summary.json and targets.txt in 'out' (default:
    'results'); returns the path of targets.txt."""
    out = out or results
    out.mkdir(parents=True, exist_ok=True)
    docs = {name: load(results, name) for name in BENCHMARKS}
    makers = {
        "overlap": overlap_rows,
        "coll": coll_rows,
        "halo": halo_rows,
        "rma": rma_rows,
        "smb": smb_rows,
    }
    tables = {
        "overlap": overlap_table,
        "coll": coll_table,
        "halo": halo_table,
        "rma": rma_table,
        "smb": smb_table,
    }
    summary, targets = {}, []
    for name in BENCHMARKS:
        doc = docs[name]
        if doc is None:
            targets.append(f"{name}: no results")
            continue
        rows = makers[name](doc)
        summary[name] = {"problems": doc.get("problems", []), "rows": rows}
        (out / f"{name}.md").write_text(tables[name](rows))
        if name == "overlap":
            (out / "overlap-ranges.md").write_text(overlap_ranges(rows))
    if "overlap" in summary:
        targets += overlap_target(summary["overlap"]["rows"])
    if "coll" in summary:
        targets += coll_target(summary["coll"]["rows"])
    if "halo" in summary:
        targets += busy_target(summary["halo"]["rows"], summary.get("overlap", {}).get("rows", []))
    if "rma" in summary:
        targets += rma_target(summary["rma"]["rows"])
    if "smb" in summary:
        targets += smb_target(summary["smb"]["rows"])
    node = load(results, "node")
    if node:
        summary["node"] = {
            "probe": node.get("probe"),
            "settings": node.get("settings"),
            "hello": [
                {k: h.get(k) for k in ("mpi", "transport", "ranks", "tandem", "settings", "ok")}
                for h in node.get("hello", [])
            ],
        }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    path = out / "targets.txt"
    path.write_text("\n".join(targets) + "\n")
    return path
