"""Fixtures: the builds made by `make build` and helpers to run their programs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from tandem.builds import Build, default_build_root, load_builds  # noqa: E402
from tandem.launch import launch_command, launcher_environment, own_session_directory  # noqa: E402

# Each test process (each pytest worker) launches Open MPI with session
# files of its own: launches of two workers beside each other met in /tmp.
own_session_directory()

BUILDS = [b for b in load_builds(default_build_root()) if not b.sanitize]
FAMILIES = {"Open MPI": "openmpi", "MPICH": "mpich"}


def build_for(option: str) -> Build:
    for build in BUILDS:
        if FAMILIES.get(build.family) == option:
            return build
    raise AssertionError(f"no {option} build in {default_build_root()}: run `make build` first")


@pytest.fixture(params=["openmpi", "mpich"])
def build(request) -> Build:
    return build_for(request.param)


def tandem_cli(*args: str, env: dict[str, str] | None = None, timeout: int = 120):
    """Run the tandem command; returns the CompletedProcess."""
    full_env = dict(os.environ)
    full_env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    full_env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "tandem.cli", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )


def launch(
    build: Build,
    nprocs: int,
    program: list[str],
    env: dict[str, str] | None = None,
    with_tandem: bool = True,
    extra_preload: str | None = None,
    cwd: str | os.PathLike = "/tmp",
    launcher_args: list[str] | None = None,
):
    """Run a program under the build's launcher (with 'launcher_args' before
    the program's); returns the CompletedProcess."""
    rank_env = dict(env or {})
    if extra_preload:
        rank_env["LD_PRELOAD"] = extra_preload
    command = launch_command(build, nprocs, program, with_tandem, rank_env, launcher_args)
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=launcher_environment(build),
        timeout=120,
        cwd=cwd,
        check=False,
    )


def program_path(build: Build, name: str) -> str:
    path = build.directory / "tests" / name
    assert path.exists(), f"{path} is missing: run `make build`"
    return str(path)


@pytest.fixture(scope="module")
def simulated_hosts(request):
    """Simulated hosts (tandem/hosts.py) for a module's tests: 2, or as many
    as an indirect parameter says; skipped, saying why, where this machine
    cannot make them (not root, no ip or unshare)."""
    from tandem.hosts import Hosts, missing_requirements

    missing = missing_requirements(None)
    if missing:
        pytest.skip(missing)
    with Hosts(getattr(request, "param", 2)) as made:
        yield made


def launch_on_hosts(
    hosts,
    build: Build,
    nprocs: int,
    program: list[str],
    env: dict[str, str] | None = None,
    with_tandem: bool = True,
    cwd: str | os.PathLike = "/tmp",
    timeout: float = 120,
):
    """Run a program on the hosts of the hosts fixture, ranks placed
    block-wise; returns the CompletedProcess. A launch that times out leaves
    no rank behind (its ranks run in process groups of their own)."""
    command = hosts.launch_command(build, nprocs, program, with_tandem, env, cwd=cwd)
    try:
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=launcher_environment(build),
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        hosts.sweep()
        raise


def mpi4py_env(build) -> dict[str, str]:
    """The variables that find `make mpi4py`'s package for this build: PyPI's
    wheel, whose MPICH variant loads libmpi.so.12 from build/mpi4py/mpich/lib
    (a link to Debian's libmpich.so.12)."""
    path = ROOT / "build" / "mpi4py" / FAMILIES[build.family]
    assert (path / "mpi4py").is_dir(), f"{path} has no mpi4py: run `make mpi4py`"
    if FAMILIES[build.family] == "openmpi":
        return {"PYTHONPATH": str(path)}
    return {
        "PYTHONPATH": str(path),
        "MPI4PY_MPIABI": "mpich",
        "LD_LIBRARY_PATH": ":".join(
            filter(None, [str(path / "lib"), os.environ.get("LD_LIBRARY_PATH")])
        ),
    }
