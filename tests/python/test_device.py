"""The run on the lent 16-core machine: bench/device.sh and tools/device-pack
parse as bash, and tandem device-report turns what bench/device.sh writes into
tables and says which targets the run met. (The pack itself, and the run with
the system's MPI hidden, are `make device-check`: it downloads Debian's
packages, which CI should not do on every run.)"""

from __future__ import annotations

import json
import subprocess

from conftest import ROOT
from tandem import device

MACHINE = {"cores": 16, "kernel": "4.4.0", "cpu": "x", "memory_kib": 1, "host": "h"}


def test_the_scripts_parse_as_bash():
    for script in ("bench/device.sh", "tools/device-pack"):
        result = subprocess.run(["bash", "-n", str(ROOT / script)], capture_output=True)
        assert result.returncode == 0, result.stderr


def overlap_record(config, ranks, variant, size, availability, slowdown, round_index=0):
    return {
        "mpi": "Open MPI",
        "transport": "shm",
        "config": config,
        "round": round_index,
        "launched_ranks": ranks,
        "variant": variant,
        "bytes": size,
        "ranks": ranks,
        "pairs": ranks // 2,
        "trials": 5,
        "transfer_s": 0.001,
        "work_s": 0.001,
        "total_s": 0.001 * (2 - availability),
        "inflight_s": 0.001,
        "availability": availability,
        "slowdown": slowdown,
        "availability_min": availability,
        "slowdown_max": slowdown,
    }


def document(name, records, problems=()):
    return {
        "benchmark": name,
        "machine": MACHINE,
        "settings": {},
        "problems": list(problems),
        "records": records,
    }


def write_run(tmp_path, overlap, coll, halo):
    node = {
        "benchmark": "node",
        "machine": MACHINE,
        "probe": {"cma": "ok"},
        "settings": {"openmpi-shm": ""},
        "hello": [{"mpi": "Open MPI", "transport": "shm", "ranks": 2, "tandem": False, "ok": True}],
    }
    (tmp_path / "node.json").write_text(json.dumps(node))
    for name, records in (("overlap", overlap), ("coll", coll), ("halo", halo)):
        (tmp_path / f"{name}.json").write_text(json.dumps(document(name, records)))


def test_device_report_takes_medians_over_rounds_and_checks_the_targets(tmp_path):
    mib = 1 << 20
    overlap = [
        overlap_record("native", 2, "both", mib, 0.1, 0.0),
        overlap_record("tandem-proxy-yield", 2, "both", mib, 0.99, 0.01, 0),
        overlap_record("tandem-proxy-yield", 2, "both", mib, 0.90, 0.01, 1),
        overlap_record("tandem-proxy-yield", 2, "both", mib, 0.97, 0.02, 2),
        overlap_record("tandem-drive-yield", 2, "both", mib, 0.50, 0.10),
    ]
    coll = [
        {
            "mpi": "MPICH",
            "transport": "shm",
            "config": config,
            "round": 0,
            "launched_ranks": 8,
            "collective": "ibcast",
            "bytes": mib,
            "pure_s": pure,
            "compute_s": pure,
            "overall_s": pure,
            "overlap": overlap_percent,
        }
        for config, pure, overlap_percent in (("native", 0.010, 5), ("tandem-coll", 0.0105, 95))
    ]
    halo = [
        {
            "mpi": "MPICH",
            "transport": "tcp",
            "config": config,
            "round": r,
            "launched_ranks": 16,
            "step_s": step,
            "compute_s": 0.002,
            "comm_s": 0.001,
            "hidden": 0.5,
        }
        for config, r, step in (
            ("native", 0, 0.0030),
            ("native", 1, 0.0034),
            ("tandem-proxy-yield", 0, 0.0033),
            ("tandem-drive-yield", 0, 0.0040),
        )
    ]
    write_run(tmp_path, overlap, coll, halo)
    out = tmp_path / "report"
    targets = device.report(tmp_path, out).read_text().splitlines()

    summary = json.loads((out / "summary.json").read_text())
    proxy = next(r for r in summary["overlap"]["rows"] if r["config"] == "tandem-proxy-yield")
    assert proxy["rounds"] == 3
    assert proxy["availability"] == 0.97  # the median of 0.99, 0.90, 0.97
    assert abs(proxy["availability_spread"] - 0.09) < 1e-9
    assert "tandem-proxy-yield | 97 / +1" in (out / "overlap.md").read_text()

    assert "overlap tandem-proxy-yield, >= 95% at <= +3%, 1-4 MiB, 2 and 8 ranks: met" in targets
    assert any(
        t.startswith("overlap tandem-drive-yield") and "missed in 1 of 1" in t for t in targets
    )
    assert "coll tandem-coll, >= 90% at <= 1.10x native pure time: met" in targets
    # 16 ranks: native 3.2 ms (median of two rounds), spread 0.4 ms
    assert any("tandem-proxy-yield" in t and "within the spread" in t for t in targets)
    assert any("tandem-drive-yield" in t and "beyond the spread" in t for t in targets)


def test_device_report_of_a_run_cut_short(tmp_path):
    write_run(tmp_path, [], [], [])
    (tmp_path / "halo.json").unlink()
    targets = device.report(tmp_path).read_text()
    assert "halo: no results" in targets
    assert (tmp_path / "overlap.md").exists()


def test_a_broken_record_line_is_left_out_and_listed(tmp_path):
    # As bench/device.sh writes a file: one record per line. The device's
    # first run had one line where two records ran together.
    good = [overlap_record("native", 2, "both", 1 << 20, 0.0, 0.0, r) for r in range(2)]
    broken = json.dumps(good[0])[:120] + json.dumps(good[1])
    text = (
        '{"benchmark": "overlap", "machine": {}, "settings": {},\n"problems": [\n"one"\n],\n'
        '"records": [\n' + ",\n".join([json.dumps(good[0]), broken, json.dumps(good[1])]) + "\n]}\n"
    )
    (tmp_path / "overlap.json").write_text(text)
    doc = device.load(tmp_path, "overlap")
    assert doc["records"] == good
    assert doc["problems"][0] == "one"
    assert len(doc["problems"]) == 2 and "broken record" in doc["problems"][1]


def test_overlap_ranges_give_the_variants_of_a_size_in_one_cell(tmp_path):
    records = [
        overlap_record("tandem-drive-yield", 2, variant, 1 << 20, availability, slowdown)
        for variant, availability, slowdown in (
            ("isend_recv", 0.97, 0.01),
            ("irecv_send", 0.40, 0.02),
            ("both", 0.90, -0.01),
        )
    ]
    write_run(tmp_path, records, [], [])
    device.report(tmp_path)
    table = (tmp_path / "overlap-ranges.md").read_text()
    assert "| Open MPI | shm | 2 | tandem-drive-yield | 40-97 / +2 |" in table


def rma_record(config, mpi, pure, busy, round_=0, wrong=0):
    return {
        "mpi": mpi,
        "transport": "shm",
        "config": config,
        "round": round_,
        "launched_ranks": 2,
        "bytes": 8 << 20,
        "work_s": 0.5,
        "trials": 5,
        "flavour": "allocate",
        "ranks": 2,
        "wrong_bytes": wrong,
        "pure_s": pure,
        "busy_s": busy,
        "busy_over_pure": busy / pure,
        "busy_over_work": busy / 0.5,
    }


def test_device_report_of_the_passive_target(tmp_path):
    # MPICH: native waits for the computation; the drive thread serves the
    # get, but its pure get once took 0.241 s against 0.0175.
    records = [
        rma_record("native", "MPICH", 0.0175, 0.52),
        rma_record("native", "MPICH", 0.0185, 0.51, 1),
        rma_record("tandem-drive-yield", "MPICH", 0.0180, 0.020),
        rma_record("tandem-proxy-yield", "MPICH", 0.241, 0.25),
    ]
    write_run(tmp_path, [], [], [])
    (tmp_path / "rma.json").write_text(json.dumps(document("rma", records)))
    targets = device.report(tmp_path).read_text().splitlines()
    assert "rma tandem-drive-yield, busy <= 2x pure, pure <= 1.10x native: met" in targets
    assert "rma native, busy <= 2x pure: missed in 1 of 1 cells" in targets
    proxy = targets.index(
        "rma tandem-proxy-yield, busy <= 2x pure, pure <= 1.10x native: missed in 1 of 1 cells"
    )
    assert "pure 13.39x native" in targets[proxy + 1]
    table = (tmp_path / "rma.md").read_text()
    assert "| MPICH | shm | allocate | 8 MiB | native | 18.000 | 1.000 |" in table


def test_device_report_of_the_smb_availability(tmp_path):
    def record(config, op, size, availability, overhead_us):
        return {
            "mpi": "MPICH",
            "transport": "tcp",
            "config": config,
            "round": 0,
            "launched_ranks": 2,
            "op": op,
            "bytes": size,
            "availability": availability,
            "overhead_s": overhead_us * 1e-6,
            "base_s": 1e-3,
            "target_slowdown": 0.01,
            "wrong_bytes": 0,
        }

    records = [
        record("native", "get", 65536, 0.10, 900),
        record("tandem-drive-yield", "get", 65536, 0.95, 50),
        record("native", "put", 1 << 20, 0.20, 800),
        record("tandem-drive-yield", "put", 1 << 20, 0.80, 200),
        record("native", "get", 4096, 0.0, 10),  # below 64 KiB: not a target
        record("tandem-drive-yield", "get", 4096, 0.0, 20),
    ]
    write_run(tmp_path, [], [], [])
    (tmp_path / "smb.json").write_text(json.dumps(document("smb", records)))
    targets = device.report(tmp_path).read_text().splitlines()
    line = "smb tandem-drive-yield, >= 90% at 64 KiB and above, overhead < native: "
    assert line + "missed in 1 of 2 cells" in targets
    assert "  MPICH tcp put 1 MiB: 80%, overhead 200.0 us against native 800.0" in targets
    assert (
        "| MPICH | tcp | get | 64 KiB | tandem-drive-yield | 95% |"
        in (tmp_path / "smb.md").read_text()
    )
