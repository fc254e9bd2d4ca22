#!/bin/sh
# SC2016: the definitions' $retval and $argN are tracefs syntax, literal on
# purpose.  SC2317: prep_OP, call_OP, ok_OP, err_OP and partial_OP are
# reached only through their names in $OP, which shellcheck can not follow.
# shellcheck disable=SC2016,SC2317
# KTAP: systematic fault injection.  For each operation on function, kprobe
# and fprobe events, for n = 1, 2, ..., fail the n-th allocation of the one
# system call that does it (/proc/thread-self/fail-nth, failslab and
# fail_page_alloc: guest/tools/fevent-failnth.c), until the call completes
# without reaching its n-th allocation.  Then check what is true:
#   - the call failed: nothing changed (the listing, the event directories,
#     each enable file, the hooks in enabled_functions, the modules), and
#     the events still record what they did;
#   - it succeeded: the events it made or enabled record exactly what dd
#     (3 reads of 123 bytes) or the sample module's call file (3 calls) did;
#   - a write that enables several events at once, which may be left partly
#     done: each event's enable file says whether it records.
# An anomaly fails the job for function events; for kprobe and fprobe
# events, the base's, it is reported and counted.
# A call with more than FAULT_MAX allocations fails the last FAULT_MAX/2
# of them (where the events' own work comes, after the system call's)
# and FAULT_MAX/2 spread evenly over the others.  Every iteration starts
# from nothing: all events disabled and removed, the module loaded, and
# the operation's own preparation.
T=/sys/kernel/tracing
D=/sys/kernel/debug
H=/fbe/bin/fevent-failnth
MAX=${FAULT_MAX:-35}
[ -n "$FAULT_TRACE" ] && set -x
CALL=$D/fevent_sample/call
KO=

FA='F:fa vfs_read(NULL, NULL, size_t count)'
FB='F:fb vfs_read(string file->f_path.dentry->d_name.name, count)'
FX='F:fx vfs_read%return(count, $retval)'
FG='F:fg vfs_rea?(NULL, NULL, size_t count)'
FM='F:fm fevent_sample:fevent_sample_call(NULL, int seq)'
FGM='F:fgm fevent_sample:fevent_sample_c*(NULL, int seq)'
KA='p:kprobes/ka vfs_read count=$arg3:u64'
FPA='f:fprobes/fpa vfs_read count=$arg3:u64'

say() { echo "# $*"; }

text_of() {
	case $1 in
	fa) echo "$FA" ;; fb) echo "$FB" ;; fx) echo "$FX" ;; fg) echo "$FG" ;;
	fm) echo "$FM" ;; fgm) echo "$FGM" ;; ka) echo "$KA" ;; fpa) echo "$FPA" ;;
	esac
}

dir_of() { # EVENT [INSTANCE]
	case $1 in
	ka) g=kprobes ;; fpa) g=fprobes ;; *) g=functions ;;
	esac
	echo "${2:-$T}/events/$g/$1"
}

# What the record of each event's hit looks like, and what makes 3 hits
record_of() {
	case $1 in
	fa|fg) echo " $1: .*vfs_read(count=123)\$" ;;
	fb) echo " fb: .*vfs_read(name=zero, count=123)\$" ;;
	fx) echo " fx: .*vfs_read(count=123, retval=123)\$" ;;
	fm|fgm) echo " $1: .*fevent_sample_call(seq=[012])\$" ;;
	ka|fpa) echo " $1: (vfs_read+.*) count=123\$" ;;
	esac
}

hit() { # EVENT: 3 hits of its function, by dd or by the sample module
	case $1 in
	fm|fgm) echo 3 > $CALL ;;
	*) dd if=/dev/zero of=/dev/null bs=123 count=3 2> /dev/null ;;
	esac
}

# EVENT [INSTANCE]: its enable file says whether it records: 3 records of
# 3 hits if it says 1, none if it says 0
records() {
	read -r on < "$(dir_of "$1" "$2")/enable" || return 1
	tr=${2:-$T}
	# Recording only while the function is called: reading the trace
	# is a vfs_read() too
	echo > "$tr/trace"
	echo 1 > "$tr/tracing_on"
	hit "$1"
	echo 0 > "$tr/tracing_on"
	got=$(grep -c "$(record_of "$1")" "$tr/trace")
	want=0
	[ "$on" = 1 ] && want=3
	[ "$got" = "$want" ] && return 0
	say "$1${2:+ in $2}: enable says $on, $got records of 3 hits, want $want"
	grep -v '^#' "$tr/trace" | head -5 | sed 's/^/#   /'
	return 1
}

define() { # EVENT: define it, fail on error
	case $1 in
	ka) f=kprobe_events ;; fpa) f=dynamic_events ;; *) f=function_events ;;
	esac
	echo "$(text_of "$1")" >> $T/$f
}

# The state an error must leave as it was
snap() {
	cat $T/dynamic_events
	# Each enable file, the groups' too
	for g in $T/events/functions $T/events/kprobes $T/events/fprobes \
		 $T/instances/fault/events/functions; do
		[ -d $g ] && grep -H . $g/enable $g/*/enable
	done
	# A dynamic trampoline's address changes when it is made again
	sed 's/tramp: 0x[0-9a-f]*/tramp/' $T/enabled_functions
	[ -d /sys/module/fevent_sample ] && echo "module loaded"
}

# From nothing: no event enabled nor defined, nothing hooked, the module
# loaded unless $1 is "away"
reset() {
	for g in functions kprobes fprobes; do
		[ -d $T/events/$g ] && echo 0 > $T/events/$g/enable
	done
	echo 0 > $T/tracing_on
	if [ -d $T/instances/fault ]; then
		echo 0 > $T/instances/fault/events/enable
		rmdir $T/instances/fault
	fi
	echo > $T/dynamic_events || return 1
	# Disabled functions leave the filters in batches: wait for them
	i=0
	while read -r _ < $T/enabled_functions; do
		i=$((i + 1))
		[ $i -gt 100 ] && { say "reset: hooks stay"; cat $T/enabled_functions; return 1; }
		sleep 0.05
	done
	if [ "$1" = away ]; then
		[ -d /sys/module/fevent_sample ] && { rmmod fevent_sample || return 1; }
	else
		[ -d /sys/module/fevent_sample ] || modprobe fevent-sample || return 1
	fi
	echo > $T/trace
}

# Operations: prep_OP prepares, call_OP N makes the one call, ok_OP checks
# a success, err_OP an error beyond "nothing changed" (partial_OP instead
# of both for a write that may be left partly done).

# define EVENT
prep_define() { :; }
call_define() { $H "$1" write $T/$FILE "$(text_of $EV)"; }
ok_define() {
	grep -q "^[a-zA-Z]*:[a-z]*/$EV " $T/dynamic_events || { say "$EV not listed"; return 1; }
	echo 1 > "$(dir_of $EV)/enable" && records $EV
}

# enable EVENT
prep_enable() { define $EV; }
call_enable() { $H "$1" write "$(dir_of $EV)/enable" 1; }
ok_enable() { records $EV && test "$(cat "$(dir_of $EV)/enable")" = 1; }
err_enable() { records $EV; }

# disable EVENT
prep_disable() { define $EV && echo 1 > "$(dir_of $EV)/enable"; }
call_disable() { $H "$1" write "$(dir_of $EV)/enable" 0; }
ok_disable() { records $EV && test "$(cat "$(dir_of $EV)/enable")" = 0; }
err_disable() { records $EV; }

# remove EVENT, another staying
prep_remove() { define $EV && define fb; }
call_remove() {
	case $EV in
	ka) g=kprobes ;; fpa) g=fprobes ;; *) g=functions ;;
	esac
	$H "$1" write $T/dynamic_events "-:$g/$EV"
}
ok_remove() {
	if grep -q "[:/]$EV " $T/dynamic_events || [ -d "$(dir_of $EV)" ]; then
		say "$EV stays"
		return 1
	fi
	echo 1 > "$(dir_of fb)/enable" && records fb
}

# remove all: open function_events with O_TRUNC
prep_trunc() { define fa && define fb && define fx && define fg; }
call_trunc() { $H "$1" trunc $T/function_events; }
ok_trunc() {
	if grep -q . $T/function_events || ls -d $T/events/functions/*/ 2> /dev/null; then
		say "events stay"
		return 1
	fi
}

# a group write: GROUPFILE is written 1, with fa, fx and fg defined
prep_group() {
	define fa && define fx && define fg || return 1
	[ -z "$INST" ] || { mkdir $T/instances/fault && echo 0 > $T/instances/fault/tracing_on; }
}
call_group() { $H "$1" write "$GROUPFILE" "$GROUPTEXT"; }
partial_group() { # RET
	for ev in fa fx fg; do
		records $ev "$INST" || return 1
		if [ "$1" = 0 ] && [ "$(cat "$(dir_of $ev "$INST")/enable")" != 1 ]; then
			say "$ev not enabled by a write that succeeded"
			return 1
		fi
	done
}

# load the module with enabled events on its functions
prep_load() { define fm && define fgm && echo 1 > $T/events/functions/enable; }
call_load() { $H "$1" insmod "$KO"; }
ok_load() {
	# The sample's debugfs_create_file() may fail, and its load goes on
	# (debugfs's callers ignore its errors by design): nothing calls the
	# functions then.  Not the events' doing, and nothing to check.
	if [ ! -e $CALL ]; then
		say "the load made no $CALL: the events are not checked"
		return 0
	fi
	records fm && records fgm
}

# unload the module with enabled events on its functions
prep_unload() { prep_load; }
call_unload() { $H "$1" rmmod fevent_sample; }
ok_unload() {
	if [ -d /sys/module/fevent_sample ]; then
		say "the module stays"
		return 1
	fi
	# The events stay enabled, and record when the module comes back
	modprobe fevent-sample && records fm && records fgm
}
err_unload() { records fm && records fgm; }

# One iteration: 0 if what is true holds
try() { # N
	reset $AWAY && prep_$OP || { say "n=$1: could not prepare"; return 1; }
	snap > /tmp/before
	# The helper prints "ret=R injected=I left=L": three words, split
	# shellcheck disable=SC2046
	set -- "$1" $(call_$OP "$1")
	ret=${2#ret=} inj=${3#injected=}
	case $ret in
	''|*[!0-9-]*) say "n=$1: the helper failed"; return 1 ;;
	esac
	[ "$inj" = 1 ] && injected=$((injected + 1))
	[ "$ret" != 0 ] && errors=$((errors + 1))
	if command -v partial_$OP > /dev/null; then
		partial_$OP "$ret" && return 0
		say "n=$1: returned $ret"
		return 1
	fi
	if [ "$ret" = 0 ]; then
		ok_$OP && return 0
		say "n=$1: succeeded, but the event does not work"
		return 1
	fi
	snap > /tmp/after
	if ! cmp -s /tmp/before /tmp/after; then
		say "n=$1: failed with $ret, and changed:"
		diff /tmp/before /tmp/after | head -20 | sed 's/^/#   /'
		return 1
	fi
	if command -v err_$OP > /dev/null && ! err_$OP; then
		say "n=$1: failed with $ret, and the events do not record"
		return 1
	fi
	return 0
}

# The n to try for a call of $1 allocations.  A call that makes none (a
# disable that only takes the event out of a hash) has nothing to fail:
# it is said, as a skip, and must work.
plan() {
	# FAULT_NS: these n only (those the call reaches), to aim at one path
	if [ -n "$FAULT_NS" ]; then
		for n in $FAULT_NS; do
			[ "$n" -le "$1" ] && echo "$n"
		done
		return
	fi
	if [ "$1" -le "$MAX" ]; then
		seq 1 "$1"
		return
	fi
	awk -v t="$1" -v h=$((MAX / 2)) 'BEGIN {
		for (i = 0; i < h; i++) print 1 + int(i * (t - h) / h)
		for (n = t - h + 1; n <= t; n++) print n
	}'
}

nr=0
failed=0
total=0
probe_total=0
probe_bad=0
KIND=function
ops=''
run() { # DESCRIPTION OP: the operation's loop, one KTAP line
	desc=$1 OP=$2 injected=0 errors=0 bad=0
	nr=$((nr + 1))
	# FAULT_OPS: these operations only (define enable ... load unload)
	case " ${FAULT_OPS:-$OP} " in
	*" $OP "*) ;;
	*) echo "ok $nr fault: $desc # SKIP not in FAULT_OPS"; return ;;
	esac
	# Its allocations, nothing failed
	if ! reset $AWAY || ! prep_$OP; then
		echo "not ok $nr fault: $desc: could not prepare"
		failed=1
		return
	fi
	# "ret=R injected=I left=L" (see try), split into $1 $2 $3
	# shellcheck disable=SC2046
	set -- $(call_$OP 1000000)
	allocs=$((1000000 - ${3#left=}))
	if [ "${1#ret=}" != 0 ]; then
		ok=false
	elif command -v partial_$OP > /dev/null; then
		ok="partial_$OP 0"
	else
		ok=ok_$OP
	fi
	if ! $ok; then
		echo "not ok $nr fault: $desc: fails with nothing injected (${1#ret=})"
		failed=1
		return
	fi
	# An allocation the call makes only now and then is off its own
	# path: the count is the fewer of two calls.  CI once counted 1 for a
	# disable that makes none (2, then 0, in another run), and no n could
	# fail it.  A second preparation that fails keeps the first count.
	if [ "$allocs" != 0 ]; then
		again=$allocs
		if reset $AWAY && prep_$OP; then
			# shellcheck disable=SC2046
			set -- $(call_$OP 1000000)
			again=$((1000000 - ${3#left=}))
		else
			say "$desc: could not prepare a second count"
		fi
		if [ "$again" != "$allocs" ]; then
			say "$desc: $allocs allocations, then $again"
			[ "$again" -lt "$allocs" ] && allocs=$again
		fi
	fi
	if [ "$allocs" = 0 ]; then
		echo "ok $nr fault: $desc # SKIP the call makes no allocation to fail"
		return
	fi
	ns=$(plan $allocs)
	if [ -z "$ns" ]; then
		echo "ok $nr fault: $desc # SKIP FAULT_NS reaches none of its $allocs allocations"
		return
	fi
	say "$desc: $allocs allocations"
	t0=$(date +%s)
	for n in $ns; do
		try "$n" || bad=$((bad + 1))
		[ $bad -ge 3 ] && break
		[ $((n % 25)) = 0 ] && say "n=$n, $(($(date +%s) - t0)) s"
	done
	# Then until the call no longer reaches its n-th allocation
	n=$allocs
	while [ $bad -lt 3 ]; do
		n=$((n + 1))
		last=$injected
		try "$n" || bad=$((bad + 1))
		[ "$injected" = "$last" ] && break
		[ $n -gt $((allocs + 50)) ] && { say "n=$n: still injecting"; bad=$((bad + 1)); }
	done
	total=$((total + injected))
	[ "$KIND" = probe ] && probe_total=$((probe_total + injected))
	ops="$ops $injected"
	line="$desc: $allocs allocations, $injected faults injected, $errors errors, $bad anomalies"
	# kprobe and fprobe events are the base's: what the loop finds there
	# is reported (README, "Failing allocations"), not failed
	if [ "$KIND" = probe ] && [ $bad -gt 0 ] && [ $injected -gt 0 ]; then
		echo "ok $nr fault: $line, the base's, reported"
		probe_bad=$((probe_bad + bad))
		return
	fi
	if [ $bad -gt 0 ] || [ $injected -eq 0 ]; then
		echo "not ok $nr fault: $line"
		failed=1
	else
		echo "ok $nr fault: $line"
	fi
}

echo "1..30"
if [ ! -w /proc/self/fail-nth ] || [ ! -d $D/failslab ] || [ ! -d $D/fail_page_alloc ]; then
	say "no fail-nth, failslab or fail_page_alloc: CONFIG_FAULT_INJECTION and friends"
	i=0
	while [ $i -lt 30 ]; do i=$((i + 1)); echo "not ok $i fault: not run"; done
	exit 1
fi
# shellcheck source-path=SCRIPTDIR source=../boot/lib
. /fbe/boot/lib
fail_nth_knobs
modprobe fevent-sample || { say "modprobe fevent-sample failed"; exit 1; }
KO=$(find /lib/modules -name fevent-sample.ko | head -1)

AWAY=
for EV in fa fb fx fg fm; do
	FILE=function_events
	run "define $EV: $(text_of $EV)" define
done
for EV in fa fb fx fg fm; do
	run "enable $EV" enable
	run "disable $EV" disable
done
EV=fa run "remove one (fa)" remove
run "remove all (O_TRUNC)" trunc
INST='' GROUPFILE=$T/events/functions/enable GROUPTEXT=1 run "events/functions/enable" group
INST='' GROUPFILE=$T/set_event GROUPTEXT='functions:*' run "set_event functions:*" group
INST=$T/instances/fault GROUPFILE=$T/instances/fault/events/functions/enable GROUPTEXT=1 \
	run "an instance's events/functions/enable" group
AWAY=away run "load the module of enabled events" load
AWAY='' run "unload the module of enabled events" unload
KIND=probe
for EV in ka fpa; do
	[ $EV = ka ] && FILE=kprobe_events || FILE=dynamic_events
	# arm64 6.12 has no fprobe events
	if [ $EV = fpa ] && ! grep -qF 'f[:[<group>/][<event>]] <func-name>' $T/README; then
		for op in define enable disable remove; do
			nr=$((nr + 1))
			echo "ok $nr fault: $op $EV # SKIP no fprobe events (FPROBE_EVENTS) in this kernel"
		done
		continue
	fi
	run "define $EV: $(text_of $EV)" define
	run "enable $EV" enable
	run "disable $EV" disable
	run "remove $EV" remove
done
reset
say "faults injected: $total, $((total - probe_total)) into function events, $probe_total into kprobe and fprobe events (per operation:$ops)"
say "anomalies of kprobe and fprobe events (the base's, reported): $probe_bad"
rmmod fevent_sample || { say "rmmod fevent_sample failed"; failed=1; }
exit $failed
