#!/bin/bash
# make check-harness: the harness checked as code, without a kernel: the
# shell scripts of the harness and of the guest linted (not the .tc files
# of the series), pyflakes on every Python module, and the self-test
# (scripts/test/harness_test.py).  Each writes its result to the result
# channel (scripts/harness/results.py); ends with their sum.
. "$(dirname "$0")/harness/common.sh"
results_begin "make check-harness"
mkdir -p "$LOGS"
rc=0
cd "$TOP" || exit 1
# The shell scripts: bash on the host, POSIX sh in the guest
mapfile -t shells < <({ ls .ci/run scripts/*.sh scripts/harness/*.sh guest/init guest/demo \
	guest/*.sh guest/jobs/*.sh guest/jobs/*/*.sh guest/jobs/boot/lib; } 2>/dev/null | sort -u)
t0=$(date +%s)
# -x: follow what a script sources (guest/jobs/boot/lib, scripts/harness/common.sh)
if shellcheck -x -S warning "${shells[@]}"; then
	results add shellcheck --passed 1 --seconds $(( $(date +%s) - t0 ))
else
	results add shellcheck --failed 1 --seconds $(( $(date +%s) - t0 ))
	rc=1
fi
echo "shellcheck -x -S warning: ${#shells[@]} scripts"
mapfile -t pys < <(ls scripts/*.py scripts/harness/*.py scripts/test/*.py)
t0=$(date +%s)
if pyflakes3 "${pys[@]}"; then
	results add pyflakes --passed 1 --seconds $(( $(date +%s) - t0 ))
else
	results add pyflakes --failed 1 --seconds $(( $(date +%s) - t0 ))
	rc=1
fi
echo "pyflakes3: ${#pys[@]} modules"
# make check counts the self-test's cases; here it is one check more
t0=$(date +%s)
if python3 scripts/test/harness_test.py > "$LOGS/harness_test.out" 2>&1; then
	results add self-test --passed 1 --seconds $(( $(date +%s) - t0 ))
else
	results add self-test --failed 1 --seconds $(( $(date +%s) - t0 ))
	rc=1
fi
tail -1 "$LOGS/harness_test.out"
results total --step "$FBE_STEP" || rc=1
exit $rc
