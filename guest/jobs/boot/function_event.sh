#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Boot parameter function_event=, run by the guest init before ftracetest.
# make check boots with
#   function_event="vfs_read(x64 file, NULL, size_t count);kernel_clone();
#                   do_filp_open(int dfd, string name+0[0]);
#                   vfs_read%return(count, string container_of(file->f_inode,
#                       struct proc_inode, vfs_inode)->pde->name, $retval)"
#   trace_instance=boot_inst
# The last one names its fields through BTF, takes a container_of() with
# its commas and spaces, and is an exit event: all work from the command
# line.
# Prints KTAP.
cd /sys/kernel/tracing || exit 1
# shellcheck source-path=SCRIPTDIR source=lib
. /fbe/boot/lib
if [ ! -e function_events ]; then
	echo "1..1"
	echo "not ok 1 boot: no function_events in this kernel"
	exit 1
fi
EVENTS="vfs_read kernel_clone do_filp_open vfs_read__exit"

defined() {
	check "vfs_read listed" \
		grep -qx 'vfs_read(x64 file, NULL, size_t count)' function_events
	check "kernel_clone listed" grep -qx 'kernel_clone()' function_events
	check "do_filp_open listed" \
		grep -qx 'do_filp_open(int dfd, string name+0\[0\])' function_events
	check "vfs_read%return listed" \
		grep -qxF 'vfs_read%return(count, string container_of(file->f_inode, struct proc_inode, vfs_inode)->pde->name, $retval)' function_events
	check "four definitions" test "$(grep -c . function_events)" = 4
	# an event added while tracefs was set up could get none (patch 1)
	for e in $EVENTS; do
		check "the directory of $e" test -f events/functions/$e/enable
	done
}
# trace_instance=boot_inst: see kprobe_event.sh
instance() {
	for e in $EVENTS; do
		check "the directory of $e in the instance" \
			test -f instances/boot_inst/events/functions/$e/enable
	done
}
enabled() {
	for e in $EVENTS; do
		check "$e enabled" test "$(cat events/functions/$e/enable)" = 1
	done
}
records() {
	echo > trace
	# known data: 3 reads of 7 bytes, one fork, one open of a known name
	run_dd if=/proc/version of=/dev/null bs=7 count=3
	dd1=$DD
	sh -c true
	run_dd if=/etc/passwd of=/dev/null bs=1 count=1
	# stop first: reading trace calls vfs_read, which adds events
	echo 0 > tracing_on
	cp trace /tmp/fe.txt
	echo 1 > tracing_on
	check "3 reads of 7 bytes by dd" \
		test "$(grep -c -- "-$dd1  *\[.*vfs_read(file=0x[0-9a-f]*, count=7)\$" /tmp/fe.txt)" = 3
	check "3 returns of 7 bytes of /proc/version to dd" \
		test "$(grep -c -- "-$dd1  *\[.*<-vfs_read(count=7, name=version, retval=7)\$" /tmp/fe.txt)" = 3
	check "a kernel_clone record" grep -q 'kernel_clone()$' /tmp/fe.txt
	check "the open of /etc/passwd" \
		grep -q 'do_filp_open(dfd=-100, name=/etc/passwd)$' /tmp/fe.txt
}
removable() {
	echo 0 > events/functions/enable
	echo > function_events
	if grep -q . function_events; then
		echo "still listed: $(cat function_events)"
		return 1
	fi
	check "directories gone" test ! -d events/functions/vfs_read
}

echo "1..5"
t "function_event= defines the events" defined
t "a boot instance has the function_event= events" instance
t "function_event= enables the events" enabled
t "the boot-time function events record" records
t "the boot-time function events can be removed" removable
exit $fail
