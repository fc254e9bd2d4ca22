#!/bin/bash
# checkpatch --strict on every patch of the series: 0 errors, warnings,
# checks.  Exceptions: config/lists/checkpatch-exceptions ("<patch> <TYPE> reason").
. "$(dirname "$0")/harness/common.sh"
rc=0
n=0
exc=$TOP/config/lists/checkpatch-exceptions
while read -r p; do
	case "$p" in ''|'#'*) continue;; esac
	n=$((n + 1))
	ignore=$(awk -v p="$p" '$1 == p {printf "%s,", $2}' "$exc" 2>/dev/null)
	out=$(cd "$TREE" && ./scripts/checkpatch.pl --strict --no-tree -q \
		--ignore "FILE_PATH_CHANGES,${ignore%,}" "$TOP/patches/$p" 2>&1)
	if [ -n "$out" ]; then
		printf '%s\n%s\n\n' "== $p" "$out"
		rc=1
	else
		echo "ok: $p"
	fi
done < "$TOP/patches/series"
echo "checkpatch --strict: $n patches, $([ $rc = 0 ] && echo clean || echo NOT clean)"
exit $rc
