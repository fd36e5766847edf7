#!/bin/bash
# The thread levels of level.c on both MPIs, and the same program under
# Tandem's drive strategy, over shared memory, 2 ranks
# bound to the 2 cores, the levels alternating in each round. One line per
# run: round mpi level provided latency_median_us latency_min_us rate_per_s
# (MPICH's MPI_STATUSES_IGNORE is (MPI_Status *)1, which GCC's
# -Wstringop-overflow takes for an array of no room.)
#   [BEFORE=DIR] bash docs/perf/thread-level/run.sh ROUNDS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd) # its libraries: make build
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc.openmpi -O2 -Wno-stringop-overflow -o "$work/level-openmpi" "$here/level.c" -lpthread
mpicc.mpich -O2 -Wno-stringop-overflow -o "$work/level-mpich" "$here/level.c" -lpthread
for r in $(seq 1 "${1:-3}"); do
 for level in single single-thread serialized serialized-lock multiple; do
  line=$(mpirun.openmpi --oversubscribe -np 2 --bind-to core -x LEVEL=$level "$work/level-openmpi")
  echo "$r openmpi $line"
  line=$(mpiexec.mpich -n 2 -bind-to core -env LEVEL $level "$work/level-mpich")
  echo "$r mpich $line"
 done
 # The program at MPI_THREAD_SINGLE under Tandem's drive strategy (8-byte
 # messages stay under the eager limit: the thread sleeps throughout); with
 # BEFORE=DIR also under the libraries built in DIR (an A/B of a change).
 for lib in "tandem-drive|$top/build" ${BEFORE:+"tandem-drive-before|$BEFORE"}; do
  name=${lib%%|*} dir=${lib#*|}
  line=$(mpirun.openmpi --oversubscribe -np 2 --bind-to core -x LEVEL=single \
   -x LD_PRELOAD="$dir/openmpi/libtandem.so" -x TANDEM_PROGRESS=drive "$work/level-openmpi")
  echo "$r openmpi $name${line#single}"
  line=$(mpiexec.mpich -n 2 -bind-to core -env LEVEL single \
   -env LD_PRELOAD "$dir/mpich/libtandem.so" -env TANDEM_PROGRESS drive "$work/level-mpich")
  echo "$r mpich $name${line#single}"
 done
done
