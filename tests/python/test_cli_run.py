"""What `tandem run` and `tandem exec` say and take: the line that says what
Tandem does in a run, a dry run that can be pasted into a shell, launcher
arguments that start with a dash, the help, and exec's options and warning."""

from __future__ import annotations

import conftest  # noqa: F401  (puts python/ on sys.path)
import pytest
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
