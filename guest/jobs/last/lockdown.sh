#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Kernel lockdown: function events read kernel memory, so like kprobe
# events (LOCKDOWN_KPROBES) they are refused once the kernel is locked
# down for confidentiality.  Locking down can not be undone, and it shuts
# tracefs and debugfs, so this runs last in the boot job, after the leak
# scan.  Files opened before the lockdown stay open: writes through them
# reach the create and enable code, which must refuse.
# Prints KTAP.
cd /sys/kernel/tracing || exit 1
# shellcheck source-path=SCRIPTDIR source=../boot/lib
. /fbe/boot/lib
L=/sys/kernel/security/lockdown
# securityfs may be mounted already: the check below is what counts
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
if [ ! -e function_events ] || ! grep -q confidentiality $L; then
	echo "1..1"
	echo "not ok 1 lockdown: no function events or no lockdown in this kernel"
	exit 1
fi

echo > function_events
echo 'vfs_read(x64 file)' > function_events
exec 3>>function_events 4>>kprobe_events 5<function_events \
	6>events/functions/vfs_read/enable

before() {
	check "not locked down yet" grep -q '\[none\]' $L
	check "a kprobe event can be defined" \
		sh -c "echo 'p:kprobes/lockdown_before vfs_read' >&4"
	echo '-:kprobes/lockdown_before' >&4
}
locked() {
	echo confidentiality > $L
	check "locked down" grep -q '\[confidentiality\]' $L
	if echo 'p:kprobes/lockdown_kp vfs_read' >&4 2>/dev/null; then
		echo "kprobe event defined under lockdown"
		return 1
	fi
}
refused() {
	if echo 'kernel_clone()' >&3 2>/dev/null; then
		echo "function event defined under lockdown"
		return 1
	fi
	check "only the event defined before" test "$(cat <&5)" = 'vfs_read(x64 file)'
	if echo 1 >&6 2>/dev/null; then
		echo "function event enabled under lockdown"
		return 1
	fi
}

echo "1..3"
t "kprobe events work before the lockdown" before
t "lockdown=confidentiality refuses kprobe events" locked
t "lockdown=confidentiality refuses function events" refused
exit $fail
