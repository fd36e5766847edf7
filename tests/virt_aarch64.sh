#!/bin/sh
# The AArch64 switch (src/virt/switch_aarch64.S) with the unit test of the
# switch, the stacks and the scheduler, cross-compiled; run under
# qemu-aarch64 when it is given (its second argument), else only built.
#
#   virt_aarch64.sh CROSS_CC [QEMU] ROOT OUT
set -eu
cc=$1 qemu=$2 root=$3 out=$4
mkdir -p "$out"
"$cc" -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -static -pthread \
    -I"$root/src" -I"$root/tests/unit" \
    "$root/tests/unit/test_virt_sched.c" "$root/src/virt/context.c" "$root/src/virt/sched.c" \
    "$root/src/virt/stack.c" "$root/src/virt/switch_aarch64.S" -lm -o "$out/test_virt_sched"
echo "built $out/test_virt_sched for AArch64"
if [ -n "$qemu" ]; then
    "$qemu" "$out/test_virt_sched"
else
    echo "qemu-aarch64 is not installed: built, not run"
fi
