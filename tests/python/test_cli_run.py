"""What `tandem run` and `tandem exec` say and take: the line that says what
Tandem does in a run, a dry run that can be pasted into a shell, launcher
arguments that start with a dash, the help, and exec's options and warning."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import build_for
from tandem.cli import build_parser, parse_arguments


@pytest.mark.parametrize(
    "argv, launcher_args, program",
    [
        (["run", "--launcher-arg", "--mca", "./app"], ["--mca"], ["./app"]),
        (
            ["run", "--launcher-arg", "--mca", "--launcher-arg", "btl", "-n", "2", "./app"],
            ["--mca", "btl"],
            ["./app"],
        ),
        (["run", "--launcher-arg=-v", "./app"], ["-v"], ["./app"]),
        (
            ["run", "--launcher-arg", "-v", "--", "./app", "--launcher-arg", "-x"],
            ["-v"],
            ["--", "./app", "--launcher-arg", "-x"],
        ),
        (["run", "--monitor", "--launcher-arg", "-v", "./app"], ["-v"], ["./app"]),
    ],
)
def test_a_launcher_argument_may_start_with_a_dash(argv, launcher_args, program):
    """--launcher-arg --mca used to stop with 'expected one argument'; the
    program's own words are never changed."""
    args = parse_arguments(build_parser(), argv)
    assert args.launcher_arg == launcher_args
    assert args.program == program


def tandem(*args: str, cwd=None, env: dict[str, str] | None = None, unset=()):
    """Run the tandem command with 'env' added to this environment and the
    variables in 'unset' removed; returns the CompletedProcess."""
    full_env = {k: v for k, v in os.environ.items() if k not in unset}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "tandem.cli", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=120,
        check=False,
    )


ROOT_CONSENT = ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM")


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_a_dry_run_pasted_into_a_shell_runs_the_same(tmp_path, mpi):
    """The printed line holds the variables tandem gives the launcher (Open
    MPI's consent to run as root) and quotes what the shell would split."""
    script = tmp_path / "show args.sh"
    script.write_text('#!/bin/sh\nprintf "<%s>" "$@" "$GREETING"; echo\n')
    script.chmod(0o755)
    words = ["run", "-n", "1", "--mpi", mpi, "-e", "GREETING=hello there", "--dry-run"]
    words += ["--launcher-arg", "--verbose"] if mpi == "mpich" else []
    result = tandem(*words, str(script), "it's", "a b", unset=ROOT_CONSENT)
    assert result.returncode == 0, result.stderr
    line = result.stdout.strip()
    build = build_for(mpi)
    consent = build.family == "Open MPI" and os.geteuid() == 0
    expected = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " if consent else ""
    assert line.startswith(expected + build.launcher + " "), line
    if build.family == "Open MPI":
        assert " --oversubscribe " in line
    else:
        assert " --verbose " in line
    pasted = subprocess.run(
        ["sh", "-c", line],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k not in ROOT_CONSENT},
        timeout=60,
    )
    assert pasted.returncode == 0, pasted.stderr
    assert pasted.stdout.splitlines()[-1] == "<it's><a b><hello there>"


SETTINGS = ("TANDEM_DISABLE", "TANDEM_PROGRESS", "TANDEM_COLL", "TANDEM_MONITOR")


def settings_lines(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("tandem: ")]


def test_run_says_once_what_tandem_does_and_how_to_turn_on_the_rest(tmp_path):
    """Without settings Tandem decides progress itself (auto); the line says
    so, and how to force it."""
    script = tmp_path / "quiet.sh"
    script.write_text("#!/bin/sh\ntrue\n")
    script.chmod(0o755)
    plain = tandem("run", "-n", "2", "--mpi", "mpich", str(script), unset=SETTINGS)
    assert plain.returncode == 0, plain.stderr
    assert settings_lines(plain) == [
        "tandem: progress auto (on where the ranks span hosts; --progress drive|proxy forces "
        "it), collectives by the MPI library (-e TANDEM_COLL=tandem), monitoring off "
        "(--monitor); --quiet hides this line"
    ]
    busy = tandem(
        "run", "--mpi", "mpich", "-e", "TANDEM_COLL=tandem", str(script),
        env={"TANDEM_PROGRESS": "proxy"}, unset=SETTINGS,
    )  # fmt: skip
    assert busy.returncode == 0, busy.stderr
    assert settings_lines(busy) == [
        "tandem: progress proxy, collectives by Tandem, monitoring off (--monitor); "
        "--quiet hides this line"
    ]
    quiet = tandem("run", "--quiet", "--progress", "drive", "--mpi", "mpich", str(script))
    assert quiet.returncode == 0 and quiet.stderr == ""
    alone = tandem("run", "--no-tandem", "--mpi", "mpich", str(script))
    assert alone.returncode == 0 and alone.stderr == ""


def test_exec_takes_variables_and_monitoring_as_run_does(tmp_path):
    script = tmp_path / "show.sh"
    script.write_text('#!/bin/sh\necho "$GREETING|$TANDEM_MONITOR|$TANDEM_MONITOR_OUTPUT"\n')
    script.chmod(0o755)
    result = tandem(
        "exec", "--mpi", "mpich", "-e", "GREETING=hello there", "--monitor=job", str(script),
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"hello there|1|{tmp_path}/job\n"
    bare = tandem("exec", "--mpi", "mpich", "--monitor", str(script), cwd=tmp_path)
    assert bare.returncode == 0, bare.stderr
    assert bare.stdout == f"|1|{tmp_path}/tandem-monitor\n"
    wrong = tandem("exec", "--mpi", "mpich", "-e", "GREETING", str(script))
    assert wrong.returncode == 2
    assert "-e 'GREETING': expected NAME=VALUE" in wrong.stderr


LAUNCHED_BY = {
    "Open MPI": {"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"},
    "MPICH": {"PMI_RANK": "0", "PMI_SIZE": "2", "PMI_FD": "6"},
}


@pytest.mark.parametrize("launcher", ["Open MPI", "MPICH"])
@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_exec_under_the_other_mpis_launcher_warns(tmp_path, launcher, mpi):
    """Each process of a program started by the other MPI's launcher runs
    alone, as rank 0 of 1; rank 0 says so, naming both MPIs."""
    script = tmp_path / "ran.sh"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o755)
    launcher_env = LAUNCHED_BY[launcher]
    unset = [name for names in LAUNCHED_BY.values() for name in names]
    result = tandem("exec", "--mpi", mpi, str(script), env=launcher_env, unset=unset)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ran\n"
    family = build_for(mpi).family
    if family == launcher:
        assert result.stderr == ""
        return
    rank_variable = next(iter(launcher_env))
    assert result.stderr == (
        f"tandem: warning: {rank_variable} says that {launcher}'s launcher started {script}, "
        f"which runs with {family}: each of its processes runs alone, as rank 0 of 1; start "
        f"it with {build_for(mpi).launcher} or tandem run\n"
    )
    other_rank = {name: "1" if name == rank_variable else v for name, v in launcher_env.items()}
    quiet = tandem("exec", "--mpi", mpi, str(script), env=other_rank, unset=unset)
    assert quiet.returncode == 0 and quiet.stderr == ""  # rank 0 speaks for all


def test_run_help_says_what_run_does_and_shows_examples():
    result = tandem("run", "--help")
    assert result.returncode == 0
    text = result.stdout
    assert "with libtandem preloaded on every rank" in " ".join(text.split())
    assert "\nexamples:\n" in text
    for example in (
        "  tandem run -n 4 --progress drive -- ./app ",
        "  tandem run -n 4 --monitor=out/job ./app ",
        "  tandem run -n 2 --mpi mpich -- venv/bin/python script.py ",
        "  tandem run -n 2 --launcher-arg --mca --launcher-arg btl --launcher-arg self,tcp ./app\n",
    ):
        assert example in text  # as written, not refilled


COMMANDS = ["run", "exec", "bench", "report", "info"]


def test_help_names_the_works_it_follows_and_stays_in_the_repository():
    """The help said "the seed's" for the papers Tandem follows, which a user
    cannot look up; it names them, and no file outside the repository."""
    texts = {command: tandem(command, "--help").stdout for command in COMMANDS}
    texts["tandem"] = tandem("--help").stdout
    for command, text in texts.items():
        assert text.startswith("usage: tandem"), command
        assert "seed" not in text.lower(), command
        assert "../" not in text and "ARCHITECTURE" not in text, command
    top = " ".join(texts["tandem"].split())
    assert 'APSM (Wittmann et al., "Asynchronous MPI for the Masses")' in top
    assert "FastMPJ (Ramos et al." in top
    assert "Open MPI's monitoring (Bosilca et al." in top
    bench = " ".join(texts["bench"].split())
    assert "overlap: APSM's overlap test" in bench
    assert "halo: APSM's ghost-cell exchange" in bench
    assert "nbc: FastMPJ's micro" in bench  # argparse may break micro-benchmark
    assert "ioapp: FastMPJ's I/O application" in bench


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_run_launches_progress_processes_the_program_does_not_see(mpi):
    """--ghosts 1 launches a third process beside the 2 ranks; the program
    (tests/c/world.c) sees a world of 2, as without it."""
    program = build_for(mpi).directory / "tests" / "test_world"
    result = tandem("run", "-q", "-n", "2", "--ghosts", "1", "--mpi", mpi, str(program))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines().count("size 2") == 2 and result.stdout.endswith("== ok\n")
    dry = tandem("run", "-n", "2", "--ghosts", "1", "--mpi", mpi, "--dry-run", str(program))
    assert "TANDEM_GHOSTS" in dry.stdout and " 3 " in dry.stdout


def test_progress_processes_need_a_host_with_more_processes_and_tandem():
    program = build_for("mpich").directory / "tests" / "test_world"
    result = tandem("run", "-q", "-n", "1", "--mpi", "mpich", "-e", "TANDEM_GHOSTS=1", str(program))
    assert result.returncode == 1
    assert (
        "TANDEM_GHOSTS=1: a host runs only 1 process, and each needs more than 1: the "
        "application's ranks and 1 progress process (tandem run -n N --ghosts 1 launches N + 1 "
        "per host); stopping" in result.stderr
    )
    result = tandem("run", "-n", "2", "--ghosts", "1", "--no-tandem", str(program))
    assert "--ghosts needs Tandem" in result.stderr
    result = tandem("run", "-n", "2", "--ghosts", "65", str(program))
    assert "--ghosts 65: expected 0 to 64 progress processes per host" in result.stderr
