"""The benchmarks' plots, drawn again from a saved document (bench.replot):
one colour per configuration in every panel, message sizes on a log2 axis
labelled in KiB and MiB, a share in % on a common 0-100% axis, and a title
that names the machine, the transport and the ranks."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from tandem import bench  # noqa: E402

MACHINE = {"cores": 2, "spare_core": False, "host": "vm"}
CONFIGS = ("native", "mpich-async-thread", "tandem-drive-yield", "tandem-proxy-yield")


def overlap_result() -> dict:
    summary = [
        {
            "mpi": "MPICH",
            "transport": transport,
            "config": config,
            "variant": variant,
            "bytes": size,
            "availability": 0.5,
            "slowdown": 0.01,
            "transfer_s": 1e-3,
            "rounds": 3,
        }
        for transport in ("shaped", "shm")
        for config in CONFIGS
        for variant in bench.VARIANTS
        for size in (262144, 1048576, 4194304)
    ]
    return {
        "benchmark": "overlap",
        "machine": MACHINE,
        "shaped_rate": "2gbit",
        "rounds": 3,
        "records": [],
        "summary": summary,
    }


def coll_result() -> dict:
    summary = [
        {
            "mpi": mpi,
            "transport": "shaped",
            "config": config,
            "collective": "ibcast",
            "bytes": size,
            "pure_s": 1e-3,
            "overlap": 40.0,
            "rounds": 3,
        }
        for mpi in ("MPICH", "Open MPI")
        for config in ("native", "tandem-coll")
        for size in (65536, 1048576)
    ]
    records = [{"ranks": 2}]
    return {
        "benchmark": "coll",
        "machine": MACHINE,
        "rate": "2gbit",
        "rounds": 3,
        "records": records,
        "summary": summary,
    }


def test_replot_draws_the_overlap_figures_again_from_a_saved_document(tmp_path):
    paths = bench.replot(overlap_result(), tmp_path)
    assert sorted(p.name for p in paths) == ["overlap-mpich-shaped.png", "overlap-mpich-shm.png"]
    assert all(p.stat().st_size > 10000 for p in paths)


def test_each_configuration_keeps_its_colour_and_native_is_black():
    assert bench.line_style("native")["color"] == "black"
    assert bench.line_style("tandem-proxy-yield") == bench.line_style("tandem-proxy-yield")
    assert bench.line_style("tandem-coll nbc")["color"] == bench.line_style("tandem-coll")["color"]
    assert bench.line_style("mpich-async-thread")["linestyle"] == "--"
    unknown = bench.line_style("a-configuration-of-the-future")["color"]
    assert unknown == bench.line_style("a-configuration-of-the-future")["color"]
    assert sorted(CONFIGS, key=bench.plot_order)[0] == "native"


def test_a_collective_plot_puts_sizes_on_a_log2_axis_and_overlap_on_0_to_100(tmp_path, monkeypatch):
    figures = []
    real_savefig = plt.Figure.savefig

    def keep(fig, *args, **kwargs):
        figures.append(fig)
        return real_savefig(fig, *args, **kwargs)

    monkeypatch.setattr(plt.Figure, "savefig", keep)
    (path,) = bench.replot(coll_result(), tmp_path)
    assert path.name == "coll_ibcast.png" and path.stat().st_size > 0
    (fig,) = figures
    title = fig._suptitle.get_text()
    assert "2 ranks" in title and "2-core machine" in title and "no spare core" in title
    for ax in fig.axes:
        assert ax.get_xscale() == "log"
        assert [t.get_text() for t in ax.get_xticklabels()] == ["64 KiB", "1 MiB"]
        assert ax.get_ylim() == (-5, 105)
        assert "TCP over a loopback shaped to 2gbit" in ax.get_title()
