#!/bin/bash
# make check-arches: the series' C files with W=1 for every architecture
# of scripts/harness/arch.py's TARGETS (scripts/check-arches.py), each config one
# result on the result channel (scripts/harness/results.py); ends with their sum.
#   [ARCHES="arm64 riscv64"] scripts/check-arches.sh
. "$(dirname "$0")/harness/common.sh"
results_begin "make check-arches"
t0=$(date +%s)
rc=0
python3 "$TOP/scripts/check-arches.py" || rc=1
phase_done check-arches "$t0"
results total --step "$FBE_STEP" || rc=1
exit $rc
