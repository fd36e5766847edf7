"""The program `tandem run` launches is the one the user named: a symbolic link
is launched as itself (a virtual environment's python finds its packages
through the link's path), and a bare name is looked for on PATH and then in
the current directory, as mpirun does."""

from __future__ import annotations

import os
import subprocess
import sys
import venv

import conftest  # noqa: F401  (puts python/ on sys.path)


def tandem_in(cwd, *args: str) -> subprocess.CompletedProcess:
    """Run the tandem command from directory 'cwd'."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.run(
        [sys.executable, "-m", "tandem.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def test_a_virtual_environments_python_runs_as_itself(tmp_path):
    """VENV/bin/python is a link to the base interpreter; launched through the
    link it takes VENV as its prefix (and VENV's packages, such as mpi4py)."""
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=False, symlinks=True)
    python = environment / "bin" / "python"
    assert python.is_symlink()
    script = tmp_path / "prefix.py"
    # one write of the whole line: the two ranks' lines must not interleave
    script.write_text("import os, sys\nos.write(1, f'prefix {sys.prefix}\\n'.encode())\n")
    result = tandem_in(tmp_path, "run", "-n", "2", "--mpi", "mpich", "--", str(python), "prefix.py")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"prefix {environment}"] * 2


def test_a_relative_link_keeps_its_name(tmp_path):
    """A program whose behaviour depends on the name it is called by (argv[0],
    like busybox) is launched under the link's name, not its target's."""
    script = tmp_path / "show-name.sh"
    script.write_text('#!/bin/sh\necho "called as $(basename "$0")"\n')
    script.chmod(0o755)
    (tmp_path / "alias").symlink_to("show-name.sh")
    result = tandem_in(tmp_path, "run", "--mpi", "mpich", "./alias")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "called as alias\n"


def test_a_bare_name_is_found_in_the_current_directory(tmp_path):
    script = tmp_path / "hello-here.sh"
    script.write_text('#!/bin/sh\necho "hello from $(pwd)"\n')
    script.chmod(0o755)
    result = tandem_in(tmp_path, "run", "--mpi", "mpich", "hello-here.sh")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"hello from {tmp_path}\n"


def test_a_bare_name_missing_everywhere_names_both_places(tmp_path):
    result = tandem_in(tmp_path, "run", "--mpi", "mpich", "no-such-program-here")
    assert result.returncode == 2
    assert "'no-such-program-here' not found on PATH nor in the current directory" in result.stderr


def test_exec_runs_the_program_under_the_name_given(tmp_path):
    script = tmp_path / "show-name.sh"
    script.write_text('#!/bin/sh\necho "called as $0"\n')
    script.chmod(0o755)
    (tmp_path / "alias").symlink_to("show-name.sh")
    result = tandem_in(tmp_path, "exec", "--mpi", "mpich", "./alias")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("/alias"), result.stdout
