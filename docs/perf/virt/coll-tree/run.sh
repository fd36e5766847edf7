#!/usr/bin/env bash
# The small collectives of virtual ranks on 2 simulated hosts (one core
# each, V ranks per core), this build's libtandem-virt (binomial trees)
# against an older copy in OLD/{openmpi,mpich} (linear collectives, loaded
# first through LD_LIBRARY_PATH), interleaved, ROUNDS rounds; and the real
# MPI's processes, one per host, as the anchor. As root:
#   bash docs/perf/virt/coll-tree/run.sh OLD [ROUNDS] > docs/perf/virt/coll-tree/coll.json
set -u
OLD=$1
ROUNDS=${2:-3}
TANDEM=.venv/bin/tandem
for round in $(seq 1 "$ROUNDS"); do
    for mpi in mpich openmpi; do
        bench=build/$mpi/tandem-bench-virt-coll
        run() { # LABEL V [tandem run's arguments...]
            local label=$1 v=$2
            shift 2
            timeout 120 "$TANDEM" run -q --mpi "$mpi" --hosts 2 -n 2 "$@" 100 2>/dev/null |
                grep '^{' | sed "s/^{/{\"mpi\": \"$mpi\", \"build\": \"$label\", \"v\": $v, \"round\": $round, /"
        }
        run real 1 build/$mpi/tandem-bench-virt-coll-real
        for v in 1 8 32; do
            run old "$v" --cores 1 --virtual "$v" -e LD_LIBRARY_PATH="$OLD/$mpi" "$bench"
            run new "$v" --cores 1 --virtual "$v" "$bench"
        done
    done
done
