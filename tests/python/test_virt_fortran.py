"""tandem fc (docs/VIRTUAL.md): a plain MPI Fortran program built against the
virtual-rank runtime prints what the same program prints as processes of
the real MPI, under both MPIs; its shared variables are warned of, and a
call the runtime does not implement stops the program naming it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ROOT, build_for, launch, tandem_cli
from tandem.builds import default_build_root, load_builds

PROGRAM = str(ROOT / "tests" / "fortran" / "virt_f.f90")
COMPARE = str(ROOT / "tests" / "virt_compare.py")
FORTRAN = {"openmpi": "mpif90.openmpi", "mpich": "mpif90.mpich"}


@pytest.fixture(params=["openmpi", "mpich"])
def mpi(request) -> str:
    return request.param


@pytest.fixture
def programs(mpi, tmp_path):
    """The test program built by the MPI's mpif90 (the reference) and by
    tandem fc."""
    reference, virtual = tmp_path / "real", tmp_path / "virtual"
    built = subprocess.run(
        [FORTRAN[mpi], "-O2", PROGRAM, "-o", str(reference)], capture_output=True, text=True
    )
    assert built.returncode == 0, built.stderr
    built = tandem_cli("fc", "--mpi", mpi, PROGRAM, "-O2", "-o", str(virtual))
    assert built.returncode == 0, built.stderr
    assert "warning: " not in built.stderr.replace("Warning: ", "")  # no shared variable
    return reference, virtual


@pytest.mark.parametrize(
    "shape",
    [
        ["--ranks", "1"],
        ["--ranks", "4"],
        ["--ranks", "7"],
        ["--ranks", "4", "--cores", "2"],
        ["--ranks", "4", "--hosts", "2"],
        ["--ranks", "6", "--hosts", "2"],
    ],
    ids=["v1", "v4", "v7", "c2v2", "h2v2", "h2v3"],
)
def test_a_fortran_program_prints_what_real_ranks_print(mpi, programs, shape):
    """tests/fortran/virt_f.f90 (the mpi module: point-to-point with
    statuses and MPI_Waitany's index from 1, a derived type of the real
    MPI, collectives with MPI_IN_PLACE, a reduction by a Fortran function
    of the program's (MPI_Op_create), split, a periodic Cartesian ring,
    probes, a nonblocking reduction): N processes of the real MPI and N
    virtual ranks (one process, two cores, or processes of virtual ranks)
    print the same lines."""
    reference, virtual = programs
    build = build_for(mpi)
    compared = subprocess.run(
        [
            sys.executable,
            COMPARE,
            "--build",
            str(build.directory),
            *shape,
            str(reference),
            str(virtual),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert compared.returncode == 0, compared.stdout + compared.stderr


F08 = str(ROOT / "tests" / "fortran" / "virt_f08.f90")


@pytest.mark.parametrize(
    "shape",
    [["--ranks", "1"], ["--ranks", "4"], ["--ranks", "7"], ["--ranks", "4", "--cores", "2"],
     ["--ranks", "4", "--hosts", "2"]],
    ids=["v1", "v4", "v7", "c2v2", "h2v2"],
)  # fmt: skip
def test_an_mpi_f08_program_prints_what_real_ranks_print(mpi, shape, tmp_path):
    """tests/fortran/virt_f08.f90 (the mpi_f08 module: derived-type handles,
    statuses with fields, ierror left out; rows of an array as buffers of
    sends, receives, a persistent send, reductions, blocking and not, a
    broadcast and a gatherv) built by
    tandem fc: N virtual ranks print what N processes print. The reference
    runs on Open MPI for both: MPICH 4.0.2's own mpi_f08 fails the
    reduction on a row (MPI_SUM "not defined for this datatype"), where
    Tandem's entry points reduce a contiguous copy."""
    reference, virtual = tmp_path / "real", tmp_path / "virtual"
    built = subprocess.run(
        [FORTRAN["openmpi"], "-O2", F08, "-o", str(reference)], capture_output=True, text=True
    )
    assert built.returncode == 0, built.stderr
    built = tandem_cli("fc", "--mpi", mpi, F08, "-O2", "-o", str(virtual))
    assert built.returncode == 0, built.stderr
    compared = subprocess.run(
        [sys.executable, COMPARE, "--build", str(build_for(mpi).directory),
         "--reference-build", str(build_for("openmpi").directory), *shape, str(reference),
         str(virtual)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert "sections 0:" in compared.stdout


@pytest.mark.parametrize(
    ("call", "refused"),
    [
        ("call MPI_Allreduce_init(a(1, :), b(1, :), 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, "
         "MPI_INFO_NULL, r)", "MPI_Allreduce_init: sendbuf is a non-contiguous array section in a "
         "persistent operation"),
        ("call MPI_Buffer_attach(a(1, :), 8)",
         "MPI_Buffer_attach: buffer is a non-contiguous array section that the runtime would keep"),
        ("call MPI_Send(a(1, :), 1, pair, 0, 0, MPI_COMM_WORLD)",
         "MPI_Send: buf is a non-contiguous array section of a datatype other than"),
    ],
    ids=["persistent-reduction", "attached", "datatype"],
)  # fmt: skip
def test_mpich_f08_sections_it_cannot_take_stop_the_program_saying_why(call, refused, tmp_path):
    """A non-contiguous section that MPICH's mpi_f08 entry points cannot
    take (in a persistent reduction, whose copy would go stale between
    starts; as the buffer MPI_Buffer_attach keeps; with a datatype not made
    of the array's elements) stops the program naming the call, the
    argument and what to pass instead, rather than moving the wrong
    bytes."""
    source = tmp_path / "section.f90"
    source.write_text(
        "program section\n"
        "  use mpi_f08\n"
        "  implicit none\n"
        "  integer :: a(2, 2), b(2, 2), counts(2), displs(2)\n"
        "  type(MPI_Request) :: r\n"
        "  type(MPI_Datatype) :: pair\n"
        "  call MPI_Init()\n"
        "  a = 1\n"
        "  counts = 2\n"
        "  displs = [0, 2]\n"
        "  call MPI_Type_contiguous(2, MPI_INTEGER, pair)\n"
        "  call MPI_Type_commit(pair)\n"
        f"  {call}\n"
        "  call MPI_Finalize()\n"
        "end program\n"
    )
    program = tmp_path / "section"
    built = tandem_cli("fc", "--mpi", "mpich", str(source), "-o", str(program))
    assert built.returncode == 0, built.stderr
    run = tandem_cli("run", "-q", "--cores", "1", "--virtual", "2", str(program), timeout=60)
    assert run.returncode != 0
    assert refused in run.stderr, run.stderr
    assert "pass a contiguous array" in run.stderr


def test_a_fortran_program_runs_on_simulated_hosts(mpi, programs):
    """tandem run --hosts 2 --virtual 3: a process of 3 virtual ranks on each
    of 2 hosts joined by a shaped link prints what 6 processes print."""
    from tandem.hosts import missing_requirements

    missing = missing_requirements("1gbit")
    if missing:
        pytest.skip(missing)
    reference, virtual = programs
    words = ["run", "-q", "--hosts", "2", "--link", "1gbit", "-nc", "1", "-nv", "3"]
    run = tandem_cli(*words, str(virtual), timeout=120)
    assert run.returncode == 0, run.stderr
    real = launch(build_for(mpi), 6, [str(reference)])
    assert real.returncode == 0, real.stderr
    assert run.stdout == real.stdout


@pytest.mark.parametrize("source", [PROGRAM, F08], ids=["mpi", "mpi_f08"])
def test_fortran_entry_points_are_clean_under_the_sanitizers(mpi, source, tmp_path):
    """The test programs' objects (as tandem fc makes them) linked against
    the AddressSanitizer and UndefinedBehaviorSanitizer build of
    libtandem-virt (make asan; skipped without it): 4 ranks of one core and
    2 cores of 2 run through every conversion of src/virt/fortran.c (MPICH's
    array sections too) with no report."""
    family = build_for(mpi).family
    sanitized = [b for b in load_builds(default_build_root()) if b.sanitize and b.family == family]
    library = sanitized[0].directory if sanitized else None
    if not library or not (library / "libtandem-virt.so").exists():
        pytest.skip(f"no sanitizer build of libtandem-virt for {mpi} (make asan)")
    obj, program = tmp_path / "virt_f.o", tmp_path / "virt_f"
    subprocess.run(
        [FORTRAN[mpi], "-frecursive", "-g", f"-J{tmp_path}", "-c", source, "-o", str(obj)],
        check=True, capture_output=True,
    )  # fmt: skip
    subprocess.run(["objcopy", "--redefine-sym", "main=TMPI_Main", str(obj)], check=True)
    linked = subprocess.run(
        [FORTRAN[mpi], "-fsanitize=address,undefined", str(obj),
         str(library / "libtandem-virt-main.a"), f"-L{library}", f"-Wl,-rpath,{library}",
         "-ltandem-virt", "-o", str(program)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert linked.returncode == 0, linked.stderr
    env = {
        **os.environ,
        "ASAN_OPTIONS": "detect_leaks=0:verify_asan_link_order=0",
        "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
    }
    for cores, per_core in (("1", "4"), ("2", "2")):
        env.update(TANDEM_VIRT_CORES=cores, TANDEM_VIRT_RANKS=per_core)
        run = subprocess.run([str(program)], capture_output=True, text=True, env=env, timeout=120)
        assert run.returncode == 0, run.stderr
        assert "ERROR: AddressSanitizer" not in run.stderr and "runtime error" not in run.stderr
        assert run.stdout.startswith("ranks 4, thread level 0\n"), run.stdout


def test_shared_fortran_variables_are_listed(tmp_path):
    source = tmp_path / "state.f90"
    source.write_text(
        "module state\n"
        "  integer :: counter = 0\n"
        "end module\n"
        "program shared\n"
        "  use mpi\n"
        "  use state\n"
        "  implicit none\n"
        "  integer :: ierr\n"
        "  integer, save :: calls\n"
        "  integer :: total\n"
        "  common /sums/ total\n"
        "  call MPI_Init(ierr)\n"
        "  counter = counter + 1\n"
        "  calls = calls + 1\n"
        "  total = 2\n"
        "  call MPI_Finalize(ierr)\n"
        "end program\n"
    )
    built = tandem_cli("fc", str(source), "-o", str(tmp_path / "shared"))
    assert built.returncode == 0, built.stderr
    assert not (ROOT / "state.mod").exists()  # the module went with the temporary files
    assert (
        "state.f90: written global or static variables, shared by all the virtual ranks of a "
        "process: /sums/ (common block), calls (saved, in a procedure), counter (module state)"
    ) in built.stderr


def test_privatized_fortran_variables_hold_each_ranks_own_values(mpi, tmp_path):
    """tandem fc --privatize (tests/fortran/virt_globals_f.f90: a module's
    variables, a common block, a saved variable): 4 virtual ranks of one
    core (their variables swapped at each switch) and 2 cores of 2 (a copy
    of the program per rank, whose MPI_IN_PLACE is still the runtime's)
    print what 4 processes of the real MPI print, where without it they
    share one copy."""
    source = str(ROOT / "tests" / "fortran" / "virt_globals_f.f90")
    private, shared, real = tmp_path / "private", tmp_path / "shared", tmp_path / "real"
    built = tandem_cli("fc", "--mpi", mpi, "--privatize", source, "-o", str(private))
    assert built.returncode == 0, built.stderr
    said = (
        "privatized, a copy per virtual rank: counter (module state), table (module state), "
        "id (saved, in a procedure), /tally/ (common block)"
    )
    assert said in built.stderr
    assert tandem_cli("fc", "--mpi", mpi, source, "-o", str(shared)).returncode == 0
    subprocess.run(
        [FORTRAN[mpi], f"-J{tmp_path}", source, "-o", str(real)], check=True, capture_output=True
    )
    reference = launch(build_for(mpi), 4, [str(real)], with_tandem=False)
    assert reference.returncode == 0, reference.stderr
    expected = sorted(reference.stdout.splitlines())
    assert all(line.endswith(" ranks 4") for line in expected), expected
    for cores, per_core, how in (
        ("1", "4", "bytes of globals privatized"),
        ("2", "2", "a copy of"),
    ):
        words = ["run", "-q", "--mpi", mpi, "-nc", cores, "-nv", per_core, "-e", "TANDEM_VERBOSE=1"]
        run = tandem_cli(*words, str(private))
        assert run.returncode == 0, run.stderr
        assert sorted(run.stdout.splitlines()) == expected
        assert how in run.stderr
    together = tandem_cli("run", "-q", "--mpi", mpi, "-nc", "1", "-nv", "4", str(shared))
    assert together.returncode == 0 and sorted(together.stdout.splitlines()) != expected


def test_an_unsupported_fortran_call_stops_the_program_with_its_name(mpi, tmp_path):
    source = tmp_path / "window.f90"
    source.write_text(
        "program window\n"
        "  use mpi\n"
        "  implicit none\n"
        "  integer :: ierr, win\n"
        "  integer(kind=MPI_ADDRESS_KIND) :: size = 0\n"
        "  integer :: base(1)\n"
        "  call MPI_Init(ierr)\n"
        "  call MPI_Win_create(base, size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)\n"
        "  call MPI_Finalize(ierr)\n"
        "end program\n"
    )
    program = tmp_path / "window"
    built = tandem_cli("fc", "--mpi", mpi, str(source), "-o", str(program))
    assert built.returncode == 0, built.stderr
    run = tandem_cli("run", "-q", "--cores", "1", "--virtual", "2", str(program), timeout=60)
    assert run.returncode != 0
    assert (
        "MPI_Win_create (called from Fortran) is not supported by Tandem's virtual ranks yet"
        in run.stderr
    ), run.stderr


def test_fc_says_what_is_missing(tmp_path):
    empty = tandem_cli("fc")
    assert empty.returncode != 0 and "no source file given" in empty.stderr
    flags = tandem_cli("fc", "-O2")
    assert flags.returncode != 0 and "no source or object file given" in flags.stderr


def test_fc_compiles_and_links_apart_with_the_compilers_options_first(tmp_path):
    """tandem fc -c (an option of the compiler's before the source), then
    the object linked alone: its main already renamed, it runs as ranks."""
    obj, program = tmp_path / "virt_f.o", tmp_path / "virt_f"
    compiled = tandem_cli("fc", "-c", PROGRAM, "-o", str(obj))
    assert compiled.returncode == 0, compiled.stderr
    linked = tandem_cli("fc", "-O2", str(obj), "-o", str(program))
    assert linked.returncode == 0, linked.stderr
    run = tandem_cli("run", "-q", "--cores", "1", "--virtual", "2", str(program), timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("ranks 2, thread level 0\n"), run.stdout
