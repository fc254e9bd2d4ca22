#!/bin/bash
# Build the kernel at every patch of the series (incrementally, in its own
# object directory so that the main build stays warm).  PATCHES="13-27 34"
# builds only at those patches (numbers of patches/series).
. "$(dirname "$0")/harness/common.sh"
set -e
obj=$BUILD/obj-bisect
head=$(git -C "$TREE" rev-parse HEAD)
[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	die "build/linux has uncommitted changes"
trap 'git -C "$TREE" checkout -q master' EXIT
mapfile -t all < <(git -C "$TREE" rev-list --reverse base..master)
picked=()
for r in ${PATCHES:-1-${#all[@]}}; do
	for ((n = ${r%-*}; n <= ${r#*-}; n++)); do
		[ "$n" -ge 1 ] && [ "$n" -le "${#all[@]}" ] || die "no patch $n"
		picked+=("${all[n - 1]}")
	done
done
for c in "${picked[@]}"; do
	git -C "$TREE" checkout -q "$c"
	say "== $(git -C "$TREE" log -1 --format='%h %s' "$c")"
	# Configure at every patch, so that options a patch adds are on.
	rm -f "$obj/.fragments"
	KCONFIG_CHECK=0 "$TOP/scripts/build.sh" "$obj" ||
		die "the build fails at $(git -C "$TREE" log -1 --format='%h %s' "$c")"
done
[ "$(git -C "$TREE" rev-parse master)" = "$head" ] ||
	die "build/linux's master moved during the run"
echo "check-bisect: ${PATCHES:-every patch}: ${#picked[@]} builds, each one passes"
