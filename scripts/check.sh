#!/bin/bash
# make check: build, then the ftracetest run(s) in QEMU, then one summary.
#   TESTS=...     a subset (.tc files or directories, anywhere on disk)
#   KCMDLINE=...  added to the kernel command line
. "$(dirname "$0")/common.sh"
set -e
summary=$BUILD/summary
rm -f "$summary"
rc=0
if [ -n "$TESTS" ]; then
	# shellcheck disable=SC2086
	python3 "$TOP/scripts/qemu.py" check --name check --summary "$summary" \
		--kcmdline "$KCMDLINE" --tests $TESTS || rc=1
else
	python3 "$TOP/scripts/qemu.py" check --name check --summary "$summary" \
		--kcmdline "$KCMDLINE" || rc=1
	# Boot parameters: a boot of its own, with the definitions on the
	# command line, checked before anything clears them.
	python3 "$TOP/scripts/qemu.py" check --name boot --summary "$summary" \
		--kcmdline "kprobe_event=p:kprobes/boot_probe,vfs_read function_event=\"vfs_read(x64 file, NULL, size_t count);kernel_clone()\" $KCMDLINE" \
		--boot-tests "$TOP"/tests/boot/*.sh --tests none || rc=1
fi
awk '{p+=$1; f+=$2; s+=$3} END {printf "\n=== total\n%d passed, %d failed, %d skipped\n", p, f, s}' "$summary"
exit $rc
