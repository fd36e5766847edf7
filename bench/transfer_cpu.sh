#!/bin/bash
# The CPU time one 4 MiB transfer costs each rank on the shaped network
# (bench/transfer_cpu.c) with Tandem's drive strategy and TANDEM_POLL=event,
# while both ranks sleep: the share of a transfer that no overlap can hide
# when no core is idle. Each round runs, in turn, the floor without any MPI
# library (bench/transfer_floor.py: one blocking sendall and receive), Open
# MPI and MPICH. Prints the JSON lines, prefixed with what ran.
# Run as root from the repository root after `make build`; the tandem-net
# namespace of ARCHITECTURE.md is made if missing.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SIZE=${SIZE:-4194304}
TRIALS=${TRIALS:-20}
ROUNDS=${ROUNDS:-1}
for round in $(seq "$ROUNDS"); do
  .venv/bin/python3 bench/transfer_floor.py --networks shaped --size "$SIZE" --trials 100 \
    --rounds 1 | sed "s/^/round $round floor /"
  ip netns exec tandem-net mpirun.openmpi --oversubscribe -n 2 \
    -x LD_PRELOAD="$PWD/build/openmpi/libtandem.so" -x TANDEM_PROGRESS=drive -x TANDEM_POLL=event \
    --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
    build/openmpi/tandem-bench-transfer-cpu "$SIZE" "$TRIALS" | sed "s/^/round $round Open MPI /"
  timeout 120 ip netns exec tandem-net mpiexec.mpich -n 2 \
    -genv LD_PRELOAD "$PWD/build/mpich/libtandem.so" -genv TANDEM_PROGRESS drive \
    -genv TANDEM_POLL event -genv UCX_TLS self,tcp -genv UCX_NET_DEVICES lo \
    -genv MPIR_CVAR_NOLOCAL 1 \
    build/mpich/tandem-bench-transfer-cpu "$SIZE" "$TRIALS" | sed "s/^/round $round MPICH /"
done
