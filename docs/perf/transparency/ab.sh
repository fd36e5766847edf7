#!/usr/bin/env bash
# What the transparency fixes cost the collectives: the same programs with the
# library before them (BEFORE: a build root holding mpich/ and openmpi/ built
# from the commit before) and after (AFTER, default build/), alternating, for
# ROUNDS rounds; Tandem's collectives on (TANDEM_COLL and TANDEM_COLL_BLOCKING
# tandem, the proxy strategy), shared memory, 2 and 4 ranks (MPIS and RANKS
# narrow it: MPIS=openmpi RANKS=4). The library that runs first alternates
# from round to round.
#   BEFORE=/tmp/base/build bash docs/perf/transparency/ab.sh [ROUNDS] > raw.jsonl
#   python3 docs/perf/transparency/summary.py raw.jsonl
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
rounds=${1:-5}
after=${AFTER:-$root/build}
: "${BEFORE:?BEFORE=build root of the library before the fixes}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpicc.openmpi -O2 -o "$tmp/loop-openmpi" "$here/loop.c"
mpicc.mpich -O2 -o "$tmp/loop-mpich" "$here/loop.c"
settings=(TANDEM_PROGRESS=proxy TANDEM_COLL=tandem TANDEM_COLL_BLOCKING=tandem)
launch() { # mpi ranks library program args...
    local mpi=$1 n=$2 lib=$3
    shift 3
    if [ "$mpi" = openmpi ]; then
        local envs=()
        for s in "${settings[@]}" "LD_PRELOAD=$lib"; do envs+=(-x "$s"); done
        mpirun.openmpi --oversubscribe --bind-to none -n "$n" "${envs[@]}" "$@"
    else
        local envs=()
        for s in "${settings[@]}" "LD_PRELOAD=$lib"; do envs+=(-genv "${s%%=*}" "${s#*=}"); done
        mpiexec.mpich -n "$n" "${envs[@]}" "$@"
    fi
}
for round in $(seq "$rounds"); do
    order="before after"
    [ $((round % 2)) = 0 ] && order="after before"
    for mpi in ${MPIS:-mpich openmpi}; do
        for n in ${RANKS:-2 4}; do
            for which in $order; do
                lib=$([ $which = before ] && echo "$BEFORE/$mpi/libtandem.so" || echo "$after/$mpi/libtandem.so")
                tag="\"round\": $round, \"mpi\": \"$mpi\", \"library\": \"$which\", "
                launch "$mpi" "$n" "$lib" "$tmp/loop-$mpi" 51 | sed "s/^{/{$tag/"
                for coll in bcast scatter; do
                    launch "$mpi" "$n" "$lib" "$after/$mpi/tandem-bench-coll-seed" "$coll" 8,1024,65536 51 |
                        sed "s/^{/{$tag/"
                done
            done
        done
    done
done
