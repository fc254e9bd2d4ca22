#!/bin/bash
# Build the kernel at every patch of the series (incrementally, in its own
# object directory so that the main build stays warm).
. "$(dirname "$0")/harness/common.sh"
set -e
obj=$BUILD/obj-bisect
head=$(git -C "$TREE" rev-parse HEAD)
[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	die "build/linux has uncommitted changes"
trap 'git -C "$TREE" checkout -q master' EXIT
for c in $(git -C "$TREE" rev-list --reverse base..master); do
	git -C "$TREE" checkout -q "$c"
	say "== $(git -C "$TREE" log -1 --format='%h %s' "$c")"
	# Configure at every patch, so that options a patch adds are on.
	rm -f "$obj/.fragments"
	KCONFIG_CHECK=0 "$TOP/scripts/build.sh" "$obj" ||
		die "the build fails at $(git -C "$TREE" log -1 --format='%h %s' "$c")"
done
[ "$(git -C "$TREE" rev-parse master)" = "$head" ] ||
	die "build/linux's master moved during the run"
echo "check-bisect: every patch builds"
