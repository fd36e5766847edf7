#!/usr/bin/env bash
# The measurements that need spare cores, in one run of at most 8 minutes on
# the lent 16-core machine, which has no MPI of its own and may run under
# gVisor (docs/DEVICE.md; results in docs/PERFORMANCE.md, "With spare cores").
#
#   bash bench/device.sh [PACK]
#
# PACK: tools/device-pack's archive (default .device-pack/tandem-device.tar.gz)
# or the folder it unpacks to. First it records what works there (the node
# probe: processes, shared memory, CMA, affinity; each MPI's hello world over
# shared memory and TCP, trying fallbacks where the default fails), then it
# runs, in rounds that interleave the configurations, until its time is up:
#   overlap  bench/overlap.c, shared memory and TCP over loopback, 256 KiB to
#            4 MiB, every variant, 2 ranks (idle cores beside them), 8 and 14
#   coll     bench/coll_overlap.c, ibcast and iallreduce, 2 and 8 ranks
#   halo     bench/halo.c, 2, 8 and 16 ranks
# each native, with Tandem (drive, proxy) and with MPICH's own thread.
#
# Results in $OUT (default ./device-out), rewritten after every launch so
# that a run cut short leaves whole files: node.json, overlap.json,
# coll.json, halo.json (every record, labelled), device.log (every launch:
# its command, exit status, time, and the end of its output when it failed).
# tools/device-report turns them into tables.
#
# DEVICE_BUDGET_S (default 450): no launch starts that could end later.
# DEVICE_ROUNDS (default 5): rounds at most.
# DEVICE_QUICK=1: tiny sizes, few ranks, one round (tools/device-pack --check).
# A second, shorter call can ask for one question only:
# DEVICE_ONLY=overlap: the overlap benchmark alone, every round;
# DEVICE_OVERLAP_SIZES (comma-separated bytes), DEVICE_OVERLAP_RANKS (space-
# separated counts): other sizes and rank counts;
# DEVICE_POLLS (default yield): the progress thread's poll policies to run (yield, sleep, event),
# each as its own configuration (tandem-drive-POLL, tandem-proxy-POLL).
# DEVICE_TANDEM_ENV: NAME=VALUE ... added to every Tandem configuration
# (an A/B of a setting across two calls of this script).
# DEVICE_AB=DIR (relative to the repository or absolute): another build of
# Tandem, DIR/openmpi/libtandem.so and DIR/mpich/libtandem.so (tools/device-
# pack --ab REV puts one there): every Tandem configuration runs again with
# it, as NAME-ab, interleaved with NAME (an A/B of two builds in one call).
# DEVICE_ALSO="NAME=VALUE ...": every Tandem configuration runs again with
# these variables added, as NAME-DEVICE_ALSO_NAME (default "also"),
# interleaved with NAME (an A/B of a setting in one call).
# DEVICE_AUTO=1: Tandem with no TANDEM_* variable (the default's own
# decision) runs too, as tandem-auto.
# DEVICE_BIND=core: native and tandem-drive also run with the ranks bound to
# a core each (Open MPI's --bind-to core, Hydra's -bind-to core), as
# NAME-bound, where the progress thread is pinned to a spare CPU.
# DEVICE_ONLY=coll, halo, coll,halo or overlap,coll: those benchmarks alone,
# every round, on DEVICE_OVERLAP_RANKS, DEVICE_COLL_RANKS and DEVICE_HALO_RANKS
# (space-separated counts); DEVICE_COLL_SIZES (comma-separated bytes).
# DEVICE_NATIVE_MULTIPLE=1: the program without Tandem runs again at
# MPI_THREAD_MULTIPLE (OMPI_MPI_THREAD_LEVEL=3, MPIR_CVAR_DEFAULT_THREAD_LEVEL),
# as native-multiple: what the thread level alone costs, beside Tandem's
# thread, which needs it.
# DEVICE_ONLY=rma: the truly passive target alone (bench/rma_passive.c, 2
# ranks, every round): a get while the target waits in MPI_Barrier (pure) and
# while it computes DEVICE_RMA_WORK seconds (default 0.5) without MPI calls
# (busy), DEVICE_RMA_SIZES (default 65536,1048576,8388608), both window
# flavours (DEVICE_RMA_FLAVOURS="allocate create"), into rma.json. On MPICH
# rma and smb also run with a progress process (tandem-ghosts: one more
# process, TANDEM_GHOSTS=1, no progress thread; and tandem-ghosts-no-offload,
# TANDEM_RMA_OFFLOAD_LIMIT=0). DEVICE_MPIS ("openmpi mpich") and
# DEVICE_TRANSPORTS ("shm tcp") narrow the runs.
# DEVICE_ONLY=cost: what progress processes cost a program without windows:
# the 8-byte ping-pong latency (bench/pingpong.c, 2 ranks, DEVICE_LATENCY_TRIALS
# batches, default 9) into latency.json, and the ghost-cell step on 2 and 8
# ranks into halo.json, native, Tandem off and drive, each with and without
# one progress process (TANDEM_GHOSTS=1).
# DEVICE_ONLY=smb: host overhead and availability of MPI_Get and MPI_Put
# (bench/rma_smb.c, 2 ranks, the target computing too; DEVICE_SMB_SIZES,
# default 4 KiB to 4 MiB), into smb.json.
set -uo pipefail

BUDGET=${DEVICE_BUDGET_S:-450}
MAX_ROUNDS=${DEVICE_ROUNDS:-5}
QUICK=${DEVICE_QUICK:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PACK=${1:-$ROOT/.device-pack/tandem-device.tar.gz}
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/tandem-device-run.XXXXXX)
LOG=$OUT/device.log
: >"$LOG"
SECONDS=0

if [ -n "$QUICK" ]; then
    OVERLAP_RANKS=(2 4) OVERLAP_SIZES=262144 OVERLAP_TRIALS=1
    COLL_RANKS=(2) COLL_SIZES=65536 COLL_TRIALS=1
    HALO_RANKS=(2) HALO_CELLS=262144 HALO_BYTES=65536 HALO_STEPS=2 HALO_TRIALS=1
    MAX_ROUNDS=1
else
    OVERLAP_RANKS=(2 8 14) OVERLAP_SIZES=262144,1048576,4194304 OVERLAP_TRIALS=5
    COLL_RANKS=(2 8) COLL_SIZES=65536,1048576,4194304 COLL_TRIALS=5
    HALO_RANKS=(2 8 16) HALO_CELLS=4194304 HALO_BYTES=1048576 HALO_STEPS=10 HALO_TRIALS=3
fi
[ -n "${DEVICE_OVERLAP_SIZES:-}" ] && OVERLAP_SIZES=$DEVICE_OVERLAP_SIZES
[ -n "${DEVICE_OVERLAP_RANKS:-}" ] && read -ra OVERLAP_RANKS <<<"$DEVICE_OVERLAP_RANKS"
[ -n "${DEVICE_COLL_RANKS:-}" ] && read -ra COLL_RANKS <<<"$DEVICE_COLL_RANKS"
[ -n "${DEVICE_COLL_SIZES:-}" ] && COLL_SIZES=$DEVICE_COLL_SIZES
[ -n "${DEVICE_HALO_RANKS:-}" ] && read -ra HALO_RANKS <<<"$DEVICE_HALO_RANKS"
RMA_SIZES=${DEVICE_RMA_SIZES:-65536,1048576,8388608}
RMA_WORK=${DEVICE_RMA_WORK:-0.5}
RMA_TRIALS=5
read -ra RMA_FLAVOURS <<<"${DEVICE_RMA_FLAVOURS:-allocate create}"
SMB_SIZES=${DEVICE_SMB_SIZES:-4096,16384,65536,262144,1048576,4194304}
SMB_ITERATIONS=20
LATENCY_TRIALS=${DEVICE_LATENCY_TRIALS:-9}
ONLY=${DEVICE_ONLY:-}
TANDEM_ENV=${DEVICE_TANDEM_ENV:+ $DEVICE_TANDEM_ENV}
POLLS=${DEVICE_POLLS:-yield}
AB=${DEVICE_AB:-}
[ -n "$AB" ] && [ "${AB#/}" = "$AB" ] && AB=$ROOT/$AB
BIND=${DEVICE_BIND:-}
AUTO=${DEVICE_AUTO:-}
ALSO=${DEVICE_ALSO:-}
ALSO_NAME=${DEVICE_ALSO_NAME:-also}
NATIVE_MULTIPLE=${DEVICE_NATIVE_MULTIPLE:-}
VARIANTS=isend_recv,irecv_send,both
COLLECTIVES=ibcast,iallreduce
read -ra MPIS <<<"${DEVICE_MPIS:-openmpi mpich}"
read -ra TRANSPORTS <<<"${DEVICE_TRANSPORTS:-shm tcp}"

log() { echo "$*" >>"$LOG"; }
say() {
    printf '[%3ds] %s\n' "$SECONDS" "$*"
    log "[${SECONDS}s] $*"
}

# ------------------------------------------------------------------ the pack
if [ -f "$PACK" ]; then
    tar -xzf "$PACK" -C "$WORK" || {
        say "cannot unpack $PACK"
        exit 1
    }
    PACK=$WORK/tandem-device
fi
[ -f "$PACK/env.sh" ] || {
    say "no env.sh in $PACK: build it with tools/device-pack"
    exit 1
}
DEVICE_PACK=$(cd "$PACK" && pwd)
# shellcheck source=/dev/null
. "$DEVICE_PACK/env.sh"
say "pack: $DEVICE_PACK ($(head -2 "$DEVICE_PACK/VERSIONS" | tail -1)); budget ${BUDGET}s"
if [ -n "$AB" ]; then
    for mpi in openmpi mpich; do
        [ -f "$AB/$mpi/libtandem.so" ] || {
            say "DEVICE_AB=$AB has no $mpi/libtandem.so"
            exit 1
        }
    done
    say "A/B: NAME-ab runs $AB ($(cat "$AB/VERSION" 2>/dev/null || echo 'no VERSION'))"
fi

family() { [ "$1" = openmpi ] && echo "Open MPI" || echo MPICH; }

# A JSON string of $1: quotes, backslashes and control characters escaped.
json_str() {
    local s
    s=$(printf '%s' "$1" | tr -d '\000-\010\013\014\016-\037')
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\t'/\\t}
    s=${s//$'\n'/\\n}
    s=${s//$'\r'/}
    printf '"%s"' "$s"
}

# The lines of file $1 as the items of a JSON list.
json_items() { [ -s "$1" ] && sed '$!s/$/,/' "$1"; }

MACHINE=$(printf '{"cores": %s, "kernel": %s, "cpu": %s, "memory_kib": %s, "host": %s}' \
    "$(nproc 2>/dev/null || echo 0)" "$(json_str "$(uname -r)")" \
    "$(json_str "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)")" \
    "$(awk '/^MemTotal/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)" \
    "$(json_str "$(hostname 2>/dev/null)")")

# ------------------------------------------------------------------ launching
# The processes descended from $1, from /proc: MPICH's Hydra starts its
# proxy and the ranks in sessions of their own, so a launch's session does
# not hold them, but they stay its descendants while it runs.
descendants() {
    local stat line pid ppid parent
    local -A children=()
    for stat in /proc/[0-9]*/stat; do
        read -r line 2>/dev/null <"$stat" || continue
        pid=${line%% *}
        # after the command's name: state ppid ...
        read -r _ ppid _ <<<"${line##*) }"
        children[$ppid]+=" $pid"
    done
    local -a queue=("$1")
    while [ ${#queue[@]} -gt 0 ]; do
        parent=${queue[0]}
        queue=("${queue[@]:1}")
        for pid in ${children[$parent]:-}; do
            echo "$pid"
            queue+=("$pid")
        done
    done
}

# End launch $1 and everything it started: SIGTERM to the launcher (both
# MPIs then end their ranks and remove their shared-memory files), and after
# 2 seconds SIGKILL to whatever of it is left.
end_launch() {
    local -a tree
    mapfile -t tree < <(descendants "$1")
    kill -TERM "$1" 2>/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
        running "$1" || break
        sleep 0.1
    done
    kill -KILL "$1" "${tree[@]}" 2>/dev/null
    return 0
}

# Whether process $1 runs (a zombie does not).
running() {
    local stat
    read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
    stat=${stat##*) }
    [ "${stat%% *}" != Z ]
}

# run_bounded LIMIT EXPECTED OUTFILE ERRFILE COMMAND...: run COMMAND in a
# session of its own (away from the terminal's signals), for at most LIMIT
# seconds, and once EXPECTED JSON lines are out, 3 seconds more
# (MPICH over UCX's TCP hangs in MPI_Finalize at times, after its results).
# Sets STATUS (124 when killed), KILLED ("", "timeout" or "finalize") and
# TOOK (milliseconds).
run_bounded() {
    local limit=$1 expected=$2 out=$3 err=$4 pid start now complete=""
    shift 4
    start=${EPOCHREALTIME/[.,]/}
    setsid "$@" >"$out" 2>"$err" </dev/null &
    pid=$!
    KILLED=""
    while running "$pid"; do
        sleep 0.1
        now=${EPOCHREALTIME/[.,]/}
        if [ -z "$complete" ] && [ "$(grep -c '^{' "$out")" -ge "$expected" ]; then
            complete=$now
        fi
        if [ -n "$complete" ] && [ $((now - complete)) -gt 3000000 ]; then
            KILLED=finalize
        elif [ $((now - start)) -gt $((limit * 1000000)) ]; then
            KILLED=timeout
        fi
        [ -n "$KILLED" ] && break
    done
    [ -n "$KILLED" ] && end_launch "$pid"
    wait "$pid" 2>/dev/null
    STATUS=$?
    [ -n "$KILLED" ] && STATUS=124
    now=${EPOCHREALTIME/[.,]/}
    TOOK=$(((now - start) / 1000))
}

# The command line of MPI $1 starting $2 ranks with SETTINGS (launcher
# arguments and NAME=VALUE for the ranks) and Tandem preloaded when $3 is
# "tandem"; then the program and its arguments. Into the array COMMAND.
command_line() {
    local mpi=$1 np=$2 with=$3 settings=$4 word
    shift 4
    local -a args=() env=()
    for word in $settings; do
        if [[ $word =~ ^[A-Z_][A-Z0-9_]*= ]]; then env+=("$word"); else args+=("$word"); fi
    done
    [ "$with" = tandem ] && env+=("LD_PRELOAD=$DEVICE_PACK/tandem/$mpi/libtandem.so")
    [ "$with" = tandem-ab ] && env+=("LD_PRELOAD=$AB/$mpi/libtandem.so")
    if [ "$mpi" = openmpi ]; then
        COMMAND=(mpirun.openmpi --oversubscribe -n "$np" "${args[@]}")
        for word in "${env[@]}"; do COMMAND+=(-x "$word"); done
    else
        COMMAND=(mpiexec.mpich -n "$np" "${args[@]}")
        for word in "${env[@]}"; do COMMAND+=(-genv "${word%%=*}" "${word#*=}"); done
    fi
    COMMAND+=("$DEVICE_PACK/tandem/$mpi/$1" "${@:2}")
}

# launch BENCH MPI TRANSPORT CONFIG ROUND NP EXPECTED LIMIT PROGRAM ARGS...:
# one launch of a benchmark; its records, labelled, go to $WORK/BENCH.records,
# a problem to $WORK/BENCH.problems. Returns 1 when too little time is left.
launch() {
    local bench=$1 mpi=$2 transport=$3 config=$4 round=$5 np=$6 expected=$7 limit=$8
    shift 8
    local name=${config%%|*} rest=${config#*|} left=$((BUDGET - SECONDS))
    local with=${rest%%|*} variables=${rest#*|} key="$bench $mpi $transport $config $np"
    [ "$left" -ge 15 ] || return 1
    if [ -n "${TIMED_OUT[$key]:-}" ]; then # it would likely waste its time again
        json_str "$(family "$mpi") $transport $name $np ranks round $round: left out, killed after its time in round ${TIMED_OUT[$key]}" \
            >>"$WORK/$bench.problems"
        echo >>"$WORK/$bench.problems"
        return 0
    fi
    [ "$limit" -le "$left" ] || limit=$left
    # progress processes (one host): G more processes than the program's ranks
    [[ " $variables " =~ \ TANDEM_GHOSTS=([0-9]+)\  ]] && np=$((np + BASH_REMATCH[1]))
    command_line "$mpi" "$np" "$with" "${SETTINGS[$mpi-$transport]} $variables" "$@"
    run_bounded "$limit" "$expected" "$WORK/out" "$WORK/err" "${COMMAND[@]}"
    local label
    label=$(printf '"mpi": "%s", "transport": "%s", "config": "%s", "round": %d, "launched_ranks": %d, ' \
        "$(family "$mpi")" "$transport" "$name" "$round" "$np")
    # A record is one flat object on one line; a line that is not (seen
    # once on the device: two records run together, the end of the first
    # lost between the rank and the launcher) is counted as missing.
    grep -E '^\{[^{}]*\}$' "$WORK/out" | sed "s/^{/{$label/" >>"$WORK/$bench.records"
    local found broken
    found=$(grep -cE '^\{[^{}]*\}$' "$WORK/out")
    broken=$(($(grep -c '{' "$WORK/out") - found))
    if [ "$broken" -gt 0 ]; then
        json_str "$(family "$mpi") $transport $name $np ranks round $round: $broken broken record line(s) left out" \
            >>"$WORK/$bench.problems"
        echo >>"$WORK/$bench.problems"
    fi
    log "$bench $mpi $transport $name round $round, $np ranks: ${COMMAND[*]}"
    log "  exit $STATUS${KILLED:+ (killed: $KILLED)}, ${TOOK} ms, $found of $expected records"
    if [ "$STATUS" -ne 0 ] || [ "$found" -lt "$expected" ]; then
        tail -n 15 "$WORK/err" | sed 's/^/  | /' >>"$LOG"
        local what="exit $STATUS"
        [ "$KILLED" = finalize ] && what="still running 3 s after its results (MPI_Finalize), killed"
        if [ "$KILLED" = timeout ]; then
            what="killed after ${limit}s"
            TIMED_OUT[$key]=$round
        fi
        json_str "$(family "$mpi") $transport $name $np ranks round $round: $what, $found of $expected records; $(tail -n 3 "$WORK/err")" \
            >>"$WORK/$bench.problems"
        echo >>"$WORK/$bench.problems"
    fi
    render "$bench"
    return 0
}

# Write $OUT/BENCH.json from what was gathered so far.
render() {
    local bench=$1
    touch "$WORK/$bench.records" "$WORK/$bench.problems"
    {
        printf '{"benchmark": "%s", "date": "%s", "machine": %s, "quick": %s,\n' \
            "$bench" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$MACHINE" "$([ -n "$QUICK" ] && echo true || echo false)"
        printf '"settings": {'
        local key first=1
        for key in "${!SETTINGS[@]}"; do
            [ $first = 1 ] || printf ', '
            first=0
            printf '"%s": %s' "$key" "$(json_str "${SETTINGS[$key]}")"
        done
        printf '},\n"parameters": %s,\n' "${PARAMETERS[$bench]:-{\}}"
        printf '"problems": [\n'
        json_items "$WORK/$bench.problems"
        printf '],\n"records": [\n'
        json_items "$WORK/$bench.records"
        printf ']}\n'
    } >"$OUT/$bench.json.tmp" && mv "$OUT/$bench.json.tmp" "$OUT/$bench.json"
}

declare -A SETTINGS=() PARAMETERS=() TIMED_OUT=()
PARAMETERS[overlap]=$(printf '{"variants": "%s", "sizes": "%s", "trials": %d}' \
    "$VARIANTS" "$OVERLAP_SIZES" "$OVERLAP_TRIALS")
PARAMETERS[coll]=$(printf '{"collectives": "%s", "sizes": "%s", "trials": %d}' \
    "$COLLECTIVES" "$COLL_SIZES" "$COLL_TRIALS")
PARAMETERS[rma]=$(printf '{"sizes": "%s", "work_s": %s, "trials": %d}' \
    "$RMA_SIZES" "$RMA_WORK" "$RMA_TRIALS")
PARAMETERS[latency]=$(printf '{"sizes": "8", "trials": %d}' "$LATENCY_TRIALS")
PARAMETERS[smb]=$(printf '{"sizes": "%s", "iterations": %d}' "$SMB_SIZES" "$SMB_ITERATIONS")
PARAMETERS[halo]=$(printf '{"cells": %d, "halo_bytes": %d, "steps": %d, "trials": %d}' \
    "$HALO_CELLS" "$HALO_BYTES" "$HALO_STEPS" "$HALO_TRIALS")

# ------------------------------------------------------------- what works here
say "node probe"
NODE_PROBE=$(timeout 30 "$DEVICE_PACK/tandem/tandem-node-probe" 2>>"$LOG")
[ -n "$NODE_PROBE" ] || NODE_PROBE='{"failed": true}'
log "  $NODE_PROBE"
CMA_OK=0
[[ $NODE_PROBE == *'"cma": "ok"'* ]] && CMA_OK=1
# what simulated hosts (tandem run --hosts) would need: root, ip, tc, unshare
TOOLS=$(for tool in ip tc unshare nsenter; do printf '%s=%s ' "$tool" "$(command -v "$tool" || echo none)"; done)
SYSTEM=$(printf '{"nproc": %s, "affinity_list": %s, "dev_shm": %s, "interfaces": %s, "memlock": %s, "python3": %s, "uid": %s, "host_tools": %s}' \
    "$(nproc 2>/dev/null || echo 0)" \
    "$(json_str "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)")" \
    "$(json_str "$(grep -E ' /dev/shm ' /proc/mounts || echo 'not mounted')")" \
    "$(json_str "$(find /sys/class/net -mindepth 1 -maxdepth 1 -printf '%f ' 2>/dev/null)")" \
    "$(json_str "$(ulimit -l)")" \
    "$(json_str "$(command -v python3 || echo none)")" "$(id -u)" "$(json_str "$TOOLS")")

# Candidate settings for each MPI and transport, most faithful first: the
# first one under which the hello world runs is kept. Without CMA (gVisor
# may refuse process_vm_readv) those that need it are left out.
candidates() {
    case $1 in
    openmpi-shm)
        [ $CMA_OK = 1 ] && echo ""
        echo "--mca btl_vader_single_copy_mechanism none"
        echo "--mca btl_vader_single_copy_mechanism none --mca btl_vader_backing_directory /tmp --bind-to none"
        ;;
    openmpi-tcp)
        echo "--mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo"
        echo "--mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo --bind-to none"
        ;;
    mpich-shm)
        [ $CMA_OK = 1 ] && echo ""
        echo "UCX_TLS=^cma"
        echo "UCX_TLS=^cma -hosts localhost"
        # neither /dev/shm nor CMA: UCX's System V segments between node mates
        echo "MPIR_CVAR_NOLOCAL=1 UCX_TLS=self,sysv -hosts localhost"
        ;;
    mpich-tcp)
        echo "UCX_TLS=self,tcp MPIR_CVAR_NOLOCAL=1 UCX_NET_DEVICES=lo"
        echo "UCX_TLS=self,tcp MPIR_CVAR_NOLOCAL=1 UCX_NET_DEVICES=lo -hosts localhost"
        ;;
    esac
}

: >"$WORK/node.hello"
hello() { # MPI TRANSPORT NP WITH SETTINGS EXTRA-ENV
    local mpi=$1 transport=$2 np=$3 with=$4 settings=$5 extra=$6
    command_line "$mpi" "$np" "$with" "$settings $extra" tandem-hello
    run_bounded 20 1 "$WORK/out" "$WORK/err" "${COMMAND[@]}"
    log "hello $mpi $transport $np ranks ${with:-native}: ${COMMAND[*]}"
    log "  exit $STATUS${KILLED:+ (killed: $KILLED)}, ${TOOK} ms"
    local result ok=false
    result=$(grep -m1 '^{' "$WORK/out")
    # still in MPI_Finalize after a right answer (MPICH over UCX's TCP, at
    # times) counts as running: the benchmarks' records come before it too
    if { [ "$STATUS" -eq 0 ] || [ "$KILLED" = finalize ]; } &&
        [[ $result == *'"ring": "ok", "allreduce": "ok"'* ]]; then
        ok=true
    else
        tail -n 20 "$WORK/err" | sed 's/^/  | /' >>"$LOG"
    fi
    [ "$with" = tandem ] && sed 's/^/  tandem: /' "$WORK/err" >>"$LOG"
    printf '{"mpi": "%s", "transport": "%s", "ranks": %d, "tandem": %s, "settings": %s, "ok": %s, "exit": %d, "killed": "%s", "ms": %d, "result": %s, "error": %s}\n' \
        "$(family "$mpi")" "$transport" "$np" "$([ "$with" = tandem ] && echo true || echo false)" \
        "$(json_str "$settings $extra")" "$ok" "$STATUS" "$KILLED" "$TOOK" "${result:-null}" \
        "$(json_str "$([ $ok = true ] || tail -n 3 "$WORK/err")")" >>"$WORK/node.hello"
    [ $ok = true ]
}

render_node() {
    local key first=1
    {
        printf '{"benchmark": "node", "date": "%s", "machine": %s,\n"system": %s,\n"probe": %s,\n' \
            "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$MACHINE" "$SYSTEM" "$NODE_PROBE"
        printf '"settings": {'
        for key in "${!SETTINGS[@]}"; do
            [ $first = 1 ] || printf ', '
            first=0
            printf '"%s": %s' "$key" "$(json_str "${SETTINGS[$key]}")"
        done
        printf '},\n"hello": [\n'
        json_items "$WORK/node.hello"
        printf ']}\n'
    } >"$OUT/node.json.tmp" && mv "$OUT/node.json.tmp" "$OUT/node.json"
}

for mpi in "${MPIS[@]}"; do
    for transport in "${TRANSPORTS[@]}"; do
        while read -r settings; do
            if hello "$mpi" "$transport" 2 "" "$settings" ""; then
                SETTINGS[$mpi-$transport]=$settings
                break
            fi
        done < <(candidates "$mpi-$transport")
        if [ -n "${SETTINGS[$mpi-$transport]+set}" ]; then
            say "$(family "$mpi") $transport: runs with '${SETTINGS[$mpi-$transport]}'"
        else
            say "$(family "$mpi") $transport: no setting runs; its benchmarks are left out"
        fi
        render_node
    done
    # Tandem loaded (its configuration on stderr, in device.log), and where
    # the launcher puts as many ranks as the largest runs have.
    if [ -n "${SETTINGS[$mpi-shm]+set}" ]; then
        hello "$mpi" shm 2 tandem "${SETTINGS[$mpi-shm]}" "TANDEM_VERBOSE=1 TANDEM_PROGRESS=proxy"
        hello "$mpi" shm "${HALO_RANKS[-1]}" "" "${SETTINGS[$mpi-shm]}" ""
        hello "$mpi" shm "${HALO_RANKS[-1]}" tandem "${SETTINGS[$mpi-shm]}" "TANDEM_PROGRESS=proxy"
        render_node
    fi
done

# ------------------------------------------------------------- the benchmarks
# Configurations: NAME|tandem or empty|NAME=VALUE for the ranks (and
# launcher arguments), with DEVICE_AB's and DEVICE_BIND's added.
configs() { # BENCH MPI TRANSPORT
    local line name with rest bind=--bind-to
    [ "$2" = mpich ] && bind=-bind-to
    base_configs "$@" | while IFS= read -r line; do
        echo "$line"
        name=${line%%|*} rest=${line#*|}
        with=${rest%%|*}
        [ -n "$AB" ] && [ "$with" = tandem ] && echo "$name-ab|tandem-ab|${rest#*|}"
        [ -n "$ALSO" ] && [ "$with" = tandem ] && echo "$name-$ALSO_NAME|tandem|${rest#*|} $ALSO"
        if [ "$BIND" = core ] && [[ $name =~ ^(native|tandem-drive) ]]; then
            echo "$name-bound|$with|${rest#*|} $bind core"
        fi
    done
}

base_configs() { # BENCH MPI TRANSPORT
    local shm_off=""
    if [ "$ONLY" = cost ]; then
        echo "native||"
        echo "tandem-off|tandem|TANDEM_PROGRESS=off"
        echo "tandem-off-ghosts|tandem|TANDEM_PROGRESS=off TANDEM_GHOSTS=1"
        echo "tandem-drive|tandem|TANDEM_PROGRESS=drive"
        echo "tandem-drive-ghosts|tandem|TANDEM_PROGRESS=drive TANDEM_GHOSTS=1"
        return
    fi
    [ "$3" = tcp ] && shm_off=" TANDEM_COLL_SHM=0" # TCP stands for separate nodes
    echo "native||"
    if [ -n "$NATIVE_MULTIPLE" ]; then
        if [ "$2" = mpich ]; then
            echo "native-multiple||MPIR_CVAR_DEFAULT_THREAD_LEVEL=MPI_THREAD_MULTIPLE"
        else
            echo "native-multiple||OMPI_MPI_THREAD_LEVEL=3"
        fi
    fi
    # Tandem loaded with no setting at all: what TANDEM_PROGRESS=auto decides
    [ -n "$AUTO" ] && echo "tandem-auto|tandem|"
    if [ "$1" = coll ]; then
        echo "tandem-coll-drive|tandem|TANDEM_PROGRESS=drive TANDEM_COLL=tandem$shm_off"
        echo "tandem-coll|tandem|TANDEM_PROGRESS=proxy TANDEM_COLL=tandem$shm_off"
    else
        local poll
        for poll in $POLLS; do
            echo "tandem-drive-$poll|tandem|TANDEM_PROGRESS=drive TANDEM_POLL=$poll$TANDEM_ENV"
            echo "tandem-proxy-$poll|tandem|TANDEM_PROGRESS=proxy TANDEM_POLL=$poll$TANDEM_ENV"
        done
    fi
    [ "$2" = mpich ] && echo "mpich-async-thread||MPIR_CVAR_ASYNC_PROGRESS=1"
    # one-sided on MPICH: the progress processes serve MPI_Win_allocate windows
    # (over shared memory: the tcp rows make each process a host of its own,
    # MPIR_CVAR_NOLOCAL, with no room for a progress process)
    if [[ $1 =~ ^(rma|smb)$ ]] && [ "$2" = mpich ] && [ "$3" = shm ]; then
        echo "tandem-ghosts|tandem|TANDEM_GHOSTS=1 TANDEM_PROGRESS=off"
        echo "tandem-ghosts-no-offload|tandem|TANDEM_GHOSTS=1 TANDEM_PROGRESS=off TANDEM_RMA_OFFLOAD_LIMIT=0"
    fi
}

count() { # the items of a comma-separated list
    local -a items
    IFS=, read -ra items <<<"$1"
    echo "${#items[@]}"
}

# Every configuration of BENCH on NP ranks, in turn, for each MPI and transport.
phase() { # BENCH NP ROUND
    local bench=$1 np=$2 round=$3 mpi transport config expected limit
    local -a program
    case $bench in
    overlap)
        program=(tandem-bench-overlap "$VARIANTS" "$OVERLAP_SIZES" "$OVERLAP_TRIALS")
        expected=$(($(count "$VARIANTS") * $(count "$OVERLAP_SIZES")))
        ;;
    coll)
        program=(tandem-bench-coll-overlap "$COLLECTIVES" "$COLL_SIZES" "$COLL_TRIALS" 0)
        expected=$(($(count "$COLLECTIVES") * $(count "$COLL_SIZES")))
        ;;
    halo)
        program=(tandem-bench-halo "$HALO_CELLS" "$HALO_BYTES" "$HALO_STEPS" "$HALO_TRIALS")
        expected=1
        ;;
    latency)
        program=(tandem-bench-pingpong 8 "$LATENCY_TRIALS" 0)
        expected=1
        ;;
    smb)
        program=(tandem-bench-rma-smb get,put "$SMB_SIZES" "$SMB_ITERATIONS")
        expected=$((2 * $(count "$SMB_SIZES")))
        ;;
    rma-*)
        program=(tandem-bench-rma-passive "$RMA_SIZES" "$RMA_WORK" "$RMA_TRIALS" "${bench#rma-}")
        expected=$(count "$RMA_SIZES")
        bench=rma
        ;;
    esac
    limit=$((20 + 2 * np))
    # a get that waits for the whole computation: sizes x trials x work
    [ "$bench" = rma ] && limit=$((limit + expected * RMA_TRIALS * (${RMA_WORK%.*} + 1)))
    [ "$bench" = smb ] && limit=$((limit + 2 * expected))
    say "$bench, $np ranks, round $round"
    for mpi in "${MPIS[@]}"; do
        for transport in "${TRANSPORTS[@]}"; do
            [ -n "${SETTINGS[$mpi-$transport]+set}" ] || continue
            # Open MPI's windows of ranks on one host are its shared-memory
            # windows (osc sm) whatever the BTLs, and MPI_Win_create fails
            # with only self,tcp (natively too): nothing of TCP to measure
            [[ $bench =~ ^(rma|smb)$ ]] && [ "$mpi-$transport" = openmpi-tcp ] && continue
            while read -r config; do
                launch "$bench" "$mpi" "$transport" "$config" "$round" "$np" "$expected" \
                    "$limit" "${program[@]}" || return 1
            done < <(configs "$bench" "$mpi" "$transport")
        done
    done
}

for bench in overlap coll halo; do render "$bench"; done
[ "$ONLY" = rma ] && render rma
[ "$ONLY" = smb ] && render smb
[ "$ONLY" = cost ] && render latency
round=0
while [ "$ONLY" = smb ] && [ "$round" -lt "$MAX_ROUNDS" ]; do
    phase smb 2 $round || break
    round=$((round + 1))
done
while [ "$ONLY" = cost ] && [ "$round" -lt "$MAX_ROUNDS" ]; do
    phase latency 2 $round || break
    for np in 2 8; do
        phase halo "$np" $round || break 2
    done
    round=$((round + 1))
done
while [ "$ONLY" = rma ] && [ "$round" -lt "$MAX_ROUNDS" ]; do
    for flavour in "${RMA_FLAVOURS[@]}"; do
        phase "rma-$flavour" 2 $round || break 2
    done
    round=$((round + 1))
done
while [[ $ONLY =~ ^(overlap|overlap,coll)$ ]] && [ "$round" -lt "$MAX_ROUNDS" ]; do
    for np in "${OVERLAP_RANKS[@]}"; do
        phase overlap "$np" $round || break 2
    done
    if [ "$ONLY" = overlap,coll ]; then
        for np in "${COLL_RANKS[@]}"; do
            phase coll "$np" $round || break 2
        done
    fi
    round=$((round + 1))
done
while [[ $ONLY =~ ^(coll|halo|coll,halo)$ ]] && [ "$round" -lt "$MAX_ROUNDS" ]; do
    if [[ $ONLY =~ coll ]]; then
        for np in "${COLL_RANKS[@]}"; do
            phase coll "$np" $round || break 2
        done
    fi
    if [[ $ONLY =~ halo ]]; then
        for np in "${HALO_RANKS[@]}"; do
            phase halo "$np" $round || break 2
        done
    fi
    round=$((round + 1))
done
while [ -z "$ONLY" ] && [ "$round" -lt "$MAX_ROUNDS" ]; do
    # The targets' runs first, so that a slow machine still gives each its
    # first round: spare cores (overlap and coll, fewest ranks first), then
    # every core busy (the most ranks), then the rest of the ghost cells.
    for np in "${OVERLAP_RANKS[@]:0:${#OVERLAP_RANKS[@]}-1}"; do
        phase overlap "$np" $round || break 2
        for coll_np in "${COLL_RANKS[@]}"; do
            [ "$coll_np" = "$np" ] && { phase coll "$np" $round || break 3; }
        done
    done
    phase overlap "${OVERLAP_RANKS[-1]}" $round || break
    for ((i = ${#HALO_RANKS[@]} - 1; i >= 0; i--)); do
        phase halo "${HALO_RANKS[i]}" $round || break 2
    done
    round=$((round + 1))
done
say "done: $round whole round(s); results in $OUT"
for bench in overlap coll halo rma smb latency; do
    [ -f "$WORK/$bench.records" ] || continue
    say "  $bench: $(wc -l <"$WORK/$bench.records") records," \
        "$(grep -c . "$WORK/$bench.problems") problems"
done
rm -rf "$WORK"
