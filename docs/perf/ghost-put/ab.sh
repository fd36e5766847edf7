#!/bin/bash
# A progress process's offloaded put across hosts as MPI_Rput pieces (OLD)
# against MPI_Put pieces and one flush (NEW): Open MPI on UCX, 2 simulated
# hosts of the 2-core machine, a rank and a progress process on each, no
# progress thread, SMB's put alone (base) at 1 and 4 MiB, 5 iterations a
# point, rounds interleaved. Waits inside Open MPI yield
# (mpi_yield_when_idle), so that 4 busy processes share 2 CPUs less badly.
# As root, from the repository, with the two libraries built:
#   bash docs/perf/ghost-put/ab.sh OLD.so NEW.so [ROUNDS] > docs/perf/ghost-put/ab.txt
old=$1 new=$2 rounds=${3:-5}
put() { # label library
  timeout 120 .venv/bin/tandem run -q --mpi openmpi --hosts 2 -n 4 --link 10gbit --no-tandem \
    -e OMPI_MCA_pml=ucx -e OMPI_MCA_mpi_yield_when_idle=1 -e TANDEM_GHOSTS=1 \
    -e TANDEM_PROGRESS=off -e LD_PRELOAD="$2" \
    build/openmpi/tandem-bench-rma-smb put 1048576,4194304 5 2>/dev/null |
    python3 -c "
import sys, json
out = []
for l in sys.stdin:
    if l.startswith('{'):
        d = json.loads(l)
        out.append('%d KiB alone %.2f ms, wrong %d' % (d['bytes'] // 1024, d['base_s'] * 1e3, d['wrong_bytes']))
print('%-4s' % '$1', ' | '.join(out))
"
}
for round in $(seq "$rounds"); do
  put old "$old"
  put new "$new"
done
