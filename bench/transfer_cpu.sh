#!/bin/bash
# The CPU time one 4 MiB transfer costs each rank on the shaped network
# (bench/transfer_cpu.c) with Tandem's drive strategy and TANDEM_POLL=event,
# while both ranks sleep: the share of a transfer that no overlap can hide
# when no core is idle. Prints the benchmark's JSON lines per MPI.
# Run as root from the repository root after `make build` and once
# `tandem bench overlap --transports shaped` (or ARCHITECTURE.md's recipe) made
# the tandem-net namespace.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SIZE=${SIZE:-4194304}
TRIALS=${TRIALS:-20}
ip netns exec tandem-net mpirun.openmpi --oversubscribe -n 2 \
  -x LD_PRELOAD="$PWD/build/openmpi/libtandem.so" -x TANDEM_PROGRESS=drive -x TANDEM_POLL=event \
  --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
  build/openmpi/tandem-bench-transfer-cpu "$SIZE" "$TRIALS" | sed 's/^/Open MPI /'
timeout 120 ip netns exec tandem-net mpiexec.mpich -n 2 \
  -genv LD_PRELOAD "$PWD/build/mpich/libtandem.so" -genv TANDEM_PROGRESS drive -genv TANDEM_POLL event \
  -genv UCX_TLS self,tcp -genv UCX_NET_DEVICES lo -genv MPIR_CVAR_NOLOCAL 1 \
  build/mpich/tandem-bench-transfer-cpu "$SIZE" "$TRIALS" | sed 's/^/MPICH /'
