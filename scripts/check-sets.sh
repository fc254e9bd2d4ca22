#!/bin/bash
# make check-sets [SETS="fixes fgraph"] [ARCHES="x86_64 arm64"]: each series
# of patches/sets at its last patch, as a maintainer who takes it alone
# has it: the kernel built on each architecture (make check's config, in
# build/obj-bisect and build/obj-bisect-ARCH, incrementally), and on
# x86_64 the selftests the set touches, in one boot (the fourth column of
# patches/sets, paths under ftracetest's test.d; "-": the set's end is
# the series' end, which make check tests).  Not in CI: a cold run is
# about two hours here.  make check-bisect builds every patch.
. "$(dirname "$0")/harness/common.sh"
set -e
[ -d "$TREE/.git" ] || die "no build/linux (make tree)"
head=$(git -C "$TREE" rev-parse HEAD)
[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	die "build/linux has uncommitted changes"
trap 'git -C "$TREE" checkout -q master' EXIT
mapfile -t all < <(git -C "$TREE" rev-list --reverse base..master)
want=" ${SETS:-} "
arches=${ARCHES:-x86_64 arm64}
td=$TREE/tools/testing/selftests/ftrace/test.d
n=0 failed=()
while read -r name first last tests; do
	case "$name" in ''|'#'*) continue ;; esac
	[ -z "${SETS:-}" ] || [[ "$want" == *" $name "* ]] || continue
	[ "$last" -le "${#all[@]}" ] || die "patches/sets: $name ends at $last, past the series"
	c=${all[last - 1]}
	git -C "$TREE" checkout -q "$c"
	say "== $name ($first-$last): $(git -C "$TREE" log -1 --format='%h %s' "$c")"
	n=$((n + 1))
	for a in $arches; do
		obj=$BUILD/obj-bisect
		[ "$a" = x86_64 ] || obj=$BUILD/obj-bisect-$a
		# Configure at the set's end: options later patches add are absent
		rm -f "$obj/.fragments"
		if ! ARCH=$a KCONFIG_CHECK=0 "$TOP/scripts/build.sh" "$obj"; then
			failed+=("$name: the $a build")
			continue
		fi
		[ "$a" = x86_64 ] && [ "$tests" != - ] || continue
		paths=()
		for t in $tests; do
			[ -e "$td/$t" ] || die "patches/sets: $name: no test.d/$t at its end"
			paths+=("$td/$t")
		done
		python3 "$TOP/scripts/qemu.py" check --obj "$obj" --name "set-$name" \
			--tests "${paths[@]}" || failed+=("$name: its selftests")
	done
done < "$TOP/patches/sets"
[ "$(git -C "$TREE" rev-parse master)" = "$head" ] ||
	die "build/linux's master moved during the run"
[ "$n" -gt 0 ] || die "no set named in SETS=\"$SETS\""
if [ ${#failed[@]} -gt 0 ]; then
	printf 'check-sets: failed: %s\n' "${failed[@]}"
	exit 1
fi
echo "check-sets: ${SETS:-every set}: $n sets at their ends, built ($arches), their selftests pass"
