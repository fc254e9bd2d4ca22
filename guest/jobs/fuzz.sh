#!/bin/sh
# KTAP: the parser fuzzer (guest/tools/fevent-fuzz.c) against function_events
# and, as a control, kprobe_events.  FUZZ_N, FUZZ_KN and FUZZ_SEED come
# from the harness (/fbe/env).  The fuzzer enables and fires events on the
# sample module's functions: without the module it would test less than
# it claims, so a failed modprobe fails the run.
if ! modprobe fevent-sample; then
	echo "1..1"
	echo "not ok 1 fuzz: modprobe fevent-sample failed"
	exit 1
fi
# The fuzzer fails an allocation of some writes (fail-nth), of any kind
# shellcheck source-path=SCRIPTDIR source=../boot/lib
. /fbe/boot/lib
fail_nth_knobs
/fbe/bin/fevent-fuzz -n "${FUZZ_N:-20000}" -k "${FUZZ_KN:-2000}" -s "${FUZZ_SEED:-1}" \
	-e "${FUZZ_EVERY:-32}"
rc=$?
# A reference the events left on the module keeps it: that fails the run
rmmod fevent_sample || { echo "# rmmod fevent_sample failed"; rc=1; }
exit $rc
