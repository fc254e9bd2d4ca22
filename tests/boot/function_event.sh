#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Boot parameter function_event=, run by the guest init before ftracetest.
# "make check" boots with
#   function_event="vfs_read(x64 file, NULL, size_t count);kernel_clone()"
# Prints KTAP.
cd /sys/kernel/tracing || exit 1
if [ ! -e function_events ]; then
	echo "1..0 # SKIP no function_events in this kernel"
	exit 0
fi
n=0
fail=0
t() { # description command...
	desc=$1
	shift
	n=$((n + 1))
	if ( set -e; "$@" ) >/tmp/boot-test.log 2>&1; then
		echo "ok $n boot: $desc"
	else
		echo "# $(tail -5 /tmp/boot-test.log)"
		echo "not ok $n boot: $desc"
		fail=1
	fi
}

defined() {
	grep -qx 'vfs_read(x64 file, NULL, size_t count)' function_events
	grep -qx 'kernel_clone()' function_events
}
enabled() {
	test "$(cat events/functions/vfs_read/enable)" = 1
	test "$(cat events/functions/kernel_clone/enable)" = 1
}
records() {
	echo > trace
	dd if=/proc/version of=/dev/null bs=7 count=1 2>/dev/null
	sh -c true
	# stop first: reading trace calls vfs_read, which adds events
	echo 0 > tracing_on
	grep -q 'vfs_read(file=0x[0-9a-f]*, count=7)' trace
	grep -q 'kernel_clone()' trace
	echo 1 > tracing_on
}
removable() {
	echo 0 > events/functions/enable
	echo > function_events
	! grep -q . function_events
}

echo "TAP version 13"
echo "1..4"
t "function_event= defines the events" defined
t "function_event= enables the events" enabled
t "the boot-time function events record" records
t "the boot-time function events can be removed" removable
exit $fail
