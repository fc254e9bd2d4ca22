#!/bin/bash
# make check-docs: the documentation the series adds builds cleanly.
#  - Sphinx (Debian's) builds the English trace book and the zh_CN trace
#    translation (SPHINXDIRS: only the touched directories) into
#    build/docs; a warning about a file the series adds or changes fails.
#  - scripts/kernel-doc -none -Wall on every C file the series changes
#    reports nothing that the base version of the file did not.
. "$(dirname "$0")/harness/common.sh"
set -e
out=$BUILD/docs
# From scratch: Sphinx only reports warnings for the files it reads.
rm -rf "$out"
mkdir -p "$out" "$LOGS"
t0=$(date +%s)
command -v sphinx-build >/dev/null || die "no sphinx-build (make deps installs python3-sphinx)"
changed=$(git -C "$TREE" diff --name-only base..HEAD)
bad=0

for dir in trace translations/zh_CN/trace; do
	log=$LOGS/docs-${dir//\//_}.log
	if ! make -s -C "$TREE" O="$out" SPHINXDIRS="$dir" \
		SPHINXOPTS="-j$JOBS" htmldocs > "$log" 2>&1; then
		tail -20 "$log" >&2
		die "htmldocs failed for $dir (log: ${log#"$TOP"/})"
	fi
	total=$(grep -c -E 'WARNING|ERROR' "$log" || true)
	ours=$(grep -E 'WARNING|ERROR' "$log" | grep -F -f <(echo "$changed" | grep '^Documentation/') || true)
	say "check-docs: Documentation/$dir: $total warnings in all, $(echo -n "$ours" | grep -c . || true) in the series' files"
	if [ -n "$ours" ]; then
		echo "$ours" >&2
		bad=1
	fi
done

# The examples cannot drift: every definition the document writes into
# function_events is run by the selftest fevent_doc_examples.tc, or by
# fevent_doc_examples_net.tc for those that need a packet.
doc=$TREE/Documentation/trace/function-based-events.rst
tc=$TREE/tools/testing/selftests/ftrace/test.d/dynevent/fevent_doc_examples.tc
n=0
while IFS= read -r def; do
	n=$((n + 1))
	grep -qF -- "'$def'" "$tc" "${tc%.tc}_net.tc" || {
		say "check-docs: '$def' (function-based-events.rst) is not in ${tc#"$TREE"/} nor its _net.tc"
		bad=1
	}
done < <(sed -n "s/^ *# echo '\(.*\)' > function_events\$/\1/p" "$doc")
say "check-docs: $n definitions in function-based-events.rst, all in fevent_doc_examples.tc and fevent_doc_examples_net.tc"

for f in $(echo "$changed" | grep -E '\.[ch]$'); do
	new=$("$TREE/scripts/kernel-doc" -none -Wall "$TREE/$f" 2>&1 |
		sed 's|^.*/'"$(basename "$f")"':[0-9]*: ||' | sort)
	old=
	if git -C "$TREE" cat-file -e "base:$f" 2>/dev/null; then
		tmp=$(mktemp --suffix=".${f##*.}")
		git -C "$TREE" show "base:$f" > "$tmp"
		old=$("$TREE/scripts/kernel-doc" -none -Wall "$tmp" 2>&1 |
			sed 's|^.*/'"$(basename "$tmp")"':[0-9]*: ||' | sort)
		rm -f "$tmp"
	fi
	added=$(comm -13 <(echo "$old") <(echo "$new") | grep . || true)
	if [ -n "$added" ]; then
		say "kernel-doc: new warnings in $f:"
		echo "$added" >&2
		bad=1
	fi
done
say "check-docs: kernel-doc -none -Wall: $(echo "$changed" | grep -c -E '\.[ch]$') files, no new warnings"
phase_done docs "$t0"
[ $bad = 0 ] || die "documentation warnings"
echo "check-docs: OK (HTML in build/docs/)"
