#!/bin/sh
# KTAP: run after everything else; a kmemleak scan must find nothing.
K=/sys/kernel/debug/kmemleak
echo "1..1"
if grep -q 'kmemleak=off' /proc/cmdline; then
	echo "ok 1 kmemleak # SKIP off in this job (kmemleak=off)"
	exit 0
fi
if [ ! -e $K ]; then
	echo "not ok 1 kmemleak: no /sys/kernel/debug/kmemleak"
	exit 1
fi
# Objects younger than 5 s are not reported: scan, wait, scan again.
# A scan is refused once kmemleak has turned itself off (out of memory,
# or an internal error): then it found nothing because it looked at nothing.
if ! echo scan > $K || ! { sleep 6; echo scan > $K; }; then
	echo "not ok 1 kmemleak: scan refused (kmemleak turned itself off)"
	exit 1
fi
n=$(grep -c '^unreferenced object' $K)
if [ "$n" -eq 0 ]; then
	echo "ok 1 kmemleak: no suspected leaks"
else
	cat $K
	echo "not ok 1 kmemleak: $n suspected leaks"
	exit 1
fi
