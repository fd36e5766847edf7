#!/bin/bash
# Availability / slowdown / transfer alone (bench/overlap.c) of several
# Tandem configurations, alternating, TANDEM_PROGRESS=proxy: each
# configuration is NAME|LIBRARY_BUILD_DIR|K=V,K=V (the library is
# LIBRARY_BUILD_DIR/<mpi>/libtandem.so). One line per size and run:
#   round mpi transport variant name MiB availability% slowdown% transfer_ms
#   CFGS="old|/tmp/old/build| new|$PWD/build|" [MPIS=...] [TRS="shm tcp"] \
#     [VS="isend_recv irecv_send"] [SIZES=1048576,4194304] [TRIALS=5] \
#     bash docs/perf/lent-pull/cfg-ab.sh ROUNDS | python3 docs/perf/yield-wait/summary.py
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
here=$(cd "$(dirname "$0")/../../.." && pwd)
for r in $(seq 1 "${1:-3}"); do
for mpi in ${MPIS:-openmpi mpich}; do
for tr in ${TRS:-shm}; do
for v in ${VS:-irecv_send}; do
for cfg in $CFGS; do
  IFS='|' read -r name libdir envs <<< "$cfg"
  L=$libdir/$mpi/libtandem.so
  E="TANDEM_PROGRESS=proxy ${envs//,/ }"
  ns=""; [ $tr = shaped ] && ns="ip netns exec tandem-net"
  if [ $mpi = openmpi ]; then
    args="--oversubscribe -n 2"
    [ $tr != shm ] && args="$args --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"
    xs=""; for kv in $E; do xs="$xs -x $kv"; done
    cmd="$ns mpirun.openmpi $args -x LD_PRELOAD=$L $xs"
  else
    ev=""; [ $tr != shm ] && ev="UCX_TLS=self,tcp UCX_NET_DEVICES=lo MPIR_CVAR_NOLOCAL=1"
    gs=""; for kv in $E; do gs="$gs -genv ${kv%%=*} ${kv#*=}"; done
    cmd="$ns env $ev mpiexec.mpich -n 2 -genv LD_PRELOAD $L $gs"
  fi
  timeout 60 $cmd $here/build/$mpi/tandem-bench-overlap $v ${SIZES:-1048576,4194304} ${TRIALS:-5} 2>/dev/null |
    grep '^{' | python3 -c 'import json, sys
for d in map(json.loads, sys.stdin):
    print(*sys.argv[1:], d["bytes"] >> 20, round(100 * d["availability"]), round(100 * d["slowdown"]),
          round(1e3 * d["transfer_s"], 3))' $r $mpi $tr $v $name
done; done; done; done; done
