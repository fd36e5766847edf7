# Open MPI on UCX (and MPICH) across 2 simulated hosts sharing the 2-core
# machine's CPUs, 1 MiB irecv_send and isend_recv, 5 trials, two passes:
# the transfer alone and the share hidden, under proxy with a yielding
# thread pinned where auto puts it (the other host's rank's CPU), unpinned,
# beside its own rank (share), sleeping, and drive. As root, from the
# repository:  bash docs/perf/hosts-ucx/yield-probe.sh > docs/perf/hosts-ucx/yield-probe.txt
run() { # label mpi args...
  local label=$1 mpi=$2; shift 2
  local pml=(); [ $mpi = openmpi ] && pml=(-e OMPI_MCA_pml=ucx)
  timeout 120 .venv/bin/tandem run -q --mpi $mpi --hosts 2 -n 2 --link 2gbit "${pml[@]}" "$@" build/$mpi/tandem-bench-overlap irecv_send,isend_recv 1048576 5 2>/dev/null | python3 -c "
import sys,json
out=[]
for l in sys.stdin:
    if l.startswith('{'):
        d=json.loads(l); out.append('%s %.2fms %.0f%%' % (d['variant'][:5], d['transfer_s']*1e3, d['availability']*100))
print('$label', ' | '.join(out))
"
}
for i in 1 2; do
for mpi in openmpi mpich; do
run "$mpi native" $mpi --no-tandem
run "$mpi proxy-yield" $mpi --progress proxy -e TANDEM_POLL=yield
run "$mpi proxy-yield-unpinned" $mpi --progress proxy -e TANDEM_POLL=yield -e TANDEM_PROGRESS_CPUS=none
run "$mpi proxy-yield-beside-own-rank" $mpi --progress proxy -e TANDEM_POLL=yield -e TANDEM_PROGRESS_CPUS=share
run "$mpi proxy-sleep" $mpi --progress proxy -e TANDEM_POLL=sleep
run "$mpi drive-yield" $mpi --progress drive -e TANDEM_POLL=yield
done; done
