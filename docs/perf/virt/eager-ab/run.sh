#!/bin/bash
# A/B of an environment setting for the virtual stencil on 2 hosts
mpi=$1; link=$2; rounds=$3; shift 3
for r in $(seq $rounds); do
 for v in 1 2 4 8; do
  for setting in "$@"; do
    out=$(timeout 60 .venv/bin/tandem run --quiet --mpi $mpi --hosts 2 --link $link --virtual $v --cores 1 -n 2 -e TANDEM_VIRT_PROGRESS=off -e $setting build/$mpi/tandem-bench-virt-stencil --grid 8192,128 --kmax 4 --halo 2 --steps 10 --trials 5 --cores 2 --exchange blocking 2>&1 | grep '^{' | tail -1)
    python3 -c "
import json,sys
try: d=json.loads(sys.argv[4]); print(sys.argv[1],'V='+sys.argv[2],sys.argv[3],'%.3f'%(d['step_s']*1e3))
except Exception: print(sys.argv[1],'V='+sys.argv[2],sys.argv[3],'FAILED')" $r $v "$setting" "$out"
  done
 done
done
