#!/usr/bin/env bash
# Benchmarks across simulated hosts on the lent 16-core machine: two hosts
# (network namespaces joined by a shaped link, docs/HOSTS.md) that have
# cores to spare, which this 2-core machine cannot give them.
#
#   bash bench/device-hosts.sh [PACK]
#
# PACK: tools/device-pack's archive (default .device-pack/tandem-device.tar.gz)
# or the folder it unpacks to; it carries ip and tc, and tandem's command
# line runs from this repository (python/) with the machine's python3. First
# it records what works (python, ip, tc, a hello world on 2 hosts with each
# MPI), then it runs `tandem bench` on 2 hosts, one benchmark after the
# other in the order of DEVICE_HOSTS_ONLY, while time is left:
#   smb      MPI_Get and MPI_Put availability, 64 KiB to 4 MiB (issue 34)
#   heat     3D heat conduction with one-sided halos, 2 and 8 ranks (MPICH)
#   heat-ucx the same on Open MPI (over UCX: tandem bench heat sets it across
#            hosts), whose MPI_Rget halos the progress processes take over
#   rma      the 8 MiB get from a target that computes (truly passive)
#   overlap  point-to-point overlap, 1 and 4 MiB, 2 rounds, Tandem's default too
#   overlap-ucx  the same on Open MPI over UCX (-e OMPI_MCA_pml=ucx), as on a
#            cluster's InfiniBand
#   virt     per MPI: tandem model calibrate on the 2 hosts, then tandem bench
#            virt (TinyMPI's stencil as V = 1, 2, 4, 8 virtual ranks per core
#            against MPI processes, with the model's prediction; issue 36),
#            link DEVICE_VIRT_LINK (default 1gbit:16kb)
# Each writes OUT/NAME/ (JSON and table; plots where matplotlib is found,
# else drawn here afterwards from the JSON), and OUT/hosts.log says what ran.
#
# DEVICE_BUDGET_S (default 450): no benchmark starts unless its estimate fits.
# DEVICE_HOSTS_ONLY (default "smb heat rma overlap virt"): which, in that order.
# DEVICE_LINK (default 10gbit): each host's link rate.
# DEVICE_MPIS (default "mpich openmpi"), DEVICE_ROUNDS (default 3),
# DEVICE_LAUNCH_TIMEOUT (default 15 s: a launch killed, its output kept).
# DEVICE_BENCH_ARGS: more arguments for every tandem bench (an A/B of a
# setting across two calls: DEVICE_BENCH_ARGS="-e UCX_USE_MT_MUTEX=n").
# DEVICE_ARCHIVE=PATH: after each benchmark, everything in OUT so far packed
# into this one .tar.gz (the device tool brings back at most 8 files).
# DEVICE_QUICK=1: tiny sizes, one round (tools/device-pack --check).
set -uo pipefail

BUDGET=${DEVICE_BUDGET_S:-450}
ONLY=${DEVICE_HOSTS_ONLY:-smb heat rma overlap virt}
LINK=${DEVICE_LINK:-10gbit}
MPIS=${DEVICE_MPIS:-mpich openmpi}
ROUNDS=${DEVICE_ROUNDS:-3}
# MPICH alone hangs in MPI_Finalize now and then across hosts (docs/HOSTS.md):
# such a launch is killed after this many seconds, its results kept
LAUNCH_TIMEOUT=${DEVICE_LAUNCH_TIMEOUT:-15}
# a bucket of 16 KiB: 1gbit's 256 KiB let the stencil's bytes of a step
# through at the unshaped rate, leaving little to hide (docs/PERFORMANCE.md)
VIRT_LINK=${DEVICE_VIRT_LINK:-1gbit:16kb}
QUICK=${DEVICE_QUICK:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PACK=${1:-$ROOT/.device-pack/tandem-device.tar.gz}
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
LOG=$OUT/hosts.log
: >"$LOG"
SECONDS=0

log() { echo "$*" | tee -a "$LOG" >&2; }

if [ -f "$PACK" ]; then
    WORK=$(mktemp -d /tmp/tandem-device-hosts.XXXXXX)
    tar -xzf "$PACK" -C "$WORK" || {
        log "cannot unpack $PACK"
        exit 1
    }
    PACK=$WORK/tandem-device
fi
# shellcheck source=/dev/null
. "$PACK/env.sh"
# The pack's launchers start every rank on this machine by default (one
# host: tandem model calibrate's own runs); on simulated hosts tandem's
# launch names the hosts' agent on the command line, which wins.

PYTHON=$(command -v python3 || true)
# tandem's command line, from this repository, with the folder's builds
TANDEM=(env "PYTHONPATH=$ROOT/python" "$PYTHON" -m tandem.cli --builds "$DEVICE_PACK/tandem")

log "== what works ($(date -u +%FT%TZ), $(nproc) CPUs, kernel $(uname -r))"
log "python: ${PYTHON:-none} $("${PYTHON:-false}" --version 2>&1)"
log "numpy: $("${PYTHON:-false}" -c 'import numpy; print(numpy.__version__)' 2>&1 | tail -1)"
log "matplotlib: $("${PYTHON:-false}" -c 'import matplotlib; print(matplotlib.__version__)' 2>&1 | tail -1)"
log "ip: $(command -v ip) $(ip -V 2>&1); tc: $(command -v tc)"
[ -n "$PYTHON" ] || {
    log "no python3: nothing runs"
    exit 1
}
for mpi in $MPIS; do
    log "-- hello on 2 hosts, $mpi, link $LINK"
    if ! timeout 60 "${TANDEM[@]}" run --mpi "$mpi" --hosts 2 --link "$LINK" -n 4 \
        "$DEVICE_PACK/tandem/$mpi/tandem-hello" >>"$LOG" 2>&1; then
        log "   failed: see above"
        MPIS=$(echo " $MPIS " | sed "s/ $mpi / /" | xargs)
    fi
done
[ -n "${MPIS// /}" ] || {
    log "no MPI runs on simulated hosts here"
    exit 1
}
# NAME ESTIMATE_S MPIS ARGS...: one benchmark on the MPIs of MPIS that run
# here, across the hosts only, if its estimate fits what is left; its
# results in OUT/NAME, or OUT/$AS where AS is set
bench() {
    local name=$1 estimate=$2 wanted=$3 mpi_arg=() runs=() out=${AS:-$1}
    shift 3
    local left=$((BUDGET - SECONDS))
    for mpi in $wanted; do
        [[ " $MPIS " == *" $mpi "* ]] && runs+=("$mpi")
    done
    if [ "${#runs[@]}" -eq 0 ]; then
        log "-- $name skipped: none of $wanted runs on simulated hosts here"
        return
    fi
    if [ "$estimate" -gt "$left" ]; then
        log "-- $name skipped: about ${estimate} s, ${left} s left"
        return
    fi
    # tandem bench runs every build of --builds, or the one --mpi names
    [ "${#runs[@]}" -eq 1 ] && mpi_arg=(--mpi "${runs[0]}")
    log "-- $name ($(date -u +%T), ${left} s left): tandem bench $name ${mpi_arg[*]} $*"
    local start=$SECONDS status=0
    timeout "$left" "${TANDEM[@]}" bench "$name" "${mpi_arg[@]}" --transports hosts --hosts 2 \
        --link "$LINK" --rounds "$ROUNDS" --timeout "$LAUNCH_TIMEOUT" --out "$OUT/$out" "$@" \
        ${DEVICE_BENCH_ARGS:-} \
        >>"$LOG" 2>&1 || status=$?
    log "   $name: exit $status after $((SECONDS - start)) s"
    pack_results
}

pack_results() {
    if [ -n "${DEVICE_ARCHIVE:-}" ]; then
        tar -czf "$DEVICE_ARCHIVE.tmp" -C "$OUT" . && mv "$DEVICE_ARCHIVE.tmp" "$DEVICE_ARCHIVE"
    fi
}

# shellcheck disable=SC2054 # the commas separate the values of one option
if [ -n "$QUICK" ]; then
    SMB=(--sizes 65536 --trials 1) HEAT=(--ranks 2 --cells 32768 --steps 2 --trials 1)
    RMA=(--sizes 65536 --work 0.05 --trials 1) OVERLAP=(--sizes 65536 --ranks 2 --trials 1)
    VIRT=(--quick) VIRT_ESTIMATE=30
    ROUNDS=1
else
    SMB=(--sizes 65536,262144,1048576,4194304 --trials 5)
    HEAT=(--ranks 2,8 --cells 4194304 --steps 10 --trials 3)
    RMA=(--sizes 65536,1048576,8388608 --work 0.25 --trials 2)
    OVERLAP=(--sizes 1048576,4194304 --trials 5 --rounds 2) # 2 ranks: one per host
    # the 2-core machine's run: 1 core per host; processes of the real MPI
    # one per core only (oversubscribed MPICH processes took the timeout)
    VIRT=(--rounds 3 --mpi-v 1) VIRT_ESTIMATE=120
fi
# Open MPI 4.1 makes no window across hosts over TCP (docs/HOSTS.md): tandem
# bench smb, rma and heat run it on UCX there; heat-ucx is that run.
# The virtual ranks' stencil, per MPI: its programs load libtandem-virt.so.0
# from the MPI's folder; the calibration goes with the results.
virt() {
    local mpi left start status
    for mpi in $MPIS; do
        left=$((BUDGET - SECONDS))
        if [ "$VIRT_ESTIMATE" -gt "$left" ]; then
            log "-- virt $mpi skipped: about ${VIRT_ESTIMATE} s, ${left} s left"
            continue
        fi
        log "-- virt $mpi ($(date -u +%T), ${left} s left): tandem model calibrate, tandem bench virt"
        start=$SECONDS status=0
        mkdir -p "$OUT/virt-$mpi"
        LD_LIBRARY_PATH=$DEVICE_PACK/tandem/$mpi:$LD_LIBRARY_PATH timeout "$left" \
            "${TANDEM[@]}" model calibrate --mpi "$mpi" --link "$VIRT_LINK" \
            --calibration "$OUT/virt-$mpi/model-$mpi.json" >>"$LOG" 2>&1 || status=$?
        left=$((BUDGET - SECONDS))
        [ "$status" -eq 0 ] && LD_LIBRARY_PATH=$DEVICE_PACK/tandem/$mpi:$LD_LIBRARY_PATH \
            timeout "$left" "${TANDEM[@]}" bench virt --mpi "$mpi" --hosts 2 --link "$VIRT_LINK" \
            --calibration "$OUT/virt-$mpi/model-$mpi.json" --timeout "$LAUNCH_TIMEOUT" \
            "${VIRT[@]}" --out "$OUT/virt-$mpi" >>"$LOG" 2>&1 || status=$?
        log "   virt $mpi: exit $status after $((SECONDS - start)) s"
        pack_results
    done
}

for name in $ONLY; do
    case $name in
    virt) virt ;;
    smb) bench smb 180 "mpich openmpi" "${SMB[@]}" ;;
    heat) bench heat 90 mpich "${HEAT[@]}" ;;
    heat-ucx) AS=heat-ucx bench heat 90 openmpi "${HEAT[@]}" ;;
    rma) bench rma 180 "mpich openmpi" "${RMA[@]}" ;;
    overlap) bench overlap 120 "mpich openmpi" "${OVERLAP[@]}" ;;
    overlap-ucx) AS=overlap-ucx bench overlap 60 openmpi "${OVERLAP[@]}" -e OMPI_MCA_pml=ucx ;;
    *) log "-- $name: not a benchmark of this script (smb heat heat-ucx rma overlap overlap-ucx virt)" ;;
    esac
done
"${TANDEM[@]}" hosts >>"$LOG" 2>&1
log "== done after $SECONDS s"
pack_results
