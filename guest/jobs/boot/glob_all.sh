#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# One function event over every traceable function, F:all *(): enabled,
# it hooks every function ftrace lists with one update; the kernel keeps
# working while it records: make run's demo checks its values, and the
# verdict fails the run on any report; it records calls of many
# functions for one dd; disabled, it leaves nothing hooked.  It records
# in an instance of its own: the other boot tests read the top buffer.
# The trace is read once the event is disabled: read while every
# function of the reader records (grep and sed over 16 MB of trace), it
# took ten minutes under TCG, half the boot job, and in one CI run the
# hung-task detector reported a kworker blocked for over 120 s meanwhile.
# Prints KTAP.
cd /sys/kernel/tracing || exit 1
# shellcheck source-path=SCRIPTDIR source=lib
. /fbe/boot/lib
I=instances/globtest
all() {
	check "F:all *() is defined" \
		sh -c 'echo "F:globtest/all *()" >> function_events'
	mkdir $I
	echo 0 > $I/tracing_on
	echo 8192 > $I/buffer_size_kb
	before=$(wc -l < enabled_functions)
	funcs=$(wc -l < available_filter_functions)
	check "enabled" sh -c "echo 1 > $I/events/globtest/all/enable"
	echo "# $funcs functions; enabled_functions: $before lines before," \
	     "$(wc -l < enabled_functions) with F:all"
	check "every traceable function hooked" \
		test "$(wc -l < enabled_functions)" = "$funcs"
	: "the system goes on working with it enabled: the demo checks its values"
	echo 1 > $I/tracing_on
	# its status is a check of its own, after its values
	rc=0
	/fbe/demo > /tmp/demo-all.out 2>&1 || rc=$?
	check "the demo checked all its values with F:all enabled" \
		test "$(grep -c '   ok: ' /tmp/demo-all.out)" = 9
	check "the demo exits 0 with F:all enabled" test $rc = 0
	: "what it records of one dd, in an emptied buffer"
	echo 0 > $I/tracing_on
	echo > $I/trace
	echo 1 > $I/tracing_on
	dd if=/proc/self/status of=/dev/null bs=64 count=2 2> /dev/null
	echo 0 > $I/tracing_on
	check "disabled" sh -c "echo 0 > $I/events/globtest/all/enable"
	check "nothing of it hooked any more" \
		test "$(wc -l < enabled_functions)" = "$before"
	# Read once and unhooked: read while every function of the reader
	# records, the buffer took minutes
	cat $I/trace > /tmp/all.trace
	nf=$(grep ' all: ' /tmp/all.trace | sed 's/.*->\([^ (]*\)(.*/\1/' | sort -u | wc -l)
	echo "# dd: calls of $nf different functions recorded"
	check "calls of at least 200 different functions" test "$nf" -ge 200
	check "dd's read among them" \
		grep -q ' dd-.* all: .*->vfs_read()$' /tmp/all.trace
	rm /tmp/all.trace
	rmdir $I
	check "removed" sh -c 'echo "-:globtest/all" >> function_events'
}
echo "1..1"
t "an event over every function (F:all *()) records and leaves" all
exit $fail
