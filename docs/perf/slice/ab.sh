#!/bin/bash
# TANDEM_PROGRESS_SLICE_US=0 (the kernel's slice) against the default (100 us),
# alternating, 2 ranks, this checkout's build:
#  - OSU overlap of 1 and 4 MiB ibcast, iscatter, iallreduce on the shaped
#    network, rested (bench/coll_overlap.c, 5 trials, 2049 us settle);
#  - the overlap benchmark (bench/overlap.c), 4 MiB, shaped network, the three
#    variants, and plain loopback TCP, both computing, with native;
# with TANDEM_PROGRESS=proxy and with drive + TANDEM_POLL=event.
# One "== what" line, then one line per configuration.
#   bash docs/perf/slice/ab.sh ROUNDS > docs/perf/slice/ab.txt
# WHAT=pure64: instead, the pure time of 64 KiB ibcast, ialltoall and
# iscatter (31 rested trials), native and TANDEM_PROGRESS=proxy with both slices.
#   WHAT=pure64 bash docs/perf/slice/ab.sh 5 > docs/perf/slice/pure64.txt
# As root, with the namespace tandem-net of ARCHITECTURE.md.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
here=$(cd "$(dirname "$0")/../../.." && pwd)
CONFIGS="PROGRESS=proxy,PROGRESS_SLICE_US=0 PROGRESS=proxy PROGRESS=drive,POLL=event,PROGRESS_SLICE_US=0 PROGRESS=drive,POLL=event"

# launch MPI NET CONFIG PROGRAM ARGS...: the program's last output line
launch() {
  local mpi=$1 net=$2 config=$3; shift 3
  local pre=() env=()
  [ "$net" = shaped ] && pre=(ip netns exec tandem-net)
  if [ "$mpi" = mpich ]; then
    if [ "$config" != native ]; then
      env=(-genv LD_PRELOAD "$here/build/mpich/libtandem.so" -genv TANDEM_COLL tandem -genv TANDEM_COLL_SHM 0)
      for kv in ${config//,/ }; do env+=(-genv "TANDEM_${kv%%=*}" "${kv#*=}"); done
    fi
    timeout 60 "${pre[@]}" env UCX_TLS=self,tcp UCX_NET_DEVICES=lo MPIR_CVAR_NOLOCAL=1 \
      mpiexec.mpich -n 2 "${env[@]}" "$here/build/mpich/$@" 2>&1 | tail -1
  else
    if [ "$config" != native ]; then
      env=(-x "LD_PRELOAD=$here/build/openmpi/libtandem.so" -x TANDEM_COLL=tandem -x TANDEM_COLL_SHM=0)
      for kv in ${config//,/ }; do env+=(-x "TANDEM_$kv"); done
    fi
    timeout 60 "${pre[@]}" mpirun.openmpi --oversubscribe -n 2 --mca pml ob1 --mca btl self,tcp \
      --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo "${env[@]}" \
      "$here/build/openmpi/$@" 2>&1 | tail -1
  fi
}

# show CONFIG < JSON line: one summary line
show() {
  python3 -c 'import json, sys
line = sys.stdin.read(); i = line.find("{")
if i < 0: print("%-48s %s" % (sys.argv[1], line.strip()[:80])); sys.exit()
d = json.loads(line[i:])
if "overlap" in d: print("%-48s pure %8.0f us ov %3.0f%%" % (sys.argv[1], d["pure_s"] * 1e6, d["overlap"]))
else: print("%-48s avail %5.1f%% slow %+6.1f%%" % (sys.argv[1], d["availability"] * 100, d["slowdown"] * 100))' "$1"
}

if [ "${WHAT:-}" = pure64 ]; then
  for r in $(seq 1 "${1:-5}"); do
    for mpi in openmpi mpich; do
      for coll in ibcast ialltoall iscatter; do
        echo "== pure64 $mpi $coll round $r"
        for c in native PROGRESS=proxy,PROGRESS_SLICE_US=0 PROGRESS=proxy; do
          launch $mpi shaped "$c" tandem-bench-coll-overlap $coll 65536 31 2049 | show "$c"
        done
      done
    done
  done
  exit
fi

for r in $(seq 1 "${1:-3}"); do
  for mpi in openmpi mpich; do
    for coll in ibcast iscatter iallreduce; do
      for size in 1048576 4194304; do
        echo "== coll $mpi $coll $size round $r"
        for c in $CONFIGS; do launch $mpi shaped "$c" tandem-bench-coll-overlap $coll $size 5 2049 | show "$c"; done
      done
    done
    for v in both isend_recv irecv_send; do
      echo "== p2p-shaped $mpi $v 4194304 round $r"
      for c in $CONFIGS; do launch $mpi shaped "$c" tandem-bench-overlap $v 4194304 5 | show "$c"; done
    done
    echo "== p2p-tcp $mpi both 4194304 round $r"
    for c in native $CONFIGS; do launch $mpi tcp "$c" tandem-bench-overlap both 4194304 5 | show "$c"; done
  done
done
