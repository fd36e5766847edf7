#!/bin/bash
# Availability and compute slowdown of the seed's overlap variants (bench/overlap.c),
# TANDEM_PROGRESS=proxy with the defaults, a Tandem library built elsewhere
# ($BEFORE/<mpi>/libtandem.so, default /tmp/old/build) against this checkout's,
# alternating. One line per size and run:
#   round mpi transport variant old|new MiB availability% slowdown% transfer_ms
#   [MPIS="openmpi mpich"] [TRS="shm tcp shaped"] [SIZES=1048576,4194304] [TRIALS=5] \
#     bash docs/perf/yield-wait/p2p-ab.sh ROUNDS | python3 docs/perf/yield-wait/summary.py
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
here=$(cd "$(dirname "$0")/../../.." && pwd)
for r in $(seq 1 "${1:-3}"); do
for mpi in ${MPIS:-openmpi mpich}; do
for tr in ${TRS:-shm tcp shaped}; do
for v in isend_recv irecv_send both; do
for lib in old new; do
  L=$here/build/$mpi/libtandem.so; [ $lib = old ] && L=${BEFORE:-/tmp/old/build}/$mpi/libtandem.so
  ns=""; [ $tr = shaped ] && ns="ip netns exec tandem-net"
  if [ $mpi = openmpi ]; then
    args="--oversubscribe -n 2"
    [ $tr != shm ] && args="$args --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"
    cmd="$ns mpirun.openmpi $args -x LD_PRELOAD=$L -x TANDEM_PROGRESS=proxy"
  else
    envs=""; [ $tr != shm ] && envs="UCX_TLS=self,tcp UCX_NET_DEVICES=lo MPIR_CVAR_NOLOCAL=1"
    cmd="$ns env $envs mpiexec.mpich -n 2 -genv LD_PRELOAD $L -genv TANDEM_PROGRESS proxy"
  fi
  timeout 60 $cmd $here/build/$mpi/tandem-bench-overlap $v ${SIZES:-1048576,4194304} ${TRIALS:-5} 2>/dev/null |
    grep '^{' | python3 -c 'import json, sys
for d in map(json.loads, sys.stdin):
    print(*sys.argv[1:], d["bytes"] >> 20, round(100 * d["availability"]), round(100 * d["slowdown"]),
          round(1e3 * d["transfer_s"], 3))' $r $mpi $tr $v $lib
done; done; done; done; done
