#!/bin/bash
# make check: the harness self-test, then every guest job on the one
# kernel (scripts/check.py), then one summary: what each wrote to the
# result channel (scripts/harness/results.py), added up.
#   TESTS=...     a subset (.tc files or directories, anywhere on disk), one job
#   KCMDLINE=...  added to the kernel command line
#   ONLY=fuzz     only the fuzzer (make fuzz); ONLY=boot, ONLY=ci (check.py)
#   DEADLINE=S    hand out no ftracetest case after S seconds (CI's budget)
#   ARCH=arm64    the kernel and guests of another architecture (scripts/harness/arch.py)
#   SLOW=1        config/lists/slow-tests too
. "$(dirname "$0")/harness/common.sh"
results_begin "make check${ARCH:+ ARCH=$ARCH}${ONLY:+ ONLY=$ONLY}"
mkdir -p "$LOGS"
rc=0
t0=$(date +%s)
echo "=== harness self-test (canned guest consoles)"
python3 "$TOP/scripts/test/harness_test.py" --record || rc=1
args=()
[ -n "$TESTS" ] && read -ra tests <<< "$TESTS" && args+=(--tests "${tests[@]}")
[ -n "$ONLY" ] && args+=(--only "$ONLY")
# In CI (.ci/run sets FBE_CI_START), the x86_64 run gets a deadline too,
# against CI's hard stop (CI_LIMIT, 90 minutes), not the budget the
# later steps aim at: a machine slower than the one that measured the
# weights, or a kernel built anew, skips the cases left (skipped, not
# failed) rather than run past the stop, which lands nothing.  600 s
# go to the cases handed out last and the jobs' ends, 600 s to the
# steps after this one.  A run that 2026-11-27's CI machine finished in
# 3,752 s of its 5,400 never meets it.
if [ -z "$DEADLINE" ] && [ -n "$FBE_CI_START" ] && [ -z "$ARCH$ONLY$TESTS" ]; then
	DEADLINE=$(( ${CI_LIMIT:-5400} - 1200 - ($(date +%s) - FBE_CI_START) ))
	[ "$DEADLINE" -ge 600 ] || DEADLINE=600
	echo "=== CI: no ftracetest case handed out after ${DEADLINE}s (CI_LIMIT=${CI_LIMIT:-5400})"
fi
[ -n "$DEADLINE" ] && args+=(--deadline "$DEADLINE")
[ -n "$SLOW" ] && [ "$SLOW" != 0 ] && args+=(--slow)
python3 "$TOP/scripts/check.py" --kcmdline "$KCMDLINE" "${args[@]}" || rc=1
phase_done "guests${ARCH:+-$ARCH}" "$t0"
printf '\n=== total\n'
results total --step "$FBE_STEP" || rc=1
exit $rc
