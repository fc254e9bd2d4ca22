#!/bin/sh
# KTAP: concurrent control operations against hits (guest/fuzz/fevent-stress.c)
modprobe fevent-sample || echo "# fevent-sample did not load"
/fbe/bin/fevent-stress -t "${STRESS_SECS:-60}"
rc=$?
rmmod fevent_sample 2>/dev/null
exit $rc
