#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Boot-parameter tests, run by the guest init before ftracetest (which
# would clear the events first).  "make check" boots with
#   kprobe_event=p:kprobes/boot_probe,vfs_read
# Prints KTAP.
cd /sys/kernel/tracing || exit 1
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

defined() { grep -q '^p:kprobes/boot_probe vfs_read' kprobe_events; }
enabled() { test "$(cat events/kprobes/boot_probe/enable)" = 1; }
records() {
	echo > trace
	dd if=/proc/version of=/dev/null bs=16 count=4 2>/dev/null
	# stop first: reading trace calls vfs_read, which adds events
	echo 0 > tracing_on
	grep -q 'boot_probe: (vfs_read+0x' trace
	echo 1 > tracing_on
}
removable() {
	echo 0 > events/kprobes/boot_probe/enable
	echo '-:kprobes/boot_probe' >> kprobe_events
	! grep -q boot_probe kprobe_events
}

echo "TAP version 13"
echo "1..4"
t "kprobe_event= defines the event" defined
t "kprobe_event= enables the event" enabled
t "the boot-time kprobe event records" records
t "the boot-time kprobe event can be removed" removable
exit $fail
