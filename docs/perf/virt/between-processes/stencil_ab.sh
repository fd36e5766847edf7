#!/bin/sh
# The stencil of tandem bench virt (8192 x 128, kmax 4, halo 2, blocking
# exchange) as virtual ranks on 2 simulated hosts of one core each, with the
# runtime of OLD_DIR/MPI (a folder holding an older libtandem-virt.so, under
# this checkout: the hosts see only it) and this checkout's, interleaved.
#
#   sudo sh docs/perf/virt/between-processes/stencil_ab.sh OLD_DIR [ROUNDS [LINK [EXCHANGE]]]
#
# One line per run (MPI, V, which, ms per step), then medians.
set -eu
old=$1 rounds=${2:-3} link=${3:-1gbit:16kb} exchange=${4:-blocking}
tandem=.venv/bin/tandem
out=$(mktemp)
for r in $(seq "$rounds"); do
    for mpi in openmpi mpich; do
        for v in 1 2 4 8; do
            for which in old new; do
                lib=""
                [ $which = old ] && lib="-e LD_LIBRARY_PATH=$old/$mpi"
                line=$($tandem run -q --mpi $mpi --hosts 2 --link "$link" -nc 1 -nv $v $lib \
                    build/$mpi/tandem-bench-virt-stencil --grid 8192,128 --kmax 4 --halo 2 \
                    --steps 10 --trials 5 --exchange "$exchange" --cores 2 | tail -1)
                ms=$(echo "$line" | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["step_s"]*1e3, 3))')
                echo "$mpi $v $which $ms" | tee -a "$out"
            done
        done
    done
done
echo "median ms per step over $rounds rounds ($exchange, link $link):"
python3 - "$out" <<'PY'
import sys, statistics, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    mpi, v, which, ms = line.split()
    runs[mpi, int(v), which].append(float(ms))
for mpi in ("openmpi", "mpich"):
    for v in (1, 2, 4, 8):
        o, n = statistics.median(runs[mpi, v, "old"]), statistics.median(runs[mpi, v, "new"])
        print(f"{mpi:8} V={v}  old {o:6.2f}  new {n:6.2f}  new/old {n / o:4.2f}")
PY
rm -f "$out"
