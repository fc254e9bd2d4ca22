#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make run's demo (guest/demo, at /fbe/demo) on the boot job's kernel: it
# checks every value it shows against the data it read, and touches only
# its own events, so it runs beside the command line's.
# Prints KTAP.
# shellcheck source-path=SCRIPTDIR source=lib
. /fbe/boot/lib
demo() {
	# its status is a check of its own, after its values
	rc=0
	/fbe/demo > /tmp/demo.out 2>&1 || rc=$?
	# shown, not checked: none is what the next check reports
	grep -E 'WRONG|ok:' /tmp/demo.out || true
	check "the demo checked all its values" \
		test "$(grep -c '   ok: ' /tmp/demo.out)" = 9
	check "the demo exits 0" test $rc = 0
	check "the demo left no event behind" \
		test ! -d /sys/kernel/tracing/events/demo
}
echo "1..1"
t "make run's demo shows right values" demo
exit $fail
