"""Finding libtandem builds and the MPI library a program is linked with."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

# Debian/Ubuntu names first, then the plain upstream names.
MPI_LIBRARY = re.compile(r"^\s*(libmpi\.so[.\d]*|libmpich\.so[.\d]*)\s+=>\s+(\S+)", re.M)
FAMILY_OF_OPTION = {"openmpi": "Open MPI", "mpich": "MPICH"}


class TandemError(Exception):
    """A problem the user can fix; the message says what and how."""


@dataclass
class Build:
    """One libtandem build directory (build/openmpi, build/mpich, ...)."""

    directory: Path
    family: str  # "Open MPI", "MPICH" or "MPI"
    launcher: str
    library: Path  # libtandem.so
    mpi_library: Path | None  # the MPI library libtandem is linked with (resolved)
    probe: Path | None
    sanitize: str = ""  # sanitizers the build was made with ("" for none)

    @property
    def option(self) -> str:
        return {v: k for k, v in FAMILY_OF_OPTION.items()}.get(self.family, self.family.lower())


def repository_root() -> Path:
    return Path(__file__).resolve().parents[2]


def default_build_root() -> Path:
    return repository_root() / "build"


def mpi_library_of(path: Path) -> Path | None:
    """The MPI library an executable or shared library is linked with, via ldd."""
    if shutil.which("ldd") is None:
        raise TandemError("ldd is not installed; it is needed to find the program's MPI")
    result = subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=False)
    match = MPI_LIBRARY.search(result.stdout)
    if not match or match.group(2) == "not":
        return None
    return Path(match.group(2)).resolve()


def load_build(directory: Path) -> Build | None:
    """The build in 'directory', or None if it holds no built libtandem."""
    info = directory / "tandem-build.json"
    library = directory / "libtandem.so"
    if not info.exists() or not library.exists():
        return None
    data = json.loads(info.read_text())
    probe = directory / "tandem-probe"
    return Build(
        directory=directory,
        family=data["family"],
        launcher=data["launcher"],
        library=library,
        mpi_library=mpi_library_of(library),
        probe=probe if probe.exists() else None,
        sanitize=data.get("sanitize", ""),
    )


def load_builds(root: Path) -> list[Build]:
    """Every build under 'root' (one directory per MPI), sanitizer builds last."""
    if not root.is_dir():
        return []
    builds = [b for b in (load_build(d) for d in sorted(root.iterdir()) if d.is_dir()) if b]
    return sorted(builds, key=lambda b: bool(b.sanitize))


def find_program(program: str) -> Path:
    """The absolute path of 'program' as mpirun finds it: a name with a slash
    as it is, a bare name on PATH and then in the current directory.

    Symbolic links are kept, not resolved: a virtual environment's
    bin/python is a link to the base interpreter and finds the environment's
    packages only when it is started through the link."""
    if os.sep in program:
        if not os.path.isfile(program):
            raise TandemError(f"program {program!r} not found")
        return Path(program).absolute()
    found = shutil.which(program) or shutil.which(program, path=os.curdir)
    if not found:
        raise TandemError(f"program {program!r} not found on PATH nor in the current directory")
    return Path(found).absolute()


def select_build(program: Path, builds: list[Build], mpi: str | None, root: Path) -> Build:
    """The build matching the program's MPI, or a TandemError saying why none does."""
    wanted = FAMILY_OF_OPTION.get(mpi) if mpi else None
    if mpi and not wanted:
        raise TandemError(f"--mpi {mpi!r} is not known; use one of: openmpi, mpich")
    program_mpi = mpi_library_of(program)

    if program_mpi is None and not wanted:
        raise TandemError(
            f"{program} is not linked with an MPI library (ldd shows no libmpi or libmpich); "
            "for an interpreter such as python3 (mpi4py), name the MPI with --mpi openmpi|mpich"
        )
    if program_mpi is not None:
        match = [b for b in builds if b.mpi_library == program_mpi]
        if wanted and match and match[0].family != wanted:
            raise TandemError(
                f"{program} is linked with {match[0].family} ({program_mpi}), "
                f"but --mpi {mpi} was asked for"
            )
        if match:
            return match[0]
        family = guess_family(program_mpi)
        if wanted and family != wanted:
            raise TandemError(
                f"{program} is linked with {family} ({program_mpi}), but --mpi {mpi} was asked for"
            )
        raise TandemError(
            f"no libtandem is built for the MPI {program} uses ({program_mpi}); "
            f"looked in {root}; run `make` to build Tandem for Open MPI and MPICH"
        )
    match = [b for b in builds if b.family == wanted]
    if not match:
        raise TandemError(
            f"no libtandem is built for {wanted}; looked in {root}; run `make` to build it"
        )
    return match[0]


def guess_family(mpi_library: Path) -> str:
    name = mpi_library.name
    if name.startswith("libmpich"):
        return "MPICH"
    if "openmpi" in str(mpi_library) or name.startswith("libmpi.so.4"):
        return "Open MPI"
    return "an MPI"
