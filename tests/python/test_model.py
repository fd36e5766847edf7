"""tandem model (python/tandem/model.py) on a fixed calibration file: the
formula by hand, deterministic output, clear errors; and tandem bench virt
--quick, which writes its JSON. No timing is asserted: a loaded machine
passes them."""

from __future__ import annotations

import json

import pytest
from conftest import tandem_cli
from tandem import model

FIXED = {
    "compute_point_s": 2e-9,
    "compute_kmax_s": 1e-9,
    "latency_shm_s": 1e-7,
    "bandwidth_shm": 1e10,
    "latency_net_s": 5e-5,
    "bandwidth_net": 1.25e8,
    "bandwidth_core": 1e9,
    "switch_s": 1e-8,
    "link": "1gbit",
    "burst_net": 262144,
    "mpi": "openmpi",
}


@pytest.fixture
def calibration_file(tmp_path):
    path = tmp_path / "model.json"
    path.write_text(json.dumps(FIXED))
    return path


def by_hand(hosts: int, cores: int, v: int, formula: str, burst: float = 262144) -> float:
    """The formula of docs/VIRTUAL.md written out again, for the default
    stencil (8192 x 128, kmax 4, halo 2), with the link's token bucket of
    'burst' bytes."""
    c = {**FIXED, "burst_net": burst}
    nx, ny = 8192 / v, 128 / (hosts * cores)
    comp = nx * ny * (c["compute_point_s"] + 4 * c["compute_kmax_s"])
    ew, ns = 8 * 2 * ny, 8 * 2 * (nx + 4)
    remote = 0 if hosts == 1 else (2 if cores == 1 else 1)
    senders = 1 if cores == 1 else 2
    shmem = 2 * (c["latency_shm_s"] + ew / c["bandwidth_shm"])
    shmem += (2 - remote) * (c["latency_shm_s"] + ns / c["bandwidth_shm"])
    fast = senders * c["bandwidth_core"]
    rate = min(c["bandwidth_net"], fast)
    # a host's bytes per step; those the bucket (refilled while the core
    # computes its V ranks) lets through go at the unshaped rate
    total = v * remote * senders * ns
    bucket = min(c["burst_net"], rate * v * comp)
    quick = min(total, bucket * fast / (fast - rate)) if bucket > 0 and fast > rate else 0
    net = remote * c["latency_net_s"] + (quick / fast + (total - quick) / rate) / v
    floor = total / rate  # the link's rate, whatever the bucket
    cpu = v * (comp + shmem + 8 * c["switch_s"])
    lost = comp / 2 if formula == "tinympi" else min(cpu, v * net) / v
    return max(max(cpu, v * net) + lost, floor)


@pytest.mark.parametrize("formula", model.FORMULAS)
@pytest.mark.parametrize("hosts,cores", [(1, 1), (2, 1), (2, 2), (4, 8)])
def test_the_prediction_is_the_formula(calibration_file, formula, hosts, cores):
    cal = model.load(calibration_file)
    for row in model.predict(cal, model.Stencil(), hosts, cores, formula=formula):
        assert row["step_s"] == pytest.approx(by_hand(hosts, cores, row["v"], formula), rel=1e-12)
    # without a bucket (a real NIC): the max-rate model alone, slower
    cal.burst_net = 0
    for row in model.predict(cal, model.Stencil(), hosts, cores, formula=formula):
        assert row["step_s"] == pytest.approx(
            by_hand(hosts, cores, row["v"], formula, burst=0), rel=1e-12
        )


def test_a_calibration_of_a_shaped_link_without_its_bucket_gets_tandems(tmp_path):
    """Files calibrated before the bucket was modelled: tandem's shaped
    links always had a bucket of 256 KiB; an unshaped link has none."""
    old = {k: v for k, v in FIXED.items() if k != "burst_net"}
    (tmp_path / "shaped.json").write_text(json.dumps(old))
    (tmp_path / "unshaped.json").write_text(json.dumps({**old, "link": None}))
    assert model.load(tmp_path / "shaped.json").burst_net == 262144
    assert model.load(tmp_path / "unshaped.json").burst_net == 0


def test_the_model_has_the_shape_the_report_describes(calibration_file):
    cal = model.load(calibration_file)
    # One host: no network, nothing to overlap; more ranks only cost.
    one = model.predict(cal, model.Stencil(), 1, 1)
    assert model.best(one)["v"] == 1
    # Two hosts: V = 1 pays computation and network one after the other;
    # the best V overlaps them; many ranks pay more messages (a U shape,
    # on a link without a bucket, where the network's term is large).
    cal.burst_net = 0
    two = model.predict(cal, model.Stencil(), 2, 1)
    first, top, last = two[0], model.best(two), two[-1]
    assert first["step_s"] == pytest.approx(first["cpu_s"] + first["net_s"])
    assert 1 < top["v"] < 16 and top["step_s"] < first["step_s"] and top["step_s"] < last["step_s"]
    # The stencil's sizes decide which V exist: GX 8192 = 2^13 takes 1 to 16
    # but 3, 5, 6, ... not.
    assert [r["v"] for r in two] == [1, 2, 4, 8, 16]


def test_tandem_model_prints_a_deterministic_table(calibration_file):
    words = ["model", "--calibration", str(calibration_file), "--hosts", "2", "--grid", "8192,128"]
    first, second = tandem_cli(*words), tandem_cli(*words)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    cal = model.load(calibration_file)
    top = model.best(model.predict(cal, model.Stencil(), 2, 1))
    assert f"best V = {top['v']}: {top['step_s'] * 1e3:.3f} ms per step" in first.stdout
    assert "| 16 | 32 |" in first.stdout or "| 16 **best** | 32 |" in first.stdout
    tiny = tandem_cli(*words, "--formula", "tinympi", "--v", "1,4")
    assert tiny.returncode == 0 and "tandem model (tinympi)" in tiny.stdout
    assert "\n| 2 |" not in tiny.stdout and "\n| 4 **best** | 8 |" in tiny.stdout


@pytest.mark.parametrize(
    "words,said",
    [
        (["--grid", "8192x128"], "--grid 8192x128: expected GX,GY"),
        (["--grid", "0,128"], "--grid 0,128: expected two positive point counts"),
        (["--kmax", "-1"], "--kmax -1: expected 0 or more"),
        (["--halo", "0"], "--halo 0: expected 1 or more"),
        (["--v", "0,2"], "--v 0,2: expected ranks per core from 1 to 64"),
        (["--hosts", "0"], "--hosts 0: expected 1 or more"),
        (["--cores", "0"], "--cores 0: expected 1 or more"),
        (["--grid", "8191,127", "--hosts", "2"], "GY must be a multiple of the 2 cores"),
    ],
)
def test_bad_arguments_name_the_argument_and_what_is_accepted(calibration_file, words, said):
    result = tandem_cli("model", "--calibration", str(calibration_file), *words)
    assert result.returncode == 2
    assert said in result.stderr


def test_a_missing_or_broken_calibration_says_what_to_do(tmp_path):
    missing = tandem_cli("model", "--calibration", str(tmp_path / "none.json"))
    assert missing.returncode == 2 and "run `tandem model calibrate`" in missing.stderr
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"compute_point_s": 1e-9}))
    result = tandem_cli("model", "--calibration", str(broken))
    assert result.returncode == 2 and "not a calibration file: no compute_kmax_s" in result.stderr


def test_bench_virt_quick_writes_its_json(calibration_file, tmp_path):
    out = tmp_path / "virt"
    result = tandem_cli(
        "bench", "virt", "--quick", "--mpi", "openmpi", "--calibration", str(calibration_file),
        "--out", str(out), timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    document = json.loads((out / "virt.json").read_text())
    assert document["benchmark"] == "virt"
    micro = {r["micro"] for r in document["summary"]["micro"]}
    assert micro == {"switch", "same-core", "cross-core", "mpi processes"}
    rows = document["summary"]["stencil"]
    # One checksum for every configuration: the decomposition changes nothing.
    assert len({c for r in rows for c in r["checksum"]}) == 1
    assert {(r["kind"], r["v"]) for r in rows} >= {("virtual", 1), ("virtual", 2), ("mpi", 1)}
    assert all("model_step_s" in r for r in rows if r["kind"] == "virtual")
    assert (out / "virt.md").exists() and (out / "virt.png").exists()


def test_bench_virt_refuses_bad_ratios():
    result = tandem_cli("bench", "virt", "--v", "1,x", "--mpi", "openmpi")
    assert result.returncode == 2 and "--v 1,x: expected ranks per core" in result.stderr


def test_bench_virt_summary_holds_the_targets_and_the_model_error(calibration_file):
    """The summary of fixed records: medians over rounds, the model's error
    on each virtual point, its best V against the measured best, and the
    targets of issue 36 (speed-up over V = 1, against the program written
    with nonblocking calls and Tandem's progress)."""
    from types import SimpleNamespace

    from tandem import virtbench

    build = SimpleNamespace(directory=calibration_file.parent / "openmpi")
    cal = model.load(calibration_file)
    st = model.Stencil()
    records = []
    for v, times in {
        1: [10e-3, 11e-3, 12e-3],
        2: [7e-3, 8e-3, 9e-3],
        4: [6e-3, 6e-3, 6e-3],
    }.items():
        for n, t in enumerate(times):
            records.append(
                {"mpi": "openmpi", "kind": "virtual", "exchange": "blocking", "progress": "off",
                 "v": v, "round": n, "step_s": t, "compute_s": 1e-3, "checksum": "ab"}
            )  # fmt: skip
    records.append(
        {"mpi": "openmpi", "kind": "mpi", "exchange": "overlap", "progress": "drive", "v": 1,
         "round": 0, "step_s": 5e-3, "compute_s": 1e-3, "checksum": "ab"}
    )  # fmt: skip
    # with the virtual ranks' progress thread: targets and model of their own
    for v, t in {1: 8e-3, 2: 4e-3}.items():
        records.append(
            {"mpi": "openmpi", "kind": "virtual", "exchange": "blocking", "progress": "thread",
             "v": v, "round": 0, "step_s": t, "compute_s": 1e-3, "checksum": "ab"}
        )  # fmt: skip
    summary = virtbench.summarize(records, [build], st, 2, 1, {"openmpi": calibration_file})
    rows = {
        r["v"]: r for r in summary["stencil"] if r["kind"] == "virtual" and r["progress"] == "off"
    }
    assert rows[1]["step_s"] == 11e-3 and rows[2]["step_s"] == 8e-3 and rows[4]["step_s"] == 6e-3
    predicted = {v: model.predict_one(cal, st, 2, 1, v)["step_s"] for v in (1, 2, 4)}
    for v in (1, 2, 4):
        assert rows[v]["model_error"] == pytest.approx(
            (predicted[v] - rows[v]["step_s"]) / rows[v]["step_s"]
        )
    errors = sorted(abs(rows[v]["model_error"]) for v in (1, 2, 4))
    chosen = min((1, 2, 4), key=lambda v: predicted[v])
    m = summary["model"]["openmpi"]["off"]
    assert m["median_abs_error"] == pytest.approx(errors[1])
    assert m["best_v_model"] == chosen and m["best_v_measured"] == 4
    assert m["model_best_over_measured_best"] == pytest.approx(rows[chosen]["step_s"] / 6e-3)
    t = summary["targets"]["openmpi"]["off"]
    assert t["best_v"] == 4 and t["speedup_over_v1"] == pytest.approx(11 / 6)
    assert t["best_over_reference"] == pytest.approx(6 / 5)
    assert t["reference"] == "mpi overlap + progress, V=1"
    threaded = summary["targets"]["openmpi"]["thread"]
    assert threaded["best_v"] == 2 and threaded["speedup_over_v1"] == pytest.approx(2)
    assert threaded["best_over_reference"] == pytest.approx(4 / 5)
    assert summary["model"]["openmpi"]["thread"]["points"] == 2


def test_a_link_names_its_bucket_after_its_rate():
    """--link RATE:BURST (tandem/shaping.py): the tc words and the bytes the
    model takes; tc's kb are of 1024 bytes, as it prints them back."""
    from tandem import shaping

    assert shaping.burst_bytes("1gbit") == 256 * 1024
    assert shaping.burst_bytes("1gbit:16kb") == 16384
    assert shaping.burst_bytes("1gbit:3000") == 3000
    assert shaping.tbf("1gbit:16kb") == [
        "tbf", "rate", "1gbit", "burst", "16384", "latency", "50ms",
    ]  # fmt: skip
    assert shaping.rate_bits("2gbit:1mb", "--link") == 2e9
    for bad in ("1gbit:", "1gbit:-4kb", "1gbit:4kbit"):
        if bad.endswith(":"):
            assert shaping.burst_bytes(bad) == 256 * 1024  # no bucket given
            continue
        with pytest.raises(shaping.TandemError, match="is not a size in tc's units"):
            shaping.rate_bits(bad, "--link")
