#!/bin/bash
# The pure time (post + wait) of 64 KiB ibcast, iallreduce and iscatter on the
# shaped network (2 ranks, bench/coll_overlap.c), native against a library
# built elsewhere ($BEFORE/<mpi>/libtandem.so, default the worktree /tmp/old of
# docs/perf/host-node/ab-before-after.sh) and this checkout's, alternating;
# one line per run: round collective config pure_us overlap%.
#   MPI=openmpi|mpich [TRIALS=11] [SETTLE_US=0] [SIZE=65536] bash docs/perf/coll64-ab/ab.sh ROUNDS
# SETTLE_US: the pause before each timing (bench/coll_overlap.c) that lets the
# shaper's bucket fill, so that every timing starts from a rested network.
# As root, with the namespace tandem-net of ARCHITECTURE.md (tandem bench
# makes it).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=${MPI:-openmpi}
rounds=${1:-3}
here=$(cd "$(dirname "$0")/../../.." && pwd)
after=$here/build/$mpi; before=${BEFORE:-/tmp/old/build}/$mpi
for r in $(seq 1 $rounds); do
 for coll in ${COLLS:-ibcast iallreduce iscatter}; do
  for cfg in native before after; do
   case $cfg in native) lib="";; before) lib=$before/libtandem.so;; after) lib=$after/libtandem.so;; esac
   if [ $mpi = openmpi ]; then
     pre=""; [ -n "$lib" ] && pre="-x LD_PRELOAD=$lib -x TANDEM_PROGRESS=proxy -x TANDEM_COLL=tandem -x TANDEM_COLL_SHM=0"
     out=$(timeout 60 ip netns exec tandem-net mpirun.openmpi --oversubscribe -n 2 --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo $pre $after/tandem-bench-coll-overlap $coll ${SIZE:-65536} ${TRIALS:-11} ${SETTLE_US:-0} 2>/dev/null | grep '^{')
   else
     pre=""; [ -n "$lib" ] && pre="-genv LD_PRELOAD $lib -genv TANDEM_PROGRESS proxy -genv TANDEM_COLL tandem -genv TANDEM_COLL_SHM 0"
     out=$(timeout 60 ip netns exec tandem-net env UCX_TLS=self,tcp UCX_NET_DEVICES=lo MPIR_CVAR_NOLOCAL=1 mpiexec.mpich -n 2 $pre $after/tandem-bench-coll-overlap $coll ${SIZE:-65536} ${TRIALS:-11} ${SETTLE_US:-0} 2>/dev/null | grep '^{')
   fi
   echo "$out" | python3 -c 'import json,sys
for d in map(json.loads, sys.stdin): print(sys.argv[1], sys.argv[2], sys.argv[3], "%.1f" % (d["pure_s"]*1e6), round(d["overlap"]))' $r $coll $cfg
  done
 done
done
