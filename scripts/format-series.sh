#!/bin/bash
# make format-patch [SETS="fixes fgraph"]: write each series of
# patches/sets as mail into build/outgoing/N-NAME/: git format-patch
# with [PATCH n/N] numbering, base-commit: (and the prerequisite patch
# ids of the series before it), the cover letter of patches/covers/ with
# git's shortlog and diffstat under it, and To:/Cc: from the tree's
# scripts/get_maintainer.pl (maintainers To:, reviewers and lists Cc:).
# Then git send-email build/outgoing/N-NAME/*.patch sends one.
. "$(dirname "$0")/harness/common.sh"
set -e
[ -d "$TREE/.git" ] || die "no build/linux (make tree)"
scripts/export.sh --check >/dev/null || die "build/linux and patches/ differ (make export)"
mapfile -t commits < <(git -C "$TREE" rev-list --reverse base..HEAD)
out=$BUILD/outgoing
# The cover letters are from the patches' author
author=$(git -C "$TREE" log -1 --format=%an HEAD)
email=$(git -C "$TREE" log -1 --format=%ae HEAD)
want=" ${SETS:-} "
i=0 rc=0 covered=0
while read -r name first last _; do
	case "$name" in ''|'#'*) continue;; esac
	i=$((i + 1))
	[ "$first" = $((covered + 1)) ] || die "patches/sets: $name starts at $first, not $((covered + 1))"
	covered=$last
	[ -z "${SETS:-}" ] || [[ "$want" == *" $name "* ]] || continue
	cover=$TOP/patches/covers/$i-$name.txt
	[ -f "$cover" ] || die "no cover letter $cover"
	range=${commits[first - 1]}~1..${commits[last - 1]}
	dir=$out/$i-$name
	rm -rf "$dir" "$dir.tmp"
	# Who to send it to, from the patches themselves
	git -C "$TREE" format-patch -q -o "$dir.tmp" "$range"
	gm() {
		(cd "$TREE" && perl scripts/get_maintainer.pl --no-git --no-git-fallback \
			--no-rolestats --no-fixes --no-tree "$@" "$dir".tmp/*.patch) | paste -sd, -
	}
	to=$(gm --m --no-r --no-l)
	cc=$(gm --no-m --r --l)
	rm -rf "$dir.tmp"
	GIT_COMMITTER_NAME=$author GIT_COMMITTER_EMAIL=$email \
		git -C "$TREE" format-patch -q --cover-letter --numbered --thread=shallow \
		--base="$(git -C "$TREE" rev-parse base)" --to="$to" --cc="$cc" \
		-o "$dir" "$range"
	# The cover letter: our subject and text in place of git's markers
	subject=$(sed -n '1s/^Subject: //p' "$cover")
	[ -n "$subject" ] || die "$cover: no Subject: line"
	SUBJECT=$subject BLURB=$(tail -n +3 "$cover") perl -0pi -e \
		's/\*\*\* SUBJECT HERE \*\*\*/$ENV{SUBJECT}/; s/\*\*\* BLURB HERE \*\*\*/$ENV{BLURB}/' \
		"$dir"/0000-cover-letter.patch
	n=$((last - first + 1))
	got=$(find "$dir" -name '*.patch' ! -name 0000-cover-letter.patch | wc -l)
	[ "$got" = "$n" ] || { say "$name: $got patches, not $n"; rc=1; }
	say "$dir: [PATCH 0/$n] $subject (To: ${to:-nobody})"
done < "$TOP/patches/sets"
[ "$covered" = "${#commits[@]}" ] || die "patches/sets covers $covered of ${#commits[@]} patches"
exit $rc
