"""Linking against Tandem instead of preloading it, as docs/LINKING.md shows: a
fresh `cmake --install` prefix per MPI, a program built with
find_package(Tandem) and one built with pkg-config (each with the plain C
compiler, not the MPI's wrapper), both started by the MPI's launcher without
LD_PRELOAD, report Tandem active and load one MPI library only; the build
tree's own tandem.pc works too; and a project that found the other MPI is
told so at configure time."""

from __future__ import annotations

import os
import subprocess

import pytest
from conftest import FAMILIES, ROOT, build_for, launch

SOURCE = ROOT / "tests" / "c" / "tandem_api.c"
PROJECT = ROOT / "tests" / "install"
WRAPPERS = {"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}
LIBRARIES = {"openmpi": "libmpi.so", "mpich": "libmpich.so"}


def run(*command, env=None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(c) for c in command],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=300,
        check=False,
    )


@pytest.fixture
def prefix(build, tmp_path):
    """A fresh install prefix holding the build's library, header and package files."""
    where = tmp_path / "prefix"
    result = run("cmake", "--install", build.directory, "--prefix", where)
    assert result.returncode == 0, result.stderr
    return where


def mpi_libraries(program) -> set[str]:
    """The MPI libraries the dynamic loader resolves for 'program'."""
    listed = run("ldd", program).stdout
    return {name for name in LIBRARIES.values() if f"{name}." in listed}


def check_runs_with_tandem(build, program) -> None:
    option = FAMILIES[build.family]
    assert mpi_libraries(program) == {LIBRARIES[option]}
    result = launch(build, 2, [str(program)], with_tandem=False)
    assert result.returncode == 0, result.stderr
    assert f"for {build.family}: active before 0, during 1, after 0" in result.stdout


def test_find_package_links_the_mpi_tandem_was_built_for(build, prefix, tmp_path):
    binary = tmp_path / "cmake-build"
    configured = run(
        "cmake",
        "-S",
        PROJECT,
        "-B",
        binary,
        "-DCMAKE_C_COMPILER=cc",
        f"-DCMAKE_PREFIX_PATH={prefix}",
        f"-DTANDEM_API_SOURCE={SOURCE}",
    )
    assert configured.returncode == 0, configured.stdout + configured.stderr
    built = run("cmake", "--build", binary)
    assert built.returncode == 0, built.stdout + built.stderr
    check_runs_with_tandem(build, binary / "uses_tandem")


def test_find_package_refuses_a_project_that_found_the_other_mpi(build, prefix, tmp_path):
    option = FAMILIES[build.family]
    other = next(o for o in WRAPPERS if o != option)
    configured = run(
        "cmake",
        "-S",
        PROJECT,
        "-B",
        tmp_path / "cmake-build",
        "-DCMAKE_C_COMPILER=cc",
        f"-DCMAKE_PREFIX_PATH={prefix}",
        f"-DTANDEM_API_SOURCE={SOURCE}",
        f"-DOTHER_MPI_C_COMPILER={WRAPPERS[other]}",
    )
    assert configured.returncode != 0
    said = " ".join((configured.stdout + configured.stderr).split())  # CMake wraps lines
    assert f"was built for {build.family}" in said
    assert "Configure with -DMPI_C_COMPILER=" in said and WRAPPERS[option] in said


@pytest.mark.parametrize("where", ["prefix", "build tree"])
def test_pkg_config_links_a_program_that_starts(build, prefix, tmp_path, where):
    pc_path = prefix / "lib" / "pkgconfig" if where == "prefix" else build.directory
    flags = run("pkg-config", "--cflags", "--libs", "tandem", env={"PKG_CONFIG_PATH": str(pc_path)})
    assert flags.returncode == 0, flags.stderr
    program = tmp_path / "uses_tandem"
    compiled = run("cc", SOURCE, *flags.stdout.split(), "-o", program)
    assert compiled.returncode == 0, compiled.stderr
    check_runs_with_tandem(build, program)


def test_both_builds_exist():
    """The tests above run for both MPIs: each needs its build."""
    for option in WRAPPERS:
        assert build_for(option).directory.exists()
