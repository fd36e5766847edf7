#!/bin/bash
# How often MPICH's MPI_Finalize hangs over UCX's TCP transport: RUNS
# launches of finalize.c on NP ranks, each given LIMIT seconds to exit;
# off|drive|proxy preloads build/mpich/libtandem.so with that TANDEM_PROGRESS
# (and FIX=0 with TANDEM_FINALIZE_PROGRESS=0).
#   [RUNS=20] [NP=4] [LIMIT=10] [FIX=0] bash docs/perf/finalize-hang/loop.sh \
#       barrier|none [off|drive|proxy]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
program=/tmp/tandem-finalize-hang
mpicc.mpich -O2 -o "$program" "$here/finalize.c" || exit 1
preload=()
[ -n "${2:-}" ] &&
    preload=(-genv LD_PRELOAD "$root/build/mpich/libtandem.so" -genv TANDEM_PROGRESS "$2"
        -genv TANDEM_FINALIZE_PROGRESS "${FIX:-1}")
hung=0
for i in $(seq 1 "${RUNS:-20}"); do
    { timeout -s KILL "${LIMIT:-10}" mpiexec.mpich -n "${NP:-4}" -genv UCX_TLS self,tcp \
        -genv MPIR_CVAR_NOLOCAL 1 "${preload[@]}" "$program" "$1" > /dev/null 2>&1; } 2> /dev/null
    status=$?
    if [ $status -eq 137 ]; then
        hung=$((hung + 1))
        pkill -KILL -f "^$program" 2> /dev/null
    fi
done
fix=""
[ -n "${2:-}" ] && fix=" TANDEM_FINALIZE_PROGRESS=${FIX:-1}"
echo "${1} ${2:+TANDEM_PROGRESS=}${2:-native}$fix np=${NP:-4}: $hung of ${RUNS:-20} runs hung in MPI_Finalize"
