#!/bin/bash
# What the interposed UCX calls (src/impl/ucx_exit.c) cost outside
# MPI_Finalize: MPICH's 8-byte ping-pong latency and message rate
# (bench/pingpong.c) with the library before them (OLD, a build directory)
# and after (this checkout's build), TANDEM_PROGRESS=off, alternating, over
# shared memory and UCX's TCP. One line per run, then medians and minima:
#   OLD=/tmp/old/build bash docs/perf/finalize-hang/pingpong-ab.sh ROUNDS
root=$(cd "$(dirname "$0")/../../.." && pwd)
for r in $(seq 1 "${1:-8}"); do
    for cfg in old new; do
        lib=$OLD/mpich/libtandem.so
        [ $cfg = new ] && lib=$root/build/mpich/libtandem.so
        for tr in shm tcp; do
            net=()
            [ $tr = tcp ] && net=(-genv UCX_TLS self,tcp -genv MPIR_CVAR_NOLOCAL 1)
            timeout -s KILL 40 mpiexec.mpich -n 2 "${net[@]}" -genv LD_PRELOAD "$lib" \
                "$root/build/mpich/tandem-bench-pingpong" 8 7 2> /dev/null | grep '^{' |
                python3 -c 'import json, sys
for d in map(json.loads, sys.stdin):
    for k in ("latency_us", "rate_per_s"):
        if k in d:
            print(*sys.argv[1:], k, d[k])' "$r" "$cfg" "$tr"
        done
    done
done | tee /dev/stderr | python3 -c 'import collections, statistics, sys
runs = collections.defaultdict(list)
for line in sys.stdin:
    r, cfg, tr, k, v = line.split()
    runs[(tr, k, cfg)].append(float(v))
for (tr, k, cfg), v in sorted(runs.items()):
    print(f"{tr} {k} {cfg}: median {statistics.median(v):.4g} min {min(v):.4g} max {max(v):.4g} ({len(v)} runs)")'
