#!/bin/bash
# What TANDEM_WAIT costs a blocking ping-pong over loopback TCP (no thread has
# work, so auto should wait as spin does): TANDEM_PROGRESS=drive with
# TANDEM_WAIT=spin, auto and lend, interleaved, ROUNDS rounds (default 5).
# Prints "MPI WAIT BYTES MB/s" per run; docs/PERFORMANCE.md takes medians.
# Run from the repository root after `make build`; as root, Open MPI needs
# OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1.
set -u
for r in $(seq 1 "${ROUNDS:-5}"); do for w in spin auto lend; do for m in mpich openmpi; do
 if [ $m = mpich ]; then out=$(timeout 60 mpiexec.mpich -n 2 -genv LD_PRELOAD $PWD/build/mpich/libtandem.so -genv TANDEM_PROGRESS drive -genv TANDEM_WAIT $w -genv UCX_TLS self,tcp -genv MPIR_CVAR_NOLOCAL 1 build/mpich/tandem-bench-pingpong 65536,4194304 7 2>&1)
 else out=$(timeout 60 mpirun.openmpi -n 2 -x LD_PRELOAD=$PWD/build/openmpi/libtandem.so -x TANDEM_PROGRESS=drive -x TANDEM_WAIT=$w --mca pml ob1 --mca btl self,tcp build/openmpi/tandem-bench-pingpong 65536,4194304 7 2>&1); fi
 echo "$out" | grep '"pingpong"' | python3 -c "import sys,json; [print('$m','$w',d['bytes'],d['bandwidth_mbs']) for d in map(json.loads, sys.stdin)]"
done; done; done
