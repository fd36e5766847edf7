#!/usr/bin/env bash
# MPI_Alltoallv (and MPI_Alltoall, for reference) of virtual ranks on 2
# simulated hosts (one core each, V ranks per core): this build's
# libtandem-virt (alltoallv's blocks up to 4 KiB by process) against an
# older copy in OLD/{openmpi,mpich} (one message per pair of ranks, loaded
# first through LD_LIBRARY_PATH), interleaved, ROUNDS rounds; and the real
# MPI's processes, one per host. Blocks of 1, 64, 512 and 2048 doubles (8 B,
# 512 B, 4 KiB, 16 KiB: the last above the limit, direct in both). As root:
#   bash docs/perf/virt/alltoallv-by-process/run.sh OLD [ROUNDS] > docs/perf/virt/alltoallv-by-process/a2av.json
set -u
OLD=$1
ROUNDS=${2:-3}
TANDEM=.venv/bin/tandem
for round in $(seq 1 "$ROUNDS"); do
    for mpi in mpich openmpi; do
        bench=build/$mpi/tandem-bench-virt-coll
        for block in 1 64 512 2048; do
            run() { # LABEL V [tandem run's arguments...]
                local label=$1 v=$2
                shift 2
                timeout 120 "$TANDEM" run -q --mpi "$mpi" --hosts 2 -n 2 "$@" 50 "$block" 2>/dev/null |
                    grep '"alltoall' |
                    sed "s/^{/{\"mpi\": \"$mpi\", \"build\": \"$label\", \"v\": $v, \"round\": $round, /"
            }
            run real 1 build/$mpi/tandem-bench-virt-coll-real
            for v in 4 16; do
                run old "$v" --cores 1 --virtual "$v" -e LD_LIBRARY_PATH="$OLD/$mpi" "$bench"
                run new "$v" --cores 1 --virtual "$v" "$bench"
            done
        done
    done
done
