#!/bin/sh
# KTAP: the parser fuzzer (guest/fuzz/fevent-fuzz.c) against function_events
# and, as a control, kprobe_events.  FUZZ_N, FUZZ_KN and FUZZ_SEED come
# from the harness (/fbe/env).
modprobe fevent-sample || echo "# fevent-sample did not load"
/fbe/bin/fevent-fuzz -n "${FUZZ_N:-20000}" -k "${FUZZ_KN:-2000}" -s "${FUZZ_SEED:-1}" \
	-e "${FUZZ_EVERY:-32}"
rc=$?
rmmod fevent_sample 2>/dev/null
exit $rc
