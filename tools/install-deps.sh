#!/usr/bin/env bash
# Install what Tandem needs on Debian/Ubuntu: both MPIs, compilers, CMake,
# Python's venv, clang-format, Scotch's library, iproute2 (the simulated hosts). As root it runs
# apt-get; otherwise it lists the missing packages and stops.
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have mpicc.openmpi || need+=(openmpi-bin libopenmpi-dev)
have mpicc.mpich || need+=(mpich libmpich-dev)
have gfortran || need+=(gfortran)
# g++: tandem c++ (the MPIs' mpicxx wrappers call it)
have g++ || need+=(g++)
have cmake || need+=(cmake)
have make || need+=(make)
have nm || need+=(binutils)
# gdb: `tandem bench` records where a launch it had to kill hangs
have gdb || need+=(gdb)
have pkg-config || need+=(pkg-config)
# libscotch: tandem place --algorithm scotch maps ranks with Scotch's library (ctypes)
ls /usr/lib/*/libscotch.so /usr/lib/libscotch.so >/dev/null 2>&1 || need+=(libscotch-dev)
# ip, tc, unshare, nsenter, mount: the simulated hosts (tandem run --hosts,
# tests/python/test_hosts.py) and the shaped network of the benchmarks
{ have ip && have tc; } || need+=(iproute2)
{ have nsenter && have unshare; } || need+=(util-linux)
have mount || need+=(mount)
have clang-format || need+=(clang-format)
have python3 || need+=(python3)
python3 -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
# Python.h: the tests build mpi4py from source for MPICH (make mpi4py)
python3 -c 'import os, sysconfig; os.stat(sysconfig.get_paths()["include"] + "/Python.h")' \
    2>/dev/null || need+=(python3-dev)

if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "tandem: missing packages; install them with:" >&2
    echo "  sudo apt-get install ${need[*]}" >&2
    exit 1
fi
echo "tandem: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
