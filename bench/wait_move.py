#!/usr/bin/env python3
"""The overlap benchmark with the progress thread moving to a lent CPU,
interleaved in the same rounds with native and the blocked rank spinning
(TANDEM_WAIT=spin: no CPU lent, as before lending). The runs of
docs/PERFORMANCE.md "Moving to a lent core" also had the thread stay where it
was (TANDEM_WAIT_MOVE=0, a variable since fixed at 1).

    sudo .venv/bin/python3 bench/wait_move.py --transports shm,tcp \\
        --sizes 1048576,4194304 --rounds 5 --trials 5 --out docs/perf/wait-move

Writes overlap.json, overlap.md and the plots into --out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from tandem.bench import Config, overlap
from tandem.builds import default_build_root, load_builds


def configs(build, transport: str) -> list[Config]:
    configs = [Config("native", False)]
    for strategy in ("drive", "proxy"):
        base = {"TANDEM_PROGRESS": strategy}
        configs += [
            Config(f"tandem-{strategy}", True, base),
            Config(f"tandem-{strategy}-spin", True, dict(base, TANDEM_WAIT="spin")),
        ]
    return configs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transports", default="shm,tcp")
    parser.add_argument("--sizes", default="1048576,4194304")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=20)
    parser.add_argument("--out", type=Path, default=Path("docs/perf/wait-move"))
    args = parser.parse_args()
    builds = [b for b in load_builds(default_build_root()) if not b.sanitize]
    sizes = [int(s) for s in args.sizes.split(",")]
    path = overlap(
        builds,
        args.transports.split(","),
        sizes,
        args.rounds,
        args.trials,
        args.out,
        "2gbit",
        args.timeout,
        configs_of=configs,
    )
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
