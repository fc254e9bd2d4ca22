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
# took ten minutes under TCG, half the boot job.
#
# While every function is hooked, everything is slow under TCG with
# KASAN: one write of the demo's, timed from a shell (sh -c, whose own
# fork and exec take 9 s then), takes 10 to 32 s, where it takes
# milliseconds without F:all.  The function events' retire work was
# reported blocked for more than 120 s, the hung-task detector's
# default, meant for hardware, in one CI run, and for 238 s and more in
# a probe run here with three guests on two CPUs: its stack is
# fevent_retire_workfn() in __mutex_lock() for event_mutex, which the
# demo's own shell holds meanwhile, running, not blocked: the demo
# timed under sh -x spent 164 s in one write, the removal of its
# histogram trigger ('!hist:...' > trigger), whose map's elements are
# freed one kfree() at a time under event_mutex, each kfree() a hooked
# function (58 s to create it).  The test gives the
# detector 1800 s while F:all is enabled (the whole case took 925 s in a
# loaded run here): a task blocked that long is still reported, and the
# job's own timeout stops a real hang.
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
	hung=/proc/sys/kernel/hung_task_timeout_secs
	hung0=
	if [ -w $hung ]; then
		hung0=$(cat $hung)
		echo 1800 > $hung
		# back to the default however the test ends (t() runs it in
		# a subshell of its own)
		trap 'echo "$hung0" > $hung' EXIT
	fi
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
	run_dd if=/proc/self/status of=/dev/null bs=64 count=2
	echo 0 > $I/tracing_on
	check "disabled" sh -c "echo 0 > $I/events/globtest/all/enable"
	check "nothing of it hooked any more" \
		test "$(wc -l < enabled_functions)" = "$before"
	if [ -n "$hung0" ]; then
		echo "$hung0" > $hung
		trap - EXIT
	fi
	# Read once and unhooked: read while every function of the reader
	# records, the buffer took minutes
	cat $I/trace > /tmp/all.trace
	nf=$(grep ' all: ' /tmp/all.trace | sed 's/.*->\([^ (]*\)(.*/\1/' | sort -u | wc -l)
	echo "# dd: calls of $nf different functions recorded"
	check "calls of at least 200 different functions" test "$nf" -ge 200
	check "dd's read among them" \
		grep -q -- "-$DD  *\[.* all: .*->vfs_read()\$" /tmp/all.trace
	rm /tmp/all.trace
	rmdir $I
	check "removed" sh -c 'echo "-:globtest/all" >> function_events'
}
echo "1..1"
t "an event over every function (F:all *()) records and leaves" all
exit $fail
