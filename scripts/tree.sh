#!/bin/bash
# Expand the series: build/linux becomes a git repo holding the base as one
# commit (tag "base") and one commit per patch in patches/series.
# An existing tree is reused (reset to its base), so rebuilds stay
# incremental; it refuses to drop commits that were not exported.
. "$(dirname "$0")/harness/common.sh"
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
	# The base, committed once into a repository in the cache: hashing
	# its 1.7 GB took a fresh clone longer than checking it out does
	repo=$src.git
	if [ ! -f "$repo/base-committed" ]; then
		say "committing the base into ${repo#"$HOME"/} (once)"
		rm -rf "$repo" "$repo.tmp"
		git init -q --bare -b master "$repo.tmp"
		git -C "$repo.tmp" config core.autocrlf false
		git -C "$repo.tmp" config gc.auto 0
		GIT_DIR=$repo.tmp GIT_WORK_TREE=$src git add -A -f -- . ':!.unpacked'
		GIT_DIR=$repo.tmp GIT_WORK_TREE=$src git commit -q -m "base: $(basename "$src")"
		git -C "$repo.tmp" tag base
		rm -f "$repo.tmp/index"
		touch "$repo.tmp/base-committed"
		mv "$repo.tmp" "$repo"
	fi
	say "creating build/linux from ${repo#"$HOME"/}"
	rm -rf "$TREE"
	git clone -q --no-checkout "$repo" "$TREE"
	git -C "$TREE" remote remove origin
	git -C "$TREE" config core.autocrlf false
	git -C "$TREE" config gc.auto 0
	git -C "$TREE" checkout -q -B master base
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
