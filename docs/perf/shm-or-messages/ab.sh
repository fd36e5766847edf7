#!/bin/bash
# The pure time (post + wait, bench/coll_overlap.c, slowest rank, median of
# TRIALS) of small nonblocking collectives over shared memory: native
# (no Tandem), Tandem with the slots forced (TANDEM_COLL_<NAME>=shared),
# Tandem as configured by default (auto), and Tandem with the slots off
# (TANDEM_COLL_SHM=0), one launch each in turn; one line per launch:
#   round mpi-npN collective bytes config pure_us overlap%
#   [MPIS="openmpi mpich"] [NP=2] [COLLS=...] [SIZES=...] [CFGS=...] [TRIALS=21] \
#       bash docs/perf/shm-or-messages/ab.sh ROUNDS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
here=$(cd "$(dirname "$0")/../../.." && pwd)
np=${NP:-2}
for r in $(seq 1 "${1:-3}"); do
 for mpi in ${MPIS:-openmpi mpich}; do
  b=$here/build/$mpi
  tandem="LD_PRELOAD=$b/libtandem.so TANDEM_PROGRESS=proxy TANDEM_COLL=tandem"
  for coll in ${COLLS:-ibcast iscatter iallreduce}; do
   for size in ${SIZES:-64 1024 4096 16384 65536}; do
    for cfg in ${CFGS:-native shared auto messages}; do
     case $cfg in
      native) env="";;
      shared) env="$tandem TANDEM_COLL_BCAST=shared TANDEM_COLL_SCATTER=shared TANDEM_COLL_ALLREDUCE=shared";;
      auto) env="$tandem";;
      messages) env="$tandem TANDEM_COLL_SHM=0";;
     esac
     if [ "$mpi" = openmpi ]; then
      pre=""; for kv in $env; do pre="$pre -x $kv"; done
      out=$(timeout 60 mpirun.openmpi --oversubscribe -n "$np" $pre "$b/tandem-bench-coll-overlap" "$coll" "$size" "${TRIALS:-21}" 2>/dev/null | grep '^{')
     else
      pre=""; for kv in $env; do pre="$pre -genv ${kv%%=*} ${kv#*=}"; done
      out=$(timeout 60 mpiexec.mpich -n "$np" $pre "$b/tandem-bench-coll-overlap" "$coll" "$size" "${TRIALS:-21}" 2>/dev/null | grep '^{')
     fi
     echo "$out" | python3 -c 'import json, sys
for d in map(json.loads, sys.stdin):
    print(*sys.argv[1:], "%.1f" % (d["pure_s"] * 1e6), round(d["overlap"]))' "$r" "$mpi-np$np" "$coll" "$size" "$cfg"
    done
   done
  done
 done
done
