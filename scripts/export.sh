#!/bin/bash
# Write the commits base..HEAD of build/linux into patches/ (deterministic).
# With --check, only compare and exit non-zero when they differ.
. "$(dirname "$0")/harness/common.sh"
set -e
[ -d "$TREE/.git" ] || die "no build/linux (make tree)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$TREE" format-patch -q --zero-commit --no-signature --no-numbered \
	--no-stat --stat=80 -o "$tmp" base..HEAD >/dev/null
(cd "$tmp" && ls -1 -- *.patch 2>/dev/null) > "$tmp/series" || true
if [ "$1" = --check ]; then
	rc=0
	if [ -n "$(git -C "$TREE" status --porcelain --untracked-files=no)" ]; then
		say "build/linux has uncommitted changes"
		rc=1
	fi
	for f in "$tmp"/*.patch "$tmp/series"; do
		[ -e "$f" ] || continue
		cmp -s "$f" "$TOP/patches/$(basename "$f")" ||
			{ say "differs: patches/$(basename "$f")"; rc=1; }
	done
	for f in "$TOP"/patches/[0-9]*.patch; do
		[ -e "$f" ] || continue
		[ -e "$tmp/$(basename "$f")" ] || { say "stale: patches/$(basename "$f")"; rc=1; }
	done
	exit $rc
fi
mkdir -p "$TOP/patches"
find "$TOP/patches" -maxdepth 1 -name '[0-9]*.patch' -delete
cp "$tmp"/*.patch "$TOP/patches/" 2>/dev/null || true
cp "$tmp/series" "$TOP/patches/series"
say "exported $(wc -l < "$TOP/patches/series") patches"
