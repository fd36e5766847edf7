#!/usr/bin/env python3
"""Write src/virt/gen_fortran.inc: the Fortran entry points of the virtual
ranks (mpif.h and the mpi module, gfortran's names: mpi_send_).

For each MPI function the runtime implements (a TMPI_* function of
include/tmpi.h) an entry point takes Fortran's arguments (every one by
reference, handles as integers, a status as an integer array), converts
them with src/virt/fortran.c's helpers, calls the TMPI_* function, and
converts back what it wrote. A few whose Fortran form differs from C's
(MPI_Init, MPI_Wtime, the 1-based index of MPI_Waitany) are written by hand
in fortran.c and skipped here. Every other MPI function that is neither
implemented nor process-local (tools/gen_virt_names.py's PASS_THROUGH,
whose Fortran forms stay the real MPI's) gets an entry point that stops the
program with a message naming it.

    tools/gen_virt_fortran.py            write the file
    tools/gen_virt_fortran.py --check    fail if it is stale
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_virt_names import PASS_THROUGH, mpi_functions  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "virt" / "gen_fortran.inc"
TMPI_H = ROOT / "include" / "tmpi.h"

# Written by hand in src/virt/fortran.c, or not MPI functions at all.
BY_HAND = {
    "Init",
    "Init_thread",
    "Wtime",
    "Wtick",
    "Buffer_detach",
    "Waitany",
    "Testany",
    "Alltoallw",
    # attributes: Fortran's values are integers, its callbacks Fortran's
    "Comm_create_keyval",
    "Comm_set_attr",
    "Comm_get_attr",
    "Keyval_create",
    "Attr_put",
    "Attr_get",
    # names (Fortran's strings), outputs of the real MPI's handles, variable
    # arguments, 1-based indices
    "Comm_set_name",
    "Comm_get_name",
    "Comm_get_info",
    "Comm_get_errhandler",
    "Comm_create_errhandler",
    "Pcontrol",
    "Waitsome",
    "Testsome",
}
NOT_MPI = {"Run", "Set_private", "Set_program_copy", "Private_atexit"}
# Arrays of datatypes whose length the entry point would have to work out
# (neighbours) or keep until the operation ends (nonblocking, persistent):
# C's forms only, for now.
C_ONLY = {"Ialltoallw", "Alltoallw_init", "Neighbor_alltoallw", "Ineighbor_alltoallw"}

PROTOTYPE = re.compile(r"TMPI_EXPORT\s+(int|double)\s+TMPI_(\w+)\s*\(([^)]*(?:\)[^;]*)?)\);")
HANDLES = {
    "MPI_Datatype": "PMPI_Type_f2c",
    "MPI_Op": "PMPI_Op_f2c",
    "MPI_Info": "PMPI_Info_f2c",
    "MPI_Errhandler": "PMPI_Errhandler_f2c",
}
# The runtime's own handles: converted by fortran.c both ways.
VIRTUAL = {
    "MPI_Comm": "comm",
    "MPI_Group": "group",
    "MPI_Request": "request",
    "MPI_Message": "message",
}


def prototypes() -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(return type, name without TMPI_, [(type, parameter name)])."""
    text = " ".join(TMPI_H.read_text().split())
    found = []
    for ret, name, params in PROTOTYPE.findall(text):
        if name in NOT_MPI:
            continue
        params = params.strip()
        parsed = []
        if params and params != "void":
            for param in params.split(","):
                if param.strip() == "...":  # variable arguments (MPI_Pcontrol: by hand)
                    continue
                match = re.match(r"(.*?)(\w+)\s*((?:\[[^\]]*\])*)$", param.strip())
                if not match:
                    raise SystemExit(f"gen_virt_fortran: cannot read parameter {param!r} of {name}")
                ctype, pname, dims = match.groups()
                parsed.append((" ".join(ctype.split()) + dims.replace(" ", ""), pname))
        found.append((ret, name, parsed))
    return found


def entry(name: str, params: list[tuple[str, str]]) -> str:
    """The entry point of TMPI_<name>, and its mpi_f08 form (f08_wrapper)."""
    fargs: list[str] = []
    before: list[str] = []
    call: list[str] = []
    after: list[str] = []
    names = {p for _, p in params}
    for ctype, p in params:
        base = ctype.replace("const ", "").strip()
        if base in ("int", "MPI_Aint", "MPI_Count"):
            fargs.append(f"const {'MPI_Fint' if base == 'int' else base} *{p}")
            call.append(f"*{p}")
        elif base in ("int[]", "int *") and p.endswith("weights"):
            fargs.append(f"MPI_Fint *{p}")
            call.append(f"tdm_virt_f_weights({p})")
        elif base in ("int *", "int[]"):
            fargs.append(f"MPI_Fint *{p}")
            call.append(p)
        elif base == "int[][3]":
            fargs.append(f"MPI_Fint *{p}")
            call.append(f"(int (*)[3]){p}")
        elif base == "MPI_Aint[]":
            fargs.append(f"MPI_Aint *{p}")
            call.append(p)
        elif base in ("void *",):
            fargs.append(f"void *{p}")
            call.append(f"tdm_virt_f_buffer({p})")
        elif base in HANDLES:
            fargs.append(f"const MPI_Fint *{p}")
            call.append(f"{HANDLES[base]}(*{p})")
        elif base in VIRTUAL:
            kind = VIRTUAL[base]
            fargs.append(f"const MPI_Fint *{p}")
            call.append(f"tdm_virt_f_{kind}(*{p})")
        elif base.endswith(" *") and base[:-2] in VIRTUAL and p not in ("requests",):
            kind = VIRTUAL[base[:-2]]
            fargs.append(f"MPI_Fint *{p}")
            before.append(f"{base[:-2]} c_{p} = tdm_virt_f_{kind}(*{p});")
            call.append(f"&c_{p}")
            after.append(f"*{p} = tdm_virt_c2f_{kind}(c_{p});")
        elif base.endswith(" *") and base[:-2] in HANDLES:
            raise SystemExit(f"gen_virt_fortran: {name}: an output {base} (write it by hand)")
        elif base == "MPI_Request *" and p == "requests":
            count = "count"
            if count not in names:
                raise SystemExit(f"gen_virt_fortran: {name}: requests without a count")
            fargs.append(f"MPI_Fint *{p}")
            before.append(f"MPI_Request *c_{p} = tdm_virt_f_requests({p}, *{count});")
            before.append(f"if (!c_{p}) {{ *ierror = MPI_ERR_NO_MEM; return; }}")
            call.append(f"c_{p}")
            after.append(f"tdm_virt_c2f_requests(c_{p}, {p}, *{count});")
        elif base == "MPI_Status *" and p == "status":
            fargs.append(f"MPI_Fint *{p}")
            before.append(f"MPI_Status c_{p} = {{0}};")
            call.append(f"tdm_virt_f_status_ignored({p}) ? MPI_STATUS_IGNORE : &c_{p}")
            after.append(f"tdm_virt_c2f_status(&c_{p}, {p});")
        elif base == "MPI_Status *" and p == "statuses":
            fargs.append(f"MPI_Fint *{p}")
            before.append(f"MPI_Status *c_{p} = tdm_virt_f_statuses({p}, *count);")
            before.append(
                f"if (!c_{p} && !tdm_virt_f_statuses_ignored({p})) "
                "{ *ierror = MPI_ERR_NO_MEM; goto out; }"
            )
            call.append(f"c_{p} ? c_{p} : MPI_STATUSES_IGNORE")
            after.append(f"tdm_virt_c2f_statuses(c_{p}, {p}, *count);")
        else:
            raise SystemExit(f"gen_virt_fortran: {name}: parameter {ctype} {p} has no rule")
    fargs.append("MPI_Fint *ierror")
    lower = f"mpi_{name.lower()}_"
    signature = f"TMPI_EXPORT void {lower}({', '.join(fargs)})"
    lines = [f"{signature};", signature, "{"]
    body = [*before, f"*ierror = TMPI_{name}({', '.join(call)});", *after]
    # the statuses' and requests' copies go at the end, and on the way out
    frees = [f"free(c_{p});" for t, p in params if p in ("requests", "statuses")]
    uses_out = any("goto out" in line for line in before)
    for line in body:
        if "goto out" in line and not frees:
            line = line.replace("goto out", "return")
        lines.append(f"    {line}")
    if uses_out:
        lines.append("out:")
    lines += [f"    {line}" for line in frees]
    lines.append("}")
    return "\n".join(lines), fargs


def f08_wrapper(lower: str, fargs: list[str]) -> str:
    """The mpi_f08 entry point of a function (mpi_send_f08_ on Open MPI,
    mpi_comm_rank_f08_ on MPICH): mpif.h's arguments (the status is the C
    layout, as mpif.h's is, on both MPIs), ierror optional."""
    names = [arg.split("*")[-1].strip() for arg in fargs[:-1]]
    signature = f"TMPI_EXPORT void {lower}f08_({', '.join(fargs)})"
    return "\n".join(
        [
            f"{signature};",
            signature,
            "{",
            "    MPI_Fint rc;",
            f"    {lower}({', '.join([*names, '&rc'])});",
            "    if (ierror)",
            "        *ierror = rc;",
            "}",
        ]
    )


def buffer_roles(params: list[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    """How MPICH's mpi_f08 entry point takes each choice buffer, which may
    be a non-contiguous array section: ("pair", count, datatype) where the
    buffer has a count and datatype of its own (a derived datatype then
    describes the section), ("copy",) where it shares them with another
    buffer (the reductions) or its counts come as an array (the v and w
    collectives): a contiguous copy."""
    resolved: dict[str, tuple[str, str]] = {}
    roles: dict[str, tuple[str, ...]] = {}
    for i, (ctype, p) in enumerate(params):
        if "void *" not in ctype:
            continue
        j = i + 1
        while j < len(params) and "void *" in params[j][0]:
            j += 1
        if j + 1 < len(params) and params[j][0] == "int" and params[j + 1][0] == "MPI_Datatype":
            resolved[p] = (params[j][1], params[j + 1][1])
        else:
            roles[p] = ("copy",)
    for p, pair in resolved.items():
        shared = list(resolved.values()).count(pair) > 1
        roles[p] = ("copy",) if shared else ("pair", *pair)
    return {p: roles[p] for _, p in params if p in roles}


def mpich_f08ts(name: str, params: list[tuple[str, str]], fargs: list[str]) -> str:
    """MPICH's mpi_f08 entry point of a function with choice buffers
    (mpi_send_f08ts_): each buffer a gfortran descriptor, converted by
    fortran.c's f_pair, f_copy or f_kept, then mpif.h's entry point."""
    roles = buffer_roles(params) if name != "Buffer_attach" else {"buffer": ("kept",)}
    names = [p for _, p in params]
    kinds = dict((p, c) for c, p in params)
    mode = "2" if name.endswith("_init") else "1" if "request" in names else "0"
    args = []
    for arg, p in zip(fargs[:-1], names):
        args.append(f"f_array *{p}" if p in roles else arg)
    signature = (
        f"TMPI_EXPORT void mpi_{name.lower()}_f08ts_({', '.join([*args, 'MPI_Fint *ierror'])})"
    )
    body = []
    call = {p: p for p in names}
    for p, role in roles.items():
        body.append(f"f_buffer b_{p};")
        if role[0] == "pair":
            count, datatype = role[1], role[2]
            body.append(f"MPI_Fint n_{count} = *{count}, t_{datatype} = *{datatype};")
            body.append(f'f_pair(&b_{p}, "MPI_{name}", "{p}", {p}, &n_{count}, &t_{datatype});')
            call[count], call[datatype] = f"&n_{count}", f"&t_{datatype}"
        elif role[0] == "kept":  # the runtime keeps the address: no copy can stand in
            body.append(f'f_kept(&b_{p}, "MPI_{name}", "{p}", {p});')
        else:
            receive = "0" if kinds[p].startswith("const") else "1"
            body.append(f'f_copy(&b_{p}, "MPI_{name}", "{p}", {p}, {receive}, {mode});')
        call[p] = f"b_{p}.address"
    buffers = [f"&b_{p}" for p in roles] + ["NULL"] * (2 - len(roles))
    if len(roles) > 2:
        raise SystemExit(f"gen_virt_fortran: {name}: more than two choice buffers")
    request = "request" if "request" in names else "NULL"
    body += [
        "MPI_Fint rc;",
        f"mpi_{name.lower()}_({', '.join([*(call[p] for p in names), '&rc'])});",
        f"f_finish(rc, {request}, {', '.join(buffers)});",
        "optional(ierror, rc);",
    ]
    return "\n".join([f"{signature};", signature, "{", *(f"    {b}" for b in body), "}"])


def render() -> str:
    implemented = {}
    for ret, name, params in prototypes():
        implemented[name] = (ret, params)
    out = [
        "/* generated by tools/gen_virt_fortran.py; do not edit */",
        "/* The virtual ranks' Fortran entry points (src/virt/fortran.c includes",
        "   this file): one per implemented MPI function, and one that stops the",
        "   program for each other function of the MPI standard a Fortran program",
        "   might call. */",
        "",
    ]
    f08 = []
    mpich = []
    for name in sorted(implemented):
        if name in BY_HAND or name in NOT_MPI or name in C_ONLY:
            continue
        params = implemented[name][1]
        text, fargs = entry(name, params)
        out += [text, ""]
        lower = f"mpi_{name.lower()}_"
        f08 += [f08_wrapper(lower, fargs), ""]
        if any("void *" in ctype for ctype, _ in params):
            mpich += [mpich_f08ts(name, params, fargs), ""]
        else:
            mpich += [f08_wrapper(lower, fargs), ""]
    stubs = []
    for full in mpi_functions():
        short = full[len("MPI_") :]
        if short in implemented and short not in C_ONLY:
            continue
        if PASS_THROUGH.match(full) or short.endswith("_c") or "_c2f" in short or "_f2c" in short:
            continue  # the real MPI's; large counts and conversions are C's alone
        if short in BY_HAND:
            continue
        stubs.append(full)
    out.append("/* Unsupported: the program stops, naming the function. */")
    for full in stubs:
        out.append(f'TDM_VIRT_F_UNSUPPORTED({full.lower()}_, "{full}")')
    out += ["", "/* Open MPI's mpi_f08 module: the same entry points, ierror optional. */"]
    out += ["#if defined(OPEN_MPI)", "", *f08]
    for full in stubs:
        out.append(f'TDM_VIRT_F_UNSUPPORTED({full.lower()}_f08_, "{full}")')
    out += [
        "#else",
        "/* MPICH's mpi_f08 module: the same entry points, ierror optional, but",
        "   mpi_send_f08ts_ and kin for those with choice buffers, which come as",
        "   descriptors; the forms with MPI_COUNT_KIND counts are unsupported as",
        "   C's _c functions are. */",
        "",
        *mpich,
    ]
    for full in stubs:
        out.append(f'TDM_VIRT_F_UNSUPPORTED({full.lower()}_f08_, "{full}")')
        out.append(f'TDM_VIRT_F_UNSUPPORTED({full.lower()}_f08ts_, "{full}")')
    for full in mpi_functions():
        if full.endswith("_c") and not PASS_THROUGH.match(full[:-2]):
            base = full[:-2].lower()
            out.append(f'TDM_VIRT_F_UNSUPPORTED({base}_f08_large_, "{full}")')
            out.append(f'TDM_VIRT_F_UNSUPPORTED({base}_f08ts_large_, "{full}")')
    out += ["#endif", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the file is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(
                f"{OUT.relative_to(ROOT)} is stale: run tools/gen_virt_fortran.py", file=sys.stderr
            )
            return 1
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
