#!/bin/bash
# Transfers alone (post + wait, no work) of bench/overlap.c over loopback TCP
# that took longer than 1 ms: a library built elsewhere ($BEFORE/<mpi>/libtandem.so,
# default /tmp/old/build) against this checkout's, alternating, TANDEM_PROGRESS=proxy.
# One line per run: round mpi variant old|new MiB trials slow(>1ms) median_ms max_ms
#   [MPIS="openmpi mpich"] [VARIANTS="isend_recv irecv_send"] [SIZE=1048576] [TRIALS=21] \
#     bash docs/perf/stuck/stalls.sh ROUNDS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
here=$(cd "$(dirname "$0")/../../.." && pwd)
for r in $(seq 1 "${1:-3}"); do
for mpi in ${MPIS:-openmpi mpich}; do
for v in ${VARIANTS:-isend_recv irecv_send}; do
for lib in old new; do
  L=$here/build/$mpi/libtandem.so; [ $lib = old ] && L=${BEFORE:-/tmp/old/build}/$mpi/libtandem.so
  if [ $mpi = openmpi ]; then
    cmd="mpirun.openmpi --oversubscribe -n 2 --mca pml ob1 --mca btl self,tcp -x LD_PRELOAD=$L -x TANDEM_PROGRESS=proxy"
  else
    cmd="env UCX_TLS=self,tcp UCX_NET_DEVICES=lo MPIR_CVAR_NOLOCAL=1 mpiexec.mpich -n 2 -genv LD_PRELOAD $L -genv TANDEM_PROGRESS proxy"
  fi
  timeout 60 $cmd $here/build/$mpi/tandem-bench-overlap $v ${SIZE:-1048576} ${TRIALS:-21} 2>/dev/null |
    grep '^{' | python3 -c 'import json, statistics, sys
for d in map(json.loads, sys.stdin):
    t = d["transfers_s"]
    print(*sys.argv[1:], d["bytes"] >> 20, len(t), sum(x > 1e-3 for x in t),
          round(1e3 * statistics.median(t), 3), round(1e3 * max(t), 3))' $r $mpi $v $lib
done; done; done; done
