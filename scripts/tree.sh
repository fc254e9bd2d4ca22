#!/bin/bash
# Expand the series: build/linux becomes a git repo holding the base as one
# commit (tag "base") and one commit per patch in patches/series.
# An existing tree is reused (reset to its base), so rebuilds stay
# incremental; it refuses to drop commits that were not exported.
. "$(dirname "$0")/common.sh"
set -e
src=$("$TOP/scripts/fetch-base.sh")
mkdir -p "$BUILD"
export GIT_AUTHOR_DATE='1767225600 +0000' GIT_COMMITTER_DATE='1767225600 +0000'

if [ -d "$TREE/.git" ] && git -C "$TREE" rev-parse -q --verify base >/dev/null; then
	if "$TOP/scripts/export.sh" --check >/dev/null 2>&1; then
		if [ "$(git -C "$TREE" log -1 --format=%s base)" = "base: $(basename "$src")" ]; then
			say "build/linux is up to date with patches/"
			exit 0
		fi
	elif [ -z "$FORCE" ]; then
		die "build/linux has commits or changes that are not in patches/ (make export first, or FORCE=1)"
	fi
	if [ "$(git -C "$TREE" log -1 --format=%s base)" != "base: $(basename "$src")" ]; then
		say "base changed: recreating build/linux"
		rm -rf "$TREE"
	fi
fi
if [ ! -d "$TREE/.git" ]; then
	say "creating build/linux from $src"
	rm -rf "$TREE"
	mkdir -p "$TREE"
	cp -a "$src/." "$TREE/"
	rm -f "$TREE/.unpacked"
	git -C "$TREE" init -q -b master
	git -C "$TREE" config core.autocrlf false
	git -C "$TREE" config gc.auto 0
	git -C "$TREE" add -A -f .
	git -C "$TREE" commit -q -m "base: $(basename "$src")"
	git -C "$TREE" tag base
fi
cd "$TREE"
git am --abort >/dev/null 2>&1 || true
git checkout -q -f master
git reset -q --hard base
git clean -q -fdx
n=0
while read -r p; do
	case "$p" in ''|'#'*) continue;; esac
	if ! out=$(git am -q --committer-date-is-author-date "$TOP/patches/$p" 2>&1); then
		git am --abort >/dev/null 2>&1 || true
		printf '%s\n' "$out" >&2
		die "patch $p does not apply"
	fi
	n=$((n + 1))
done < <(cat "$TOP/patches/series" 2>/dev/null)
say "build/linux: base + $n patches"
