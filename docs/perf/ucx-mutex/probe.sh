#!/bin/bash
# UCX's spinlock against a mutex beside Tandem's thread: Open MPI on UCX
# (osc/ucx) across 2 simulated hosts sharing the 2-core machine's CPUs, a
# 1 MiB MPI_Get (bench/rma_smb.c, 10 iterations a point): base is the get
# alone (the target in MPI_Barrier), iter the get with the work that
# makes it 1.5 times base. Native, then Tandem's drive with UCX's default
# spinlock (UCX_USE_MT_MUTEX=n) and with Tandem's default (the mutex),
# interleaved, 3 rounds. As root, from the repository:
#   bash docs/perf/ucx-mutex/probe.sh > docs/perf/ucx-mutex/probe.txt
smb() { # label args...
  local label=$1; shift
  timeout 120 .venv/bin/tandem run -q --mpi openmpi --hosts 2 -n 2 --link 10gbit \
    -e OMPI_MCA_pml=ucx "$@" build/openmpi/tandem-bench-rma-smb get 1048576 10 2>/dev/null |
    python3 -c "
import sys, json
for l in sys.stdin:
    if l.startswith('{'):
        d = json.loads(l)
        print('%-22s base %5.2f ms  iter %5.2f ms  work %5.2f ms' % ('$label', d['base_s'] * 1e3, d['iter_s'] * 1e3, d['work_s'] * 1e3))
"
}
for round in 1 2 3; do
  smb native --no-tandem
  smb drive-spinlock --progress drive -e UCX_USE_MT_MUTEX=n
  smb drive-mutex --progress drive
done
