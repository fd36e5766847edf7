#!/usr/bin/env bash
# Launches of the heat stencil (MPI_Rget halos) on Open MPI over UCX across 2
# simulated hosts with Tandem's thread, counting those that hang (no exit in
# 20 s); the call stacks of a hung launch's ranks go to OUT/stacks-N.txt.
#
#   sudo bash docs/perf/rma/requests-race/repro.sh BUILDS N [PROGRESS] [OUT]
#
# BUILDS: a builds folder under the repository (build, or build/ab-old
# holding openmpi/ of another revision), so that the hosts' ranks see it.
set -u
B=$1 N=$2 P=${3:-drive} OUT=${4:-/tmp/requests-race}
mkdir -p "$OUT"
hung=0
for i in $(seq "$N"); do
    timeout -s INT 25 .venv/bin/tandem --builds "$B" run --mpi openmpi --hosts 2 --link 2gbit \
        -n 2 -e OMPI_MCA_pml=ucx -e TANDEM_PROGRESS="$P" \
        "$B/openmpi/tandem-bench-heat3d" 64 4 1 >"$OUT/launch.out" 2>&1 &
    pid=$!
    for _ in $(seq 40); do
        sleep 0.5
        kill -0 $pid 2>/dev/null || break
    done
    if kill -0 $pid 2>/dev/null; then
        hung=$((hung + 1))
        for rank in $(pgrep -x tandem-bench-he); do
            echo "-- pid $rank"
            timeout 20 gdb -p "$rank" -batch -ex "thread apply all bt 12" 2>/dev/null |
                grep -E "^#|^Thread"
        done >"$OUT/stacks-$i.txt"
    fi
    wait $pid 2>/dev/null
done
echo "$B ($P): $hung of $N hung"
