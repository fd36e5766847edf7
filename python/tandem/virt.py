"""Virtual ranks (docs/VIRTUAL.md): `tandem cc` builds a plain MPI C program
against libtandem-virt, and `tandem run --virtual V` starts it with V ranks
per core as user-level threads."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .builds import (
    FAMILY_OF_OPTION,
    Build,
    TandemError,
    load_builds,
    repository_root,
)
from .hosts import Hosts
from .launch import (
    ending_signals_stop,
    launch_command,
    launcher_environment,
    run_in_foreground,
)

COMPILER = {"Open MPI": "mpicc.openmpi", "MPICH": "mpicc.mpich"}
CXX_COMPILER = {"Open MPI": "mpicxx.openmpi", "MPICH": "mpicxx.mpich"}
SOURCE = re.compile(r".*\.(c|i|cc|cpp|cxx|C|c\+\+|ii)$")
# The real mpi.h must not bring its C++ bindings (removed from MPI 3.0):
# they would call the real MPI, under names Tandem's header maps.
CXX_FLAGS = ["-DOMPI_SKIP_MPICXX", "-DMPICH_SKIP_MPICXX"]
# Written data that C++'s runtime owns, not the program: <iostream>'s
# initialiser object.
CXX_RUNTIME_OWN = ("_ZStL8__ioinit",)
# nm's letters of writable data: initialised (D, d) and zeroed (B, b).
WRITABLE = re.compile(r"^\S*\s+([DdBb])\s+(\S+)$")
VIRT_LIBRARY = "libtandem-virt.so"


def virt_build(builds: list[Build], mpi: str | None) -> Build:
    """The build of the MPI named by 'mpi' (default: the first) that holds
    the virtual-rank runtime."""
    wanted = FAMILY_OF_OPTION.get(mpi) if mpi else None
    for build in builds:
        if build.sanitize or (wanted and build.family != wanted):
            continue
        if (build.directory / VIRT_LIBRARY).exists():
            return build
    raise TandemError(
        f"no build {'for ' + mpi + ' ' if mpi else ''}holds {VIRT_LIBRARY}: run `make build`"
    )


def compiler_of(build: Build, cxx: bool = False) -> str:
    name = (CXX_COMPILER if cxx else COMPILER).get(build.family, "mpicxx" if cxx else "mpicc")
    if shutil.which(name) is None:
        raise TandemError(f"{name}, the compiler of {build.family}, is not installed")
    return name


def written_globals(objects: list[Path]) -> dict[Path, list[str]]:
    """The writable global and static variables each object file defines,
    by nm: what the virtual ranks of one process share."""
    found: dict[Path, list[str]] = {}
    for obj in objects:
        result = subprocess.run(
            ["nm", "--defined-only", str(obj)], capture_output=True, text=True, check=False
        )
        names = [
            readable(m.group(2))
            for line in result.stdout.splitlines()
            if (m := WRITABLE.match(line)) and not m.group(2).startswith(CXX_RUNTIME_OWN)
        ]
        if names:
            found[obj] = sorted(set(names))
    return found


def readable(symbol: str) -> str:
    """A variable as the program names it: GCC calls a function's static
    variable x x.0; a C++ name is demangled."""
    local = re.match(r"^(\w+)\.\d+$", symbol)
    if local:
        return f"{local.group(1)} (static, in a function)"
    if symbol.startswith("_Z") and shutil.which("c++filt"):
        done = subprocess.run(["c++filt", symbol], capture_output=True, text=True, check=False)
        return done.stdout.strip() or symbol
    return symbol


def warn_globals(found: dict[Path, list[str]], names: dict[Path, str], me: str) -> None:
    for obj, variables in found.items():
        print(
            f"{me}: warning: {names.get(obj, obj.name)}: written global or static "
            f"variables, shared by all the virtual ranks of a process: {', '.join(variables)}",
            file=sys.stderr,
        )


def split_arguments(words: list[str]) -> tuple[list[str], list[str], list[str], str | None, bool]:
    """Sources, objects and libraries given as files, other flags, the -o
    output, and whether -c was given."""
    sources, inputs, flags = [], [], []
    output = None
    compile_only = False
    i = 0
    while i < len(words):
        word = words[i]
        if word == "-o" and i + 1 < len(words):
            output = words[i + 1]
            i += 2
            continue
        if word == "-c":
            compile_only = True
        elif SOURCE.match(word) and not word.startswith("-"):
            sources.append(word)
        elif re.match(r".*\.(o|a|so)$", word) and not word.startswith("-"):
            inputs.append(word)
        else:
            flags.append(word)
        i += 1
    return sources, inputs, flags, output, compile_only


def command_cxx(args: argparse.Namespace) -> int:
    """tandem c++: as tandem cc, with the MPI's C++ compiler."""
    return command_cc(args, cxx=True)


def command_cc(args: argparse.Namespace, cxx: bool = False) -> int:
    me = "tandem c++" if cxx else "tandem cc"
    words = list(args.arguments)
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        example = "app.cpp" if cxx else "app.c"
        raise TandemError(f"{me}: no source file given ({me} [--mpi M] {example} -o app)")
    build = virt_build(load_builds(Path(args.builds)), args.mpi)
    compiler = compiler_of(build, cxx)
    include = repository_root() / "include"
    compile_flags = [f"-I{include / 'virt'}", f"-I{include}", *(CXX_FLAGS if cxx else [])]
    link_flags = [
        str(build.directory / "libtandem-virt-main.a"),
        f"-L{build.directory}",
        f"-Wl,-rpath,{build.directory}",
        "-ltandem-virt",
    ]
    sources, inputs, flags, output, compile_only = split_arguments(words)
    if not sources and not inputs:
        raise TandemError(f"{me}: no source or object file given")

    def run(command: list[str]) -> int:
        if args.verbose:
            print(" ".join(command), file=sys.stderr)
        return subprocess.run(command, check=False).returncode

    with tempfile.TemporaryDirectory(prefix="tandem-cc-") as tmp:
        objects: list[Path] = []
        names: dict[Path, str] = {}
        for n, source in enumerate(sources):
            if compile_only:
                obj = Path(output if output and len(sources) == 1 else Path(source).stem + ".o")
            else:
                obj = Path(tmp) / f"{n}-{Path(source).stem}.o"
            code = run([compiler, *compile_flags, *flags, "-c", source, "-o", str(obj)])
            if code != 0:
                return code
            objects.append(obj)
            names[obj] = source
        for given in inputs:
            if given.endswith(".o"):
                objects.append(Path(given))
                names[Path(given)] = given
        warn_globals(written_globals(objects), names, me)
        if compile_only:
            return 0
        out = ["-o", output] if output else []
        objs = [str(o) for o in objects if str(o) not in inputs]
        return run([compiler, *objs, *inputs, *flags, *link_flags, *out])


def uses_virtual_runtime(program: Path) -> bool:
    result = subprocess.run(["ldd", str(program)], capture_output=True, text=True, check=False)
    return VIRT_LIBRARY in result.stdout


def run_virtual(args: argparse.Namespace, build: Build, path: Path, program: list[str]) -> int:
    """tandem run [-n H | --hosts H] --virtual V [--cores C]: H processes of
    C x V ranks; with --hosts, one process on each of H simulated hosts."""
    if args.virtual < 1:
        raise TandemError(f"--virtual {args.virtual}: expected at least 1 rank per core")
    if args.cores is not None and args.cores < 1:
        raise TandemError(f"--cores {args.cores}: expected at least 1 core")
    from .cli import check_hosts_options

    check_hosts_options(args)  # --link without --hosts, and what hosts need
    hosts = args.nprocs if args.nprocs is not None else 1
    if args.hosts is not None:
        if args.nprocs is not None and args.nprocs != args.hosts:
            raise TandemError(
                f"-n {args.nprocs} with --hosts {args.hosts} and --virtual: one process per "
                f"host; give -n {args.hosts} (or -nn {args.hosts}) or leave -n out"
            )
        hosts = args.hosts
    if hosts < 1:
        raise TandemError(f"-n {hosts}: the number of processes must be at least 1")
    if args.cores is None:
        args.cores = default_cores(hosts)
    for option in ("placement", "monitor"):
        if getattr(args, option, None) is not None:
            raise TandemError(f"--{option} with --virtual: not supported yet (docs/VIRTUAL.md)")
    if args.ghosts:
        raise TandemError("--ghosts with --virtual: not supported yet (docs/VIRTUAL.md)")
    if not uses_virtual_runtime(path):
        raise TandemError(
            f"{path} is not built with `tandem cc` (ldd shows no {VIRT_LIBRARY}); "
            "--virtual needs a program built with it"
        )
    env = dict(item.split("=", 1) for item in args.env)
    env["TANDEM_VIRT_RANKS"] = str(args.virtual)
    env["TANDEM_VIRT_CORES"] = str(args.cores)
    words = [str(path), *program[1:]]
    if args.hosts is not None:
        return run_virtual_on_hosts(args, build, words, env)
    # Open MPI binds one or two processes to a core each by default: a
    # process of several cores would run all its kernel threads on one.
    unbound = ["--bind-to", "none"] if args.cores > 1 and build.family == "Open MPI" else []
    command = launch_command(build, hosts, words, False, env, unbound + args.launcher_arg)
    if not args.quiet:
        print(ranks_line(hosts, args.cores, args.virtual), file=sys.stderr)
    if args.dry_run:
        print(" ".join(command))
        return 0
    return subprocess.run(command, env=launcher_environment(build), check=False).returncode


def default_cores(processes: int) -> int:
    """--cores left out: the CPUs this machine gives tandem, shared out
    among the processes it starts here (on one host, or on simulated hosts,
    which share this machine's CPUs), at least one each."""
    return max(1, len(os.sched_getaffinity(0)) // processes)


def ranks_line(processes: int, cores: int, virtual: int) -> str:
    return (
        f"tandem: {processes * cores * virtual} virtual ranks: {processes} process(es) x "
        f"{cores} core(s) x {virtual} rank(s)"
    )


def run_virtual_on_hosts(
    args: argparse.Namespace, build: Build, words: list[str], env: dict[str, str]
) -> int:
    """One process of C x V virtual ranks on each of --hosts H simulated
    hosts (docs/HOSTS.md), made for the run and removed however it ends."""
    from .cli import hosts_line

    if args.dry_run:
        raise TandemError(
            "--dry-run cannot show a launch on --hosts: the hosts, and the agent their "
            "launcher needs, exist only while tandem runs"
        )
    with ending_signals_stop(), Hosts(args.hosts, args.link) as net:
        # Hosts that share this machine's CPUs each see CPUs to spare for
        # the processes' progress thread (TANDEM_VIRT_PROGRESS=auto) that
        # the other hosts' cores compute on: there the thread slowed the
        # stencil of docs/VIRTUAL.md (2 hosts on 2 CPUs).
        shared = not net.cpu_sets and "TANDEM_VIRT_PROGRESS" not in {**os.environ, **env}
        if shared:
            env = {**env, "TANDEM_VIRT_PROGRESS": "off"}
        command = net.launch_command(
            build, args.hosts, words, False, env, args.launcher_arg, cores_each=args.cores
        )
        if not args.quiet:
            line = ranks_line(args.hosts, args.cores, args.virtual)
            if shared:
                line += "; progress thread off: the hosts share this machine's CPUs"
            print(line, file=sys.stderr)
            print(hosts_line(net, args.hosts).replace("rank", "process"), file=sys.stderr)
        return run_in_foreground(command, launcher_environment(build))
