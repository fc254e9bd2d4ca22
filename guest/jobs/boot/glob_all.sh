#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# One function event over every traceable function, F:all *(): enabled,
# it hooks every function ftrace lists with one update, records calls of
# many while the system works, and the kernel keeps working: make run's
# demo checks its values while it is enabled, and the verdict fails the
# run on any report; disabled, it leaves nothing hooked.  It
# records in an instance of its own: the other boot tests read the top
# buffer.
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
	echo 1 > $I/tracing_on
	dd if=/proc/self/status of=/dev/null bs=64 count=2 2> /dev/null
	echo 0 > $I/tracing_on
	nf=$(grep ' all: ' $I/trace | sed 's/.*->\([^ (]*\)(.*/\1/' | sort -u | wc -l)
	echo "# dd: calls of $nf different functions recorded"
	check "calls of at least 200 different functions" test "$nf" -ge 200
	check "dd's read among them" \
		grep -q ' dd-.* all: .*->vfs_read()$' $I/trace
	: "the system goes on working with it enabled: the demo checks its values"
	echo 1 > $I/tracing_on
	# its status is a check of its own, after its values
	rc=0
	/fbe/demo > /tmp/demo-all.out 2>&1 || rc=$?
	check "the demo checked all its values with F:all enabled" \
		test "$(grep -c '   ok: ' /tmp/demo-all.out)" = 9
	check "the demo exits 0 with F:all enabled" test $rc = 0
	check "disabled" sh -c "echo 0 > $I/events/globtest/all/enable"
	check "nothing of it hooked any more" \
		test "$(wc -l < enabled_functions)" = "$before"
	rmdir $I
	check "removed" sh -c 'echo "-:globtest/all" >> function_events'
}
echo "1..1"
t "an event over every function (F:all *()) records and leaves" all
exit $fail
