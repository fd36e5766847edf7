#!/bin/bash
# The slowest rank's post + wait of a 64 KiB MPI_Ibcast on the shaped network
# after a rest of 2 ms (bench/coll_post.c, 200 trials, median), 2 ranks,
# MPICH, TANDEM_PROGRESS=proxy TANDEM_COLL=tandem: native, the library in
# $BEFORE (default the worktree /tmp/old) and this checkout's, alternating,
# once per TANDEM_POLL policy; one line per run: round policy config us.
#   bash docs/perf/coll64-ab/post-wait.sh ROUNDS
# As root, with the namespace tandem-net of ARCHITECTURE.md.
here=$(cd "$(dirname "$0")/../../.." && pwd)
before=${BEFORE:-/tmp/old/build}/mpich
for r in $(seq 1 "${1:-3}"); do
 for poll in yield spin sleep; do
  for cfg in native before after; do
   case $cfg in native) lib="";; before) lib=$before/libtandem.so;; after) lib=$here/build/mpich/libtandem.so;; esac
   pre=""; [ -n "$lib" ] && pre="-genv LD_PRELOAD $lib -genv TANDEM_PROGRESS proxy -genv TANDEM_COLL tandem -genv TANDEM_COLL_SHM 0 -genv TANDEM_POLL $poll"
   [ $cfg = native ] && [ $poll != yield ] && continue
   timeout 60 ip netns exec tandem-net env UCX_TLS=self,tcp UCX_NET_DEVICES=lo MPIR_CVAR_NOLOCAL=1 \
     mpiexec.mpich -n 2 $pre "$here/build/mpich/tandem-bench-coll-post" 65536 2000 200 2>/dev/null |
     grep '^{' | python3 -c 'import json,sys
for d in map(json.loads, sys.stdin): print(sys.argv[1], sys.argv[2], sys.argv[3], "%.1f" % (d["slowest_s"]*1e6))' "$r" "$poll" "$cfg"
  done
 done
done
