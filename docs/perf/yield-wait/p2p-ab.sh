#!/bin/bash
# Availability and compute slowdown of the seed's overlap variants (bench/overlap.c),
# TANDEM_PROGRESS=proxy with the defaults, a Tandem library built elsewhere
# ($BEFORE/<mpi>/libtandem.so, default /tmp/old/build) against this checkout's,
# alternating. One line per size and run:
#   round mpi transport variant old|new MiB availability% slowdown% transfer_ms
#   [MPIS="openmpi mpich"] [TRS="shm tcp shaped"] [SIZES=1048576,4194304] [TRIALS=5] \
#     bash docs/perf/yield-wait/p2p-ab.sh ROUNDS | python3 docs/perf/yield-wait/summary.py
here=$(cd "$(dirname "$0")/../../.." && pwd)
CFGS="old|${BEFORE:-/tmp/old/build}| new|$here/build|" TRS=${TRS:-shm tcp shaped} \
    VS="isend_recv irecv_send both" exec bash "$here/docs/perf/lent-pull/cfg-ab.sh" "${1:-3}"
