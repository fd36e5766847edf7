#!/bin/sh
# Bandwidth between virtual ranks of two processes (one rank each, one core
# each) against the real MPI's two processes, at several message sizes:
# the runtime of OLD_LIB_DIR (a build's folder holding libtandem-virt.so)
# and of this checkout's build, interleaved, TRIALS times each.
#
#   sh docs/perf/virt/between-processes/ab.sh OLD_OPENMPI_DIR OLD_MPICH_DIR [TRIALS]
#
# Prints one line per run: MPI, size, which, GB/s; then medians.
set -eu
old_openmpi=$1 old_mpich=$2 trials=${3:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tandem=.venv/bin/tandem
out=$(mktemp)
for t in $(seq "$trials"); do
    for mpi in openmpi mpich; do
        eval old=\$old_$mpi
        for bytes in 16384 65536 262144 1048576 4194304; do
            transfers=$((200 * 1048576 / bytes)); [ $transfers -gt 2000 ] && transfers=2000
            for which in old new real; do
                case $which in
                old) line=$($tandem run -q --mpi $mpi -n 2 --virtual 1 --cores 1 -e LD_LIBRARY_PATH="$old" \
                        build/$mpi/tandem-bench-virt-pingpong 1000 $transfers $bytes | tail -1) ;;
                new) line=$($tandem run -q --mpi $mpi -n 2 --virtual 1 --cores 1 \
                        build/$mpi/tandem-bench-virt-pingpong 1000 $transfers $bytes | tail -1) ;;
                real) line=$($tandem run -q --no-tandem --mpi $mpi -n 2 \
                        build/$mpi/tandem-bench-virt-pingpong-real 1000 $transfers $bytes | tail -1) ;;
                esac
                gbs=$(echo "$line" | sed 's/.*"bandwidth_gbs": \([0-9.]*\).*/\1/')
                echo "$mpi $bytes $which $gbs" | tee -a "$out"
            done
        done
    done
done
echo "median GB/s over $trials trials (old / new / the real MPI's processes):"
python3 - "$out" <<'PY'
import sys, statistics, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    mpi, size, which, gbs = line.split()
    runs[mpi, int(size), which].append(float(gbs))
for mpi in ("openmpi", "mpich"):
    for size in sorted({k[1] for k in runs if k[0] == mpi}):
        m = {w: statistics.median(runs[mpi, size, w]) for w in ("old", "new", "real")}
        print(f"{mpi:8} {size // 1024:5d} KiB  old {m['old']:6.2f}  new {m['new']:6.2f}  "
              f"real {m['real']:6.2f}  new/old {m['new'] / m['old']:5.2f}x  new/real {m['new'] / m['real']:4.2f}")
PY
rm -f "$out"
