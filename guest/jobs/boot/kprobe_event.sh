#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Boot-parameter tests, run by the guest init before ftracetest (which
# would clear the events first).  make check boots with
#   kprobe_event=p:kprobes/boot_probe,vfs_read trace_instance=boot_inst
# Prints KTAP.
cd /sys/kernel/tracing || exit 1
# shellcheck source-path=SCRIPTDIR source=lib
. /fbe/boot/lib

defined() {
	check "listed" grep -qx 'p:kprobes/boot_probe vfs_read' kprobe_events
	# an event added while tracefs was set up could get none (patch 1)
	check "its directory" test -f events/kprobes/boot_probe/enable
}
# An instance made at boot gets its event directories after the events
# added at boot: one added before must get its directory then, without
# a "Failed to create system directory" on the way (patch 1)
instance() {
	check "its directory in the instance" \
		test -f instances/boot_inst/events/kprobes/boot_probe/enable
	if dmesg | grep 'Failed to create system directory'; then
		return 1
	fi
}
enabled() {
	check "enabled" test "$(cat events/kprobes/boot_probe/enable)" = 1
}
records() {
	echo > trace
	run_dd if=/proc/version of=/dev/null bs=16 count=4
	# stop first: reading trace calls vfs_read, which adds events
	echo 0 > tracing_on
	# none is for the check below to say, after tracing is on again
	grep 'boot_probe: (vfs_read+0x' trace > /tmp/kp.txt || true
	echo 1 > tracing_on
	# dd's 4 reads of /proc/version at least (a read of the trace is not)
	check "4 or more records" test "$(grep -c -- "-$DD  *\[" /tmp/kp.txt)" -ge 4
}
removable() {
	echo 0 > events/kprobes/boot_probe/enable
	echo '-:kprobes/boot_probe' >> kprobe_events
	if grep -q boot_probe kprobe_events; then
		echo "still listed"
		return 1
	fi
	check "directory gone" test ! -d events/kprobes/boot_probe
}

echo "1..5"
t "kprobe_event= defines the event" defined
t "a boot instance has the kprobe_event= event" instance
t "kprobe_event= enables the event" enabled
t "the boot-time kprobe event records" records
t "the boot-time kprobe event can be removed" removable
exit $fail
