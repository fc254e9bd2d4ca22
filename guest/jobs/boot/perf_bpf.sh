#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# BPF on function events: perf_event_set_bpf_prog() takes kprobe, uprobe
# and tracepoint events only, so attaching a BPF program to a function
# event fails with EINVAL, whatever the program type, as it does for
# fprobe events (Documentation/trace/function-based-events.rst, "perf and
# BPF").  The controls show the same program attaching where it may.
# Runs after function_event.sh, which removes the boot-time events.
# Prints KTAP.
cd /sys/kernel/tracing || exit 1
# shellcheck source-path=SCRIPTDIR source=lib
. /fbe/boot/lib
BPF=/fbe/bin/fevent-bpf
if [ ! -e function_events ] || [ ! -x $BPF ]; then
	echo "1..1"
	echo "not ok 1 perf_bpf: no function events or no $BPF"
	exit 1
fi

tracepoint_ok() {
	check "a tracepoint program on sched:sched_switch" \
		test "$($BPF "$(cat events/sched/sched_switch/id)" tracepoint)" = ok
}
# $BPF exits 1, printing nothing, when it can not try: that is for the
# checks to say, after the event is removed
kprobe_ok() {
	echo 'p:kprobes/bpf_kp vfs_read' >> kprobe_events
	r=$($BPF "$(cat events/kprobes/bpf_kp/id)" kprobe) || true
	echo '-:kprobes/bpf_kp' >> kprobe_events
	check "a kprobe program on a kprobe event" test "$r" = ok
}
fevent_einval() {
	echo 'vfs_read(NULL, NULL, size_t count)' >> function_events
	id=$(cat events/functions/vfs_read/id) || true
	r1=$($BPF "$id" tracepoint) || true
	r2=$($BPF "$id" kprobe) || true
	echo '-:functions/vfs_read' >> function_events
	check "a tracepoint program is refused: $r1" test "$r1" = EINVAL
	check "a kprobe program is refused: $r2" test "$r2" = EINVAL
	check "the event is gone" test ! -d events/functions/vfs_read
}

echo "1..3"
t "BPF attaches to a tracepoint" tracepoint_ok
t "BPF attaches to a kprobe event" kprobe_ok
t "BPF on a function event fails with EINVAL" fevent_einval
exit $fail
