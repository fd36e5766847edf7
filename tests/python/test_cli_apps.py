"""tandem bench apps without NAS's benchmarks: their report read, the
arguments refused with a reason, and a fake NPB tree (a Makefile, and
programs that print NPB's report) copied, built with the MPI's compilers
and its objects linked, run, and its verification checked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import ROOT, tandem_cli
from tandem import apps
from tandem.builds import TandemError

NPB_REPORT = """\
 CG Benchmark Completed.
 Class           =                        A
 Size            =                    14000
 Iterations      =                       15
 Time in seconds =                     1.62
 Total processes =                        2
 Mop/s total          =                   921.82
 Operation type  =           floating point
 Verification    =               SUCCESSFUL
 Version         =                      3.4
"""


def test_npb_report_gives_its_time_and_verification():
    assert apps.parse_npb_output(NPB_REPORT) == {
        "time_s": 1.62,
        "verification": "SUCCESSFUL",
        "verified": True,
    }
    failed = NPB_REPORT.replace("SUCCESSFUL", "UNSUCCESSFUL")
    assert apps.parse_npb_output(failed)["verified"] is False
    assert apps.parse_npb_output(failed)["verification"] == "UNSUCCESSFUL"
    cut = apps.parse_npb_output(" CG Benchmark Completed.\n Class = A\n")  # killed, or no report
    assert cut == {"time_s": None, "verification": None, "verified": False}
    # a line that only mentions the word is no verdict
    assert apps.parse_npb_output(" Verification being performed for class A\n")["verified"] is False


def test_apps_are_npb_benchmarks_with_a_class_and_the_ghost_cells():
    assert [a.label for a in apps.parse_apps("cg.a,LU.W,halo")] == ["CG.A", "LU.W", "halo"]
    for bad in ("CG", "XX.A", "CG.Z", "", "CG.A,CG.A"):
        with pytest.raises(TandemError):
            apps.parse_apps(bad)


def bench_apps(*args: str):
    return tandem_cli("bench", "apps", *args, timeout=600)


@pytest.mark.parametrize(
    "args, said",
    [
        (["--apps", "CG.A"], "NPB benchmarks need --npb PATH"),
        (["--npb", "/nonexistent/npb"], "--npb /nonexistent/npb: no such directory"),
        (["--npb", str(ROOT / "docs")], "not an NPB 3.4 MPI source tree"),
        (["--apps", "CG", "--npb", "/tmp"], "neither 'halo' nor an NPB benchmark"),
        (["--apps", "halo", "--configs", "native,fast"], "'fast' is not one of native,"),
        (["--apps", "halo", "--ranks", "2,x"], "--ranks 2,x: expected rank counts"),
    ],
)
def test_wrong_arguments_are_refused_with_the_reason(args, said):
    result = bench_apps(*args, "--out", "/tmp/tandem-test-apps-refused")
    assert result.returncode == 2, result.stdout + result.stderr
    assert said in result.stderr


def test_npb_options_belong_to_bench_apps():
    result = tandem_cli("bench", "halo", "--npb", "/tmp")
    assert result.returncode == 2 and "belong to tandem bench apps" in result.stderr


def fake_npb(tree: Path) -> Path:
    """An NPB-like tree: CG prints a successful report, MG an unsuccessful
    one; both call a C function of stats/, which the tree's own make.def
    links, as a fork's instrumentation does."""
    for name in ("config", "sys", "CG", "MG", "stats"):
        (tree / name).mkdir(parents=True)
    (tree / "config" / "make.def.template").write_text("MPIFC = mpif90\n")
    (tree / "config" / "make.def").write_text("FLINKFLAGS = $(FFLAGS) ../stats/stats.o\n")
    (tree / "sys" / "setparams.c").write_text("int main(void) { return 0; }\n")
    (tree / "sys" / "make.common").write_text("\n")
    (tree / "stats" / "stats.c").write_text("void stats_hello_(void) {}\n")
    for name, verdict in (("CG", "SUCCESSFUL"), ("MG", "UNSUCCESSFUL")):
        (tree / name / "prog.f").write_text(
            "      program npb\n"
            "      include 'mpif.h'\n"
            "      integer ierr, rank\n"
            "      call mpi_init(ierr)\n"
            "      call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)\n"
            "      call stats_hello()\n"
            "      if (rank .eq. 0) then\n"
            "         write(*, '(a, 12x, f12.2)') ' Time in seconds = ', 0.25\n"
            f"         write(*, '(a, 12x, a)') ' Verification    = ', '{verdict}'\n"
            "      endif\n"
            "      call mpi_finalize(ierr)\n"
            "      end\n"
        )
    (tree / "Makefile").write_text(
        "include config/make.def\n"
        ".PHONY: CG MG\n"
        "CG MG:\n"
        "\tcd $@ && $(FLINK) $(FLINKFLAGS) -o ../bin/$$(echo $@ | tr A-Z a-z).$(CLASS).x prog.f\n"
    )
    return tree


def test_a_fake_npb_tree_is_built_outside_run_and_verified(tmp_path):
    tree = fake_npb(tmp_path / "npb")
    before = sorted(p.relative_to(tree) for p in tree.rglob("*"))
    out, where = tmp_path / "out", tmp_path / "npb-build"
    args = ["--npb", str(tree), "--npb-build", str(where), "--apps", "CG.S,MG.S"]
    args += ["--mpi", "openmpi", "--ranks", "2", "--rounds", "1"]
    result = bench_apps(*args, "--configs", "native,tandem-default", "--out", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(p.relative_to(tree) for p in tree.rglob("*")) == before  # untouched
    written = (where / "openmpi" / "config" / "make.def").read_text()
    assert re.search(r"^MPIFC = \S*mpif90.openmpi$", written, re.M) and "-O2" in written
    assert "../stats/stats.o" in written and (where / "openmpi" / "stats" / "stats.o").exists()
    result_json = json.loads((out / "apps.json").read_text())
    runs = {(r["app"], r["config"]): r for r in result_json["records"]}
    assert runs[("CG.S", "native")]["verified"] and runs[("CG.S", "native")]["time_s"] == 0.25
    assert runs[("MG.S", "tandem-default")]["verification"] == "UNSUCCESSFUL"
    assert {s["app"] for s in result_json["summary"]} == {"CG.S"}  # MG never verified
    assert len(result_json["problems"]) == 2
    assert all("verification UNSUCCESSFUL" in p for p in result_json["problems"])
    assert "| Open MPI | CG.S | 2 | tandem-default | 0.25 (0.25-0.25) | 1.00x |" in result.stdout
    assert (out / "apps.md").exists() and (out / "apps.png").exists()


def test_npb_is_never_built_inside_the_repository(tmp_path):
    tree = fake_npb(tmp_path / "npb")
    inside = ROOT / "build" / "npb"
    result = bench_apps("--npb", str(tree), "--npb-build", str(inside), "--out", str(tmp_path))
    assert result.returncode == 2 and "inside Tandem's repository" in result.stderr
    assert not inside.exists()
