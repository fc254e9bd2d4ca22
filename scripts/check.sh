#!/bin/bash
# make check: the harness self-test, then every guest job on the one
# kernel (scripts/check.py), then one summary.
#   TESTS=...     a subset (.tc files or directories, anywhere on disk), one job
#   KCMDLINE=...  added to the kernel command line
#   ONLY=fuzz     only the fuzzer (make fuzz); ONLY=boot, ONLY=ci (check.py)
#   DEADLINE=S    hand out no ftracetest case after S seconds (CI's budget)
#   ARCH=arm64    the kernel and guests of another architecture (scripts/arch.py)
#   SLOW=1        config/slow-tests too
. "$(dirname "$0")/common.sh"
summary=$BUILD/summary
mkdir -p "$LOGS"
rm -f "$summary"
rc=0
t0=$(date +%s)
echo "=== harness self-test (canned guest consoles)"
python3 "$TOP/scripts/selftest.py" > "$LOGS/selftest.out" 2>&1 || rc=1
cat "$LOGS/selftest.out"
python3 - "$LOGS/selftest.out" >> "$summary" <<'PY' || { echo "0 1 0" >> "$summary"; rc=1; }
import re, sys
m = re.search(r'^(\d+) passed, (\d+) failed$', open(sys.argv[1]).read(), re.M)
print(m.group(1), m.group(2), 0)
PY
args=()
[ -n "$TESTS" ] && read -ra tests <<< "$TESTS" && args+=(--tests "${tests[@]}")
[ -n "$ONLY" ] && args+=(--only "$ONLY")
[ -n "$DEADLINE" ] && args+=(--deadline "$DEADLINE")
[ -n "$SLOW" ] && [ "$SLOW" != 0 ] && args+=(--slow)
python3 "$TOP/scripts/check.py" --summary "$summary" --kcmdline "$KCMDLINE" "${args[@]}" || rc=1
phase_done "guests${ARCH:+-$ARCH}" "$t0"
[ -s "$summary" ] || { echo "error: no results at all"; rc=1; }
awk '{p+=$1; f+=$2; s+=$3} END {printf "\n=== total\n%d passed, %d failed, %d skipped\n", p, f, s; exit f > 0}' "$summary" || rc=1
exit $rc
