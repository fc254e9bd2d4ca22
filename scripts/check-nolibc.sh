#!/bin/bash
# make check-nolibc: function events where Debian has no user space
# (scripts/nolibc.py).  For each architecture of scripts/harness/arch.py's NOLIBC
# (ppc32: a 32-bit big-endian ABI with 64-bit arguments in register
# pairs; riscv64: exit events on fgraph there), a small kernel is built
# with and without BTF and booted with guest/nolibc/fevent-test.c as its
# init, which checks what function events record against known values
# and a kprobe event reading the registers, and prints KTAP.  Each kernel
# writes its counts to the result channel (scripts/harness/results.py); ends with
# their sum, "N passed, N failed, N skipped".
#   [NOLIBC_ARCHES="ppc32"] [BTF="y n"] scripts/check-nolibc.sh
. "$(dirname "$0")/harness/common.sh"
results_begin "make check-nolibc"
t0=$(date +%s)
rc=0
python3 "$TOP/scripts/nolibc.py" || rc=1
phase_done nolibc "$t0"
results total --step "$FBE_STEP" || rc=1
exit $rc
