#!/usr/bin/env python3
"""Check libtandem's dynamic symbol table (nm -D).

  check_exports.py LIBRARY EXPORTS_TXT [--no-fortran] [--family openmpi|mpich|mpi]

Allowed: the entry points listed in src/wrappers/exports.txt (C MPI_*, the
four Fortran manglings and the mpi_f08 entry points) for the build's MPI
family, the public tandem_* API and the UCX calls that src/impl/ucx_exit.c
interposes; nothing else. A listed entry point marked with families (openmpi,
mpich: the mpi_f08 ones, which differ between the MPI libraries) belongs to
those families' builds only. Required: every listed entry point of the
build's family except those marked mpi4 (the MPI-4 functions and large-count
MPI_*_c variants), which exist only when mpi.h is MPI 4 (MPICH here, not Open
MPI 4.1). Fortran symbols for the _c functions must never exist.
"""

import re
import subprocess
import sys

# src/impl/ucx_exit.c: the UCX calls of MPICH's MPI_Finalize (all required).
UCX_INTERPOSED = {
    "ucp_worker_create",
    "ucp_worker_progress",
    "ucp_disconnect_nb",
    "ucp_request_is_completed",
    "ucp_request_release",
    "ucp_worker_destroy",
}


def is_fortran(symbol: str) -> bool:
    return symbol.startswith("mpi_") or (symbol.startswith("MPI_") and symbol.upper() == symbol)


FAMILIES = {"openmpi", "mpich"}


def main(library: str, exports: str, fortran: bool, family: str) -> int:
    with open(exports) as listing:
        lines = [line.split() for line in listing if line.strip() and not line.startswith("#")]
    lines = [
        fields
        for fields in lines
        if not FAMILIES & set(fields[1:]) or family in fields[1:]  # this family's
    ]
    listed = {fields[0] for fields in lines} | UCX_INTERPOSED
    optional = {fields[0] for fields in lines if "mpi4" in fields[1:]}
    if not fortran:  # a build without Fortran exports only the C entry points
        listed = {s for s in listed if not is_fortran(s)}
    out = subprocess.run(
        ["nm", "-D", "--defined-only", library],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    exported = {fields[-1] for fields in (line.split() for line in out.splitlines()) if fields}
    errors = []
    for symbol in sorted(exported):
        if symbol in listed or symbol.startswith("tandem_"):
            continue
        if symbol.startswith("_") or symbol in {"_init", "_fini"}:
            continue  # linker-provided (_init, _fini, __bss_start, _edata, _end)
        errors.append(f"unexpected exported symbol {symbol}")
    for symbol in sorted(listed - exported - optional):
        errors.append(f"missing entry point {symbol}")
    for symbol in sorted(exported):
        if re.fullmatch(r"(mpi_\w+_c_{0,2}|MPI_[A-Z_]+_C)", symbol):
            errors.append(f"Fortran symbol for a C-only large-count function: {symbol}")
    for name in ("tandem_version", "tandem_mpi_family", "tandem_active"):
        if name not in exported:
            errors.append(f"missing public function {name}")
    for error in errors:
        print(error)
    c_count = len([s for s in exported if re.fullmatch(r"MPI_[A-Z][a-z_]*\w*", s)])
    print(
        f"{len(exported)} exported symbols, {c_count} C MPI entry points; "
        f"{'FAILED' if errors else 'passed'}"
    )
    return 1 if errors else 0


if __name__ == "__main__":
    options = sys.argv[3:]
    family = options[options.index("--family") + 1] if "--family" in options else "mpi"
    sys.exit(main(sys.argv[1], sys.argv[2], "--no-fortran" not in options, family))
