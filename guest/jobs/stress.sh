#!/bin/sh
# KTAP: concurrent control operations against hits (guest/tools/fevent-stress.c).
# The hits are calls into the sample module: a failed modprobe fails the run.
if ! modprobe fevent-sample; then
	echo "1..1"
	echo "not ok 1 stress: modprobe fevent-sample failed"
	exit 1
fi
/fbe/bin/fevent-stress -t "${STRESS_SECS:-60}"
rc=$?
# A reference the events left on the module keeps it: that fails the run
rmmod fevent_sample || { echo "# rmmod fevent_sample failed"; rc=1; }
exit $rc
