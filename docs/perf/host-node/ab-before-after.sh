#!/bin/bash
# A/B of the library before and after (this checkout), MPICH over loopback
# TCP; one line per run and size:
#   round variant config bytes availability% slowdown% transfer_ms
# "Before" is built in a worktree at /tmp/old, e.g. for the host node:
#   git worktree add /tmp/old bf304c8 && cd /tmp/old &&
#   cmake -S . -B build/mpich -DMPI_C_COMPILER=mpicc.mpich \
#     -DMPI_Fortran_COMPILER=mpif90.mpich && cmake --build build/mpich
rounds=${1:-5}
here=$(cd "$(dirname "$0")/../../.." && pwd)
for r in $(seq 1 $rounds); do
 for variant in isend_recv irecv_send; do
  for cfg in native old-proxy new-proxy old-drive new-drive; do
   case $cfg in
    native) pre="";;
    old-*) pre="-genv LD_PRELOAD /tmp/old/build/mpich/libtandem.so";;
    new-*) pre="-genv LD_PRELOAD $here/build/mpich/libtandem.so";;
   esac
   strat=${cfg#*-}
   out=$(timeout 60 mpiexec.mpich -n 2 -genv TANDEM_PROGRESS $strat -genv UCX_TLS self,tcp -genv MPIR_CVAR_NOLOCAL 1 $pre $here/build/mpich/tandem-bench-overlap $variant 1048576,4194304 5 2>/dev/null | grep '^{')
   echo "$out" | python3 -c 'import json,sys
for d in map(json.loads, sys.stdin): print(sys.argv[1], sys.argv[2], sys.argv[3], d["bytes"], round(100*d["availability"]), round(100*d["slowdown"]), round(1e3*d["transfer_s"],2))' $r $variant $cfg
  done
 done
done
