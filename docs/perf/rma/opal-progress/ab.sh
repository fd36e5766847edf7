#!/usr/bin/env bash
# A/B of two builds on the truly passive get, Open MPI on UCX across 2
# simulated hosts (2 Gbit/s), 1 MiB, the target computing 0.5 s: the
# builds' rounds interleaved.
#
#   sudo bash docs/perf/rma/opal-progress/ab.sh OLD_BUILDS [ROUNDS]
#
# OLD_BUILDS: a builds folder of the other revision under the repository
# (build/ab-old holding openmpi/ from a clone's build/), so that the hosts'
# ranks see it; the new one is build/.
set -euo pipefail
OLD=$1 ROUNDS=${2:-3}
for round in $(seq "$ROUNDS"); do
    for which in new old; do
        builds=build
        [ "$which" = old ] && builds=$OLD
        out=$(mktemp -d /tmp/opal-progress.XXXXXX)
        .venv/bin/tandem --builds "$builds" bench rma --mpi openmpi --transports hosts --hosts 2 \
            --link 2gbit --sizes 1048576 --work 0.5 --windows allocate --rounds 1 --trials 3 \
            --out "$out" >/dev/null 2>&1
        echo "== $which round $round"
        grep -E "1 MiB" "$out/rma.md" | grep -v ghosts |
            awk -F'|' '{print $6, "pure", $7, "busy", $8, "busy/pure", $9}'
    done
done
