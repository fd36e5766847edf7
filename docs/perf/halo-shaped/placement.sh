#!/bin/bash
# Where MPICH's ranks and Tandem's drive threads run, and what it costs the
# ghost-cell exchange over the shaped network (docs/PERFORMANCE.md, "Ghost
# cells over the shaped network"). Needs the tandem-net namespace
# (`tandem bench halo --transports shaped` makes it) and root.
#   bash docs/perf/halo-shaped/placement.sh [LAUNCHES] > docs/perf/halo-shaped/placement.txt
# "unbound" is hydra's default placement (each drive thread beside its own
# rank, TANDEM_PROGRESS_BESIDE=1); "not-beside" leaves the threads to the
# scheduler, as Tandem did before. Each line: step_s compute_s, then each rank's progress thread: polls and
# its CPU time as a share of the run.
cd "$(dirname "$0")/../../.."
launches=${1:-6}
run() {
    ip netns exec tandem-net mpiexec.mpich "$@" -n 2 -env UCX_TLS self,tcp \
        -env MPIR_CVAR_NOLOCAL 1 -env UCX_NET_DEVICES lo \
        -env LD_PRELOAD "$PWD/build/mpich/libtandem.so" -env TANDEM_PROGRESS drive \
        -env TANDEM_VERBOSE 2 build/mpich/tandem-bench-halo 8388608 262144 10 3 2>&1 |
        grep -o '"step_s": [0-9.]*\|"compute_s": [0-9.]*\|[0-9]* polls\|([0-9.]*%)' |
        sed 's/"[a-z_]*": //' | tr '\n' ' '
    echo
}
echo "# sessions: each rank's autogroup under hydra, then under Open MPI's mpirun"
ip netns exec tandem-net mpiexec.mpich -n 2 sh -c 'cat /proc/self/autogroup' | sort
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun.openmpi --oversubscribe -n 2 sh -c 'cat /proc/self/autogroup' | sort
echo "# kernel.sched_autogroup_enabled = $(cat /proc/sys/kernel/sched_autogroup_enabled)"
for i in $(seq "$launches"); do
    echo "unbound $(run)"
    echo "unbound-not-beside $(run -env TANDEM_PROGRESS_BESIDE 0)"
    echo "bound $(run -bind-to core)"
    echo "bound-thread-same $(run -bind-to core -env TANDEM_PROGRESS_CPUS 0,1)"
    echo "bound-thread-cross $(run -bind-to core -env TANDEM_PROGRESS_CPUS 1,0)"
done
