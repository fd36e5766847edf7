#!/usr/bin/env bash
# Whether MPI_THREAD_MULTIPLE alone makes Open MPI's puts across hosts slow
# (osc/ucx): SMB's transfer alone on 2 simulated hosts, the program without
# Tandem at its own level (SINGLE) and at MULTIPLE (OMPI_MPI_THREAD_LEVEL=3,
# with the mutex Tandem asks of UCX beside threads), interleaved rounds.
#
#   sudo bash docs/perf/ghost-put/thread-level.sh [ROUNDS]   (from the repository root)
set -euo pipefail
ROUNDS=${1:-3}
OUT=$(mktemp -d /tmp/ghost-put-level.XXXXXX)
for round in $(seq "$ROUNDS"); do
    for level in single multiple; do
        extra=()
        [ "$level" = multiple ] && extra=(-e OMPI_MPI_THREAD_LEVEL=3 -e UCX_USE_MT_MUTEX=y)
        .venv/bin/tandem bench smb --mpi openmpi --transports hosts --hosts 2 --link 10gbit \
            --sizes 1048576,4194304 --trials 5 --rounds 1 "${extra[@]}" \
            --out "$OUT/$level-$round" >/dev/null 2>&1
        python3 - "$OUT/$level-$round/smb.json" "$level" "$round" <<'PY'
import json, sys
path, level, rnd = sys.argv[1:]
for s in json.load(open(path))["summary"]:
    if s["config"] in ("native", "tandem-ghosts"):
        print(f"round {rnd} {level:8} {s['config']:14} {s['op']} {s['bytes'] >> 20} MiB "
              f"alone {1e3 * s['base_s']:.2f} ms")
PY
    done
done
