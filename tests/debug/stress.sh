#!/bin/sh
# KTAP: concurrent control operations against hits (guest/fuzz/fevent-stress.c).
# The hits are calls into the sample module: a failed modprobe fails the run.
if ! modprobe fevent-sample; then
	echo "1..1"
	echo "not ok 1 stress: modprobe fevent-sample failed"
	exit 1
fi
/fbe/bin/fevent-stress -t "${STRESS_SECS:-60}"
rc=$?
rmmod fevent_sample 2>/dev/null
exit $rc
