#!/bin/bash
# Post + wait of back-to-back small collectives over shared memory (loop.c):
# no Tandem at MPI_THREAD_MULTIPLE ('multiple'), the library built in
# $BEFORE (default /tmp/old/build) and this checkout's ('after'), both with
# TANDEM_PROGRESS=proxy TANDEM_COLL=tandem, alternating. One line per run:
#   round mpi ranks collective bytes config us
#   [NP=2] [BIND=core] bash docs/perf/waiter-spin/loop-ab.sh ROUNDS
# NP=4 BIND=none puts 4 ranks on this machine's 2 cores (oversubscribed).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
here=$(cd "$(dirname "$0")/../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc.openmpi -O2 -o "$work/loop-openmpi" "$here/docs/perf/waiter-spin/loop.c"
mpicc.mpich -O2 -o "$work/loop-mpich" "$here/docs/perf/waiter-spin/loop.c"
np=${NP:-2} bind=${BIND:-core} iters=${ITERS:-3000}
for r in $(seq 1 "${1:-3}"); do
 for mpi in openmpi mpich; do
  for coll in ${COLLS:-ibcast iallreduce}; do
   for bytes in ${SIZES:-8 65536}; do
    for cfg in multiple before after; do
     case $cfg in
      multiple) lib="" ;;
      before) lib=${BEFORE:-/tmp/old/build}/$mpi/libtandem.so ;;
      after) lib=$here/build/$mpi/libtandem.so ;;
     esac
     if [ $mpi = openmpi ]; then
      set -- mpirun.openmpi --oversubscribe -np "$np" --bind-to "$bind" -x MULTIPLE=1
      [ -n "$lib" ] && set -- "$@" -x LD_PRELOAD="$lib" -x TANDEM_PROGRESS=proxy -x TANDEM_COLL=tandem
     else
      set -- mpiexec.mpich -n "$np" -bind-to "$bind" -env MULTIPLE 1
      [ -n "$lib" ] && set -- "$@" -env LD_PRELOAD "$lib" -env TANDEM_PROGRESS proxy -env TANDEM_COLL tandem
     fi
     us=$(timeout 120 "$@" "$work/loop-$mpi" "$coll" "$bytes" "$iters" 2>/dev/null | tail -1)
     echo "$r $mpi $np $coll $bytes $cfg ${us:-NA}"
    done
   done
  done
 done
done
