#!/bin/sh
k=$1
shift
cpus=$(awk -v k="$k" '/^Cpus_allowed_list/ {
    n = split($2, parts, ","); out = ""; c = 0
    for (i = 1; i <= n && c < k; i++) {
        m = split(parts[i], r, "-"); hi = m > 1 ? r[2] : r[1]
        for (x = r[1] + 0; x <= hi + 0 && c < k; x++) { out = out (c ? "," : "") x; c++ }
    }
    print out }' /proc/self/status)
exec taskset -c "$cpus" "$@"
