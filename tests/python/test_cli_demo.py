"""`make demo` (bench/demo.py) states the machine's load and the spread of its
runs, and says when the machine was too busy for its numbers to mean much."""

from __future__ import annotations

import importlib.util
import itertools
import os
import types

import pytest
from conftest import ROOT


@pytest.fixture
def demo(monkeypatch):
    """bench/demo.py, with two MPIs that give the availabilities in 'runs' in
    turn instead of running, on 2 cores."""
    spec = importlib.util.spec_from_file_location("demo", ROOT / "bench" / "demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    builds = [types.SimpleNamespace(family=f, sanitize="") for f in ("Open MPI", "MPICH")]
    monkeypatch.setattr(module, "load_builds", lambda root: builds)
    monkeypatch.setattr(module, "network", lambda: ([], "TCP over plain loopback"))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setenv("DEMO_ROUNDS", "3")
    return module


def run(demo, monkeypatch, capsys, availabilities, loads) -> str:
    """The demo's output: the runs give 'availabilities' in turn (without
    Tandem, drive, proxy, without, ...), the 1-minute load average reads
    'loads' (before, after)."""
    results = itertools.cycle(availabilities)
    monkeypatch.setattr(demo, "one_run", lambda *args: ({"availability": next(results)}, False))
    readings = iter(loads)
    monkeypatch.setattr(os, "getloadavg", lambda: (next(readings), 0.0, 0.0))
    assert demo.main() == 0
    return capsys.readouterr().out


def test_an_idle_machine_gives_its_load_and_spread_and_no_warning(demo, monkeypatch, capsys):
    steady = [0.05, 0.60, 0.90, 0.07, 0.62, 0.88, 0.06, 0.61, 0.92]
    out = run(demo, monkeypatch, capsys, steady, [0.20, 1.90])
    assert "  Open MPI  without Tandem   6.0%   drive  61.0%   proxy  90.0%" in out  # as before
    assert "            spread of its runs: without 2.0, drive 2.0, proxy 4.0 points" in out
    assert "Load average 0.20 before, 1.90 after (with the demo's 2 ranks), on 2 cores." in out
    assert "too busy" not in out


def test_a_loaded_machine_is_named_too_busy(demo, monkeypatch, capsys):
    steady = [0.05, 0.60, 0.90]
    out = run(demo, monkeypatch, capsys, steady, [2.50, 4.10])
    assert out.endswith(
        "The machine was too busy for these numbers to mean much (a load of 2.50 besides "
        "the demo on 2 cores); run it again when the machine is idle.\n"
    )


def test_runs_far_apart_are_named_too_busy(demo, monkeypatch, capsys):
    scattered = [0.05, 0.20, 0.90, 0.07, 0.85, 0.88, 0.06, 0.61, 0.92]
    out = run(demo, monkeypatch, capsys, scattered, [0.10, 1.50])
    assert out.endswith(
        "The machine was too busy for these numbers to mean much (runs of one configuration "
        "65 points apart); run it again when the machine is idle.\n"
    )
