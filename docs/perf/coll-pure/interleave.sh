#!/usr/bin/env bash
# Pure time of MPICH's nonblocking collectives, 2 ranks over shared memory:
# native, Tandem's schedules under drive and proxy, interleaved rounds
# (bench/coll_overlap.c, 50 trials each).
#
#   bash docs/perf/coll-pure/interleave.sh [ROUNDS [COLLECTIVES [SIZES]]]   (after make build)
set -euo pipefail
ROUNDS=${1:-3} COLLS=${2:-ibcast} SIZES=${3:-1048576,4194304}
B=$(cd "$(dirname "$0")/../../.." && pwd)/build/mpich
for round in $(seq "$ROUNDS"); do
    for config in native drive proxy; do
        with=()
        [ "$config" = native ] ||
            with=(-genv LD_PRELOAD "$B/libtandem.so" -genv TANDEM_PROGRESS "$config" -genv TANDEM_COLL tandem)
        mpiexec.mpich -n 2 "${with[@]}" "$B/tandem-bench-coll-overlap" "$COLLS" "$SIZES" 50 0 |
            python3 -c "
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    print(f\"round $round $config {d['collective']} {d['bytes']} pure {d['pure_s'] * 1e6:.1f} us\")"
    done
done
