#!/bin/bash
# Pure time and OSU overlap of 2-rank nonblocking collectives (bench/coll_overlap.c),
# native against a Tandem library built elsewhere ($BEFORE/<mpi>/libtandem.so,
# default /tmp/old/build: `git worktree add /tmp/old <commit> && make -C /tmp/old build`)
# and this checkout's, alternating; TANDEM_PROGRESS=proxy TANDEM_COLL=tandem, the
# shared-memory slots on shm only. One line per size and run:
#   round mpi transport collective native|old|new MiB pure_us overlap%
# EXTRA="VAR=VALUE ...": more settings for the Tandem runs; NP: ranks (default 2);
# SETTLE_US: the pause before each timing (bench/coll_overlap.c; 0).
#   [MPIS="openmpi mpich"] [TRS="shm shaped"] [COLLS=...] [SIZES=1048576,4194304] [TRIALS=7] \
#     bash docs/perf/yield-wait/coll-ab.sh ROUNDS | python3 docs/perf/yield-wait/summary.py
# As root for the shaped network (the namespace tandem-net; tandem bench makes it).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
here=$(cd "$(dirname "$0")/../../.." && pwd)
for r in $(seq 1 "${1:-3}"); do
for mpi in ${MPIS:-openmpi mpich}; do
for tr in ${TRS:-shm shaped}; do
for c in ${COLLS:-iallreduce ibcast iscatter ialltoall}; do
for lib in native old new; do
  L=$here/build/$mpi/libtandem.so; [ $lib = old ] && L=${BEFORE:-/tmp/old/build}/$mpi/libtandem.so
  ns=""; [ $tr = shaped ] && ns="ip netns exec tandem-net"
  shm=1; [ $tr != shm ] && shm=0
  if [ $mpi = openmpi ]; then
    args="--oversubscribe -n ${NP:-2}"
    [ $tr != shm ] && args="$args --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"
    pre=""; [ $lib != native ] && pre="-x LD_PRELOAD=$L -x TANDEM_PROGRESS=proxy -x TANDEM_COLL=tandem -x TANDEM_COLL_SHM=$shm"
    [ $lib != native ] && for e in $EXTRA; do pre="$pre -x $e"; done
    cmd="$ns mpirun.openmpi $args $pre"
  else
    envs=""; [ $tr != shm ] && envs="UCX_TLS=self,tcp UCX_NET_DEVICES=lo MPIR_CVAR_NOLOCAL=1"
    pre=""; [ $lib != native ] && pre="-genv LD_PRELOAD $L -genv TANDEM_PROGRESS proxy -genv TANDEM_COLL tandem -genv TANDEM_COLL_SHM $shm"
    [ $lib != native ] && for e in $EXTRA; do pre="$pre -genv ${e%%=*} ${e#*=}"; done
    cmd="$ns env $envs mpiexec.mpich -n ${NP:-2} $pre"
  fi
  timeout 90 $cmd $here/build/$mpi/tandem-bench-coll-overlap $c ${SIZES:-1048576,4194304} ${TRIALS:-7} ${SETTLE_US:-0} 2>/dev/null |
    grep '^{' | python3 -c 'import json, sys
for d in map(json.loads, sys.stdin):
    print(*sys.argv[1:], d["bytes"] >> 20, "%.1f" % (d["pure_s"] * 1e6), round(d["overlap"]))' $r $mpi $tr $c $lib
done; done; done; done; done
