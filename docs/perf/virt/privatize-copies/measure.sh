#!/bin/sh
# What a copy of the program per virtual rank costs (tandem cc --privatize
# on processes of several cores): the one-way 8-byte ping-pong between two
# ranks of one core (bench/virt_pingpong.c with a written 4 KiB global, one
# byte written per message), privatized by copies (2 cores), by swapping
# (1 core) and not at all; and the time of a whole run of 2 cores x V ranks
# of a program that only starts and ends, with copies and without.
#
#   sh docs/perf/virt/privatize-copies/measure.sh MPI [TRIALS]
set -eu
mpi=$1 trials=${2:-5}
tandem=.venv/bin/tandem
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed -e 's|^int main(int argc, char \*\*argv)|char written[4096];\n\nint main(int argc, char **argv)|' \
    -e 's|                MPI_Send(small, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);|                written[i \& 4095]++;\n&|' \
    bench/virt_pingpong.c > "$work/pingpong.c"
grep -q "written\[i & 4095\]++" "$work/pingpong.c"
$tandem cc -q --mpi $mpi "$work/pingpong.c" -O2 -o "$work/shared" 2>/dev/null || \
    $tandem cc --mpi $mpi "$work/pingpong.c" -O2 -o "$work/shared" 2>/dev/null
$tandem cc --mpi $mpi --privatize "$work/pingpong.c" -O2 -o "$work/private" 2>/dev/null
printf '#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n' > "$work/empty.c"
$tandem cc --mpi $mpi "$work/empty.c" -o "$work/empty" 2>/dev/null
$tandem cc --mpi $mpi --privatize "$work/empty.c" -o "$work/empty-private" 2>/dev/null
for t in $(seq "$trials"); do
    for which in shared-c2 private-c2 private-c1 shared-c1; do
        program=${which%-c*} cores=${which##*-c}
        us=$($tandem run -q --mpi $mpi -nc $cores -nv 2 "$work/$program" 200000 1 | tail -1 |
             sed 's/.*"latency_us": \([0-9.]*\).*/\1/')
        echo "pingpong $which $us"
    done
    for v in 8 32; do
        for which in empty empty-private; do
            start=$(date +%s%N)
            $tandem run -q --mpi $mpi -nc 2 -nv $v "$work/$which" >/dev/null
            echo "run-v$v $which $(( ($(date +%s%N) - start) / 1000000 ))"
        done
    done
done
