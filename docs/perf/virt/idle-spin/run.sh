#!/usr/bin/env bash
# The 8-byte ping-pong between virtual ranks of two cores of one process,
# this build's libtandem-virt against an older copy in OLD/{openmpi,mpich}
# (loaded first through LD_LIBRARY_PATH), 5 interleaved rounds:
#   bash docs/perf/virt/idle-spin/run.sh OLD > docs/perf/virt/idle-spin/pingpong.json
set -u
OLD=$1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for M in openmpi mpich; do
    B=build/$M/tandem-bench-virt-pingpong
    for i in 1 2 3 4 5; do
        for v in old new; do
            if [ $M = openmpi ]; then
                L=()
                [ $v = old ] && L=(-x LD_LIBRARY_PATH="$OLD/openmpi")
                R=$(timeout 60 mpirun.openmpi -n 1 --bind-to none "${L[@]}" -x TANDEM_VIRT_CORES=2 \
                    -x TANDEM_VIRT_RANKS=1 "$B" 20000 10 2>/dev/null | tail -1)
            else
                L=()
                [ $v = old ] && L=(-genv LD_LIBRARY_PATH "$OLD/mpich")
                R=$(timeout 60 mpiexec.mpich -n 1 "${L[@]}" -genv TANDEM_VIRT_CORES 2 \
                    -genv TANDEM_VIRT_RANKS 1 "$B" 20000 10 2>/dev/null | tail -1)
            fi
            echo "{\"mpi\": \"$M\", \"build\": \"$v\", \"round\": $i, \"load\": $(cut -d' ' -f1 /proc/loadavg), \"result\": $R}"
        done
    done
done
