#!/bin/sh
# make bench, the guest side: the cost per hit of each way to trace the
# sample's fevent_sample_bench(), and the cost of creating events.
# Prints "BENCH <case> <run> <calls> <ns>" and "CREATE <kind> <phase> <n> <ms>";
# scripts/bench.py makes the table.  BENCH_N calls per run, BENCH_RUNS runs,
# BENCH_CASES the case numbers to run (default all).  With PROFILE=1 it sets
# up the one case in BENCH_CASES and calls the function once a second.
# BENCH_REGS (the registers of arguments 2 to 4, comma-separated) and
# BENCH_INSN (the size of the call to ftrace at a function's entry) are
# the architecture's, from scripts/harness/arch.py.  A case the kernel cannot
# set up (fprobe events where the architecture has no fprobe) prints
# "BENCH-SKIP <case> <why>".
T=/sys/kernel/tracing
S=/sys/kernel/debug/fevent_sample
N=${BENCH_N:-200000}
RUNS=${BENCH_RUNS:-5}
NCREATE=${BENCH_CREATE:-1000}
CASES=${BENCH_CASES:-all}
F=fevent_sample_bench
REGS=${BENCH_REGS:-%si,%dx,%cx}
INSN=${BENCH_INSN:-5}

modprobe fevent-sample || { echo "BENCH-ERROR no fevent-sample"; exit 1; }
cd $T || exit 1
off() { awk -v f="$1" '$1 == f { print $2 }' $S/layout; }
INNER=$(off inner)
LEAF=$(off leaf)
MAGIC=$(off magic)
echo 1 > tracing_on
echo 1024 > buffer_size_kb
# Case 12 must stay an int3 probe: no jump optimization (only x86 has it)
O=/proc/sys/debug/kprobes-optimization
[ -e $O ] && echo 0 > $O
# fprobe events: none on arm64 6.12 (fprobe needs rethook there)
grep -q '^[[:space:]]*f\[:' README && HAVE_FPROBE=1

reset() {
	echo nop > current_tracer
	echo > set_ftrace_filter
	echo 0 > events/enable
	echo > function_events
	echo > dynamic_events
	echo > trace
	if [ -d /sys/module/bench_floor ]; then rmmod bench_floor; fi
}

setup_fevent() { # definition
	echo "$1" > function_events && echo 1 > events/functions/$F/enable
}

setup_fexit() { # definition
	echo "$1" > function_events && echo 1 > events/functions/${F}__exit/enable
}

setup_dyn() { # group definition
	echo "$2" >> dynamic_events && echo 1 > events/$1/bench/enable
}

# The same data three ways: nothing, 3 ints, a 2-level chain and a string
FE0="$F()"
FE3="$F(NULL, int a, int b, int c)"
FEC="$F(u32 magic+${INNER}[0]+${LEAF}[0]+$MAGIC, NULL, NULL, NULL, string msg)"
PA3='a=$arg2:s32 b=$arg3:s32 c=$arg4:s32'
# Exit: the same 3 ints, taken at the entry, and the return value
FX3="$F%return(NULL, int a, int b, int c, int \$retval)"
PX3="$PA3 "'ret=$retval:s32'
PAC="magic=+$MAGIC(+$LEAF(+$INNER(\$arg1))):u32 msg=+0(\$arg5):string"

run_case() { # number name setup...
	num=$1 name=$2
	shift 2
	# 1 and 2 are the baselines of every ratio, but not profiled
	[ -n "$PROFILE" ] && list=",$CASES," || list=",$CASES,1,2,"
	case "$list" in
	*,all,*|*,$num,*) ;;
	*) return ;;
	esac
	reset
	case "$name" in
	fprobe*) if [ -z "$HAVE_FPROBE" ]; then
		[ "$run" = 1 ] && echo "BENCH-SKIP $num-$name no fprobe events in this kernel"
		return
	fi ;;
	esac
	if ! "$@"; then
		echo "BENCH-ERROR $num-$name: setup failed: $*"
		tail -3 error_log
		return
	fi
	shift_case=$num-$name
	if [ -n "$PROFILE" ]; then
		profile_hit
		return
	fi
	# What the teardown of the case before left to do (RCU callbacks, the
	# function events' filter batch 100 ms after a disable) runs now,
	# not during this run: removing case 15's 1000 events cost case 16
	# up to 48 instructions per call, a different amount each run.
	sleep 1
	taskset -c 0 sh -c "echo $N > $S/bench"
	read -r calls ns < $S/bench
	echo "BENCH $shift_case $run $calls $ns"
	# the event recorded what it should
	if [ "$num" -gt 1 ] && ! grep -q bench trace; then
		echo "BENCH-ERROR $num-$name: nothing recorded"
	fi
	reset
}

# scripts/hitprofile.py: one call at a time, for the host's debugger to
# single-step.  It needs the addresses of the module and of the ftrace
# trampolines (the kernel runs with nokaslr: vmlinux has the rest).
profile_hit() {
	grep -E '\[(fevent_sample|bench_floor|__builtin__ftrace)\]' /proc/kallsyms |
		sed 's/^/PROFILE-SYM /'
	addr=$(awk -v f=$F '$3 == f { print $1 }' /proc/kallsyms)
	echo "PROFILE-READY $shift_case $addr"
	while :; do
		echo 1 > $S/bench
		sleep 1
	done
}

function_tracer() {
	echo $F > set_ftrace_filter && echo function > current_tracer
}

# An instruction boundary inside the function: the one after the call to
# ftrace (BENCH_INSN bytes), so that the probe is an int3 (a BRK on
# arm64), not ftrace based; the arguments are read from their registers
kprobe_inside() {
	fa=$(awk -v f=$F '$2 == f { print $1 }' available_filter_functions_addrs)
	sa=$(awk -v f=$F '$3 == f { print $1 }' /proc/kallsyms)
	# the low 32 bits are enough for an offset, and fit sh arithmetic
	o=$(( 0x${fa#????????} - 0x${sa#????????} + INSN ))
	r2=${REGS%%,*} r4=${REGS##*,}
	r3=${REGS#*,}
	r3=${r3%,*}
	echo "p:kprobes/bench $F+$o a=$r2:s32 b=$r3:s32 c=$r4:s32" >> dynamic_events || return 1
	echo "# kprobe inside the function at +$o"
	echo 1 > events/kprobes/bench/enable
}

tracepoint() {
	echo 1 > events/fevent_sample/$F/enable
}

# The floor of a dynamic record of ip and parent ip (guest/bench-floor):
# an ftrace_ops whose callback calls an empty TRACE_EVENT() of both
floor() {
	insmod /fbe/bin/bench-floor.ko func=$F &&
	echo 1 > events/bench_floor/bench_floor/enable
}

none() { :; }

# Two events on the function: the cost of the second one
setup_two() { # definition
	echo "$1" > function_events &&
	echo "F:bench2 $1" >> function_events &&
	echo 1 > events/functions/$F/enable &&
	echo 1 > events/functions/bench2/enable
}

# The event among NCREATE others defined on other functions: a hit does
# not pay for the events of other functions
setup_many() { # definition
	[ -s $funcs ] || return 1
	while read -r fn; do
		echo "$fn()" >> function_events || return 1
	done < $funcs
	echo "$1" >> function_events && echo 1 > events/functions/$F/enable
}

all_cases() {
run_case 1 none none
run_case 2 function-tracer function_tracer
run_case 3 fevent-noargs setup_fevent "$FE0"
run_case 4 fevent-3ints setup_fevent "$FE3"
run_case 5 fevent-chain-string setup_fevent "$FEC"
run_case 6 fprobe-noargs setup_dyn fprobes "f:fprobes/bench $F"
run_case 7 fprobe-3ints setup_dyn fprobes "f:fprobes/bench $F $PA3"
run_case 8 fprobe-chain-string setup_dyn fprobes "f:fprobes/bench $F $PAC"
run_case 9 kprobe-noargs setup_dyn kprobes "p:kprobes/bench $F"
run_case 10 kprobe-3ints setup_dyn kprobes "p:kprobes/bench $F $PA3"
run_case 11 kprobe-chain-string setup_dyn kprobes "p:kprobes/bench $F $PAC"
run_case 12 kprobe-int3-3ints kprobe_inside
run_case 13 trace-event-3ints tracepoint
run_case 14 fevent-3ints-two-events setup_two "$FE3"
run_case 15 fevent-3ints-1000-others setup_many "$FE3"
run_case 16 fevent-exit-3ints setup_fexit "$FX3"
run_case 17 fprobe-exit-3ints setup_dyn fprobes "f:fprobes/bench $F%return $PX3"
run_case 18 kretprobe-3ints setup_dyn kprobes "r:kprobes/bench $F $PX3"
run_case 19 fevent-3ints-glob-others setup_glob "$FE3"
run_case 20 floor-ftrace-trace-event floor
}

# A glob that hooks at least GLOB_MIN functions, none of which the
# measured loop runs (a hit that ran one would cost a second event):
# the first that does of a few letter ranges, none with 'f', the
# sample's (fevent_sample_*).  Functions that a timer interrupt runs
# during a run are among them, as they are for the function tracer.
GLOB_MIN=10000
glob_count() { # pattern: how many traceable functions it matches
	awk '{ print $1 }' available_filter_functions | sort -u |
	while read -r fn; do
		# $1 is a glob: unquoted, to match as one
		# shellcheck disable=SC2254
		case "$fn" in $1) echo;; esac
	done | wc -l
}
GLOB=
for p in '[a-eg-m]*' '[a-eg-p]*' '[a-eg-z]*'; do
	n=$(glob_count "$p")
	if [ "$n" -ge $GLOB_MIN ]; then
		GLOB=$p GLOB_N=$n
		break
	fi
done
echo "# glob '$GLOB': $GLOB_N functions"

# The event while a glob event hooks GLOB_N other functions
setup_glob() { # definition
	[ -n "$GLOB" ] || return 1
	echo "F:glob $GLOB()" > function_events &&
	echo 1 > events/functions/glob/enable &&
	echo "$1" >> function_events &&
	echo 1 > events/functions/$F/enable
}

# NCREATE functions that both function and kprobe events accept (not on
# the kprobe blacklist, traceable): the creation figures and case 15
funcs=/tmp/bench-funcs
: > $funcs
if [ "$NCREATE" -gt 0 ]; then
	n=0
	grep -v '[.:]' available_filter_functions | grep -v '^__' | grep -vx "$F" |
	sort -u | while read -r fn rest; do
		[ $n -ge "$NCREATE" ] && break
		if echo "$fn()" > function_events 2>/dev/null &&
		   echo "p:kprobes/t $fn" > kprobe_events 2>/dev/null; then
			echo "$fn" >> $funcs
			n=$((n + 1))
		fi
		echo > function_events
		echo > kprobe_events
	done
fi

# Round after round of every case, not all the runs of one case in a row:
# a slow stretch of the host then costs every case a run, not one case
# its median.
echo "# bench: $N calls per run, $RUNS runs per case"
for run in $(seq "$RUNS"); do
	all_cases
done

# Creation: the same NCREATE functions, as function events and as kprobes
if [ "$NCREATE" -eq 0 ]; then
	echo "BENCH-DONE"
	exit 0
fi
ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }
echo 0 > tracing_on
reset
total=$(wc -l < $funcs)
each() { # command-per-line, with $fn and $i
	i=0
	while read -r fn; do
		i=$((i + 1))
		eval "$1"
	done < $funcs
}
phase() { # kind phase command-per-line...
	t0=$(ms)
	each "$3"
	echo "CREATE $1 $2 $total $(( $(ms) - t0 ))"
}
phase fevent define 'echo "$fn()" >> function_events'
phase fevent enable 'echo 1 > events/functions/$fn/enable'
phase fevent disable 'echo 0 > events/functions/$fn/enable'
phase fevent remove 'echo "-:$fn" >> function_events'
# All at once: the definitions again, then one truncation
phase fevent define-all 'echo "$fn()" >> function_events'
t0=$(ms)
echo > function_events
echo "CREATE fevent remove-all $total $(( $(ms) - t0 ))"
# Never enabled: removal without the buffer reset (and its grace period)
# that removing an event which was enabled costs both kinds
phase fevent define-never-enabled 'echo "$fn()" >> function_events'
phase fevent remove-never-enabled 'echo "-:$fn" >> function_events'
phase kprobe define 'echo "p:kprobes/c$i $fn" >> kprobe_events'
phase kprobe enable 'echo 1 > events/kprobes/c$i/enable'
phase kprobe disable 'echo 0 > events/kprobes/c$i/enable'
phase kprobe remove 'echo "-:kprobes/c$i" >> kprobe_events'
phase kprobe define-never-enabled 'echo "p:kprobes/c$i $fn" >> kprobe_events'
phase kprobe remove-never-enabled 'echo "-:kprobes/c$i" >> kprobe_events'
# The same function events, enabled and disabled with one write each
phase fevent-group define 'echo "$fn()" >> function_events'
once() { # kind phase n command
	t0=$(ms)
	eval "$4"
	echo "CREATE $1 $2 $3 $(( $(ms) - t0 ))"
}
once fevent-group enable $total 'echo 1 > events/functions/enable'
once fevent-group disable $total 'echo 0 > events/functions/enable'
once fevent-group remove $total 'echo > function_events'
# One event over the GLOB_N functions of a glob
if [ -n "$GLOB" ]; then
	once fevent-glob define $GLOB_N 'echo "F:glob $GLOB()" > function_events'
	once fevent-glob enable $GLOB_N 'echo 1 > events/functions/glob/enable'
	once fevent-glob disable $GLOB_N 'echo 0 > events/functions/glob/enable'
	once fevent-glob remove $GLOB_N 'echo > function_events'
fi

# Kernel memory an event takes: slab, vmalloc and per-CPU memory of
# /proc/meminfo (a kprobe event's hit count is per CPU), after
# dropping what can be dropped (tracefs' dentries and inodes among it),
# once two readings a second apart agree within MEM_SETTLE_KB (at most
# 10): what the phase before frees after RCU grace periods and work items
# is gone by then.  "MEM kind n defined-kB enabled-kB settle-kB": n events
# of a kind defined, then enabled, against before the first, each reading
# known within settle-kB; a kind measured in several rounds prints a line
# a round.
MEM_SETTLE_KB=16
kmem() {
	prev=-1
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		sleep 1
		echo 3 > /proc/sys/vm/drop_caches
		cur=$(awk '/^(Slab|VmallocUsed|Percpu):/ { kb += $2 } END { print kb }' /proc/meminfo)
		d=$((cur - prev))
		[ "${d#-}" -le $MEM_SETTLE_KB ] && break
		prev=$cur
	done
	echo "$cur"
}
# A definition the kernel refuses would lower a kind's figure without a
# word: each phase counts the events it defined (count, from the kind's
# listing), and one that did not define them all is an error.  An event
# over a pattern is one event over n functions.
mem() { # kind n define enable clear count
	m0=$(kmem)
	eval "$3"
	got=$(eval "$6")
	m1=$(kmem)
	eval "$4"
	m2=$(kmem)
	eval "$5"
	want=$2
	case $1 in *-glob) want=1 ;; esac
	if [ "$got" != "$want" ]; then
		echo "BENCH-ERROR mem $1: $got of $want events defined"
	fi
	echo "MEM $1 $2 $((m1 - m0)) $((m2 - m0)) $MEM_SETTLE_KB"
}
# The same functions, no arguments: what an event costs around its fields.
# Each event is named as its function, as a function event is: the name
# is kept in the event call, its eventfs entry and the dynamic event.
fe_def() { each 'echo "$fn()" >> function_events'; }
fe_on() { each 'echo 1 > events/functions/$fn/enable'; }
fe_clear() { echo 0 > events/functions/enable; echo > function_events; }
fe_count() { grep -c . function_events; }
kp_def() { each 'echo "p:kprobes/$fn $fn" >> kprobe_events'; }
kp_on() { each 'echo 1 > events/kprobes/$fn/enable'; }
kp_clear() { echo 0 > events/kprobes/enable; echo > kprobe_events; }
kp_count() { grep -c . kprobe_events; }
# A kprobe event recording the caller too, the record of a function
# event: on x86_64 and arm64 the entry's $stack0 or lr, as an address
kc_def() { each 'echo "p:kprobes/$fn $fn caller=$KCALLER:x64" >> kprobe_events'; }
fp_def() { each 'echo "f:fprobes/$fn $fn" >> dynamic_events'; }
fp_on() { each 'echo 1 > events/fprobes/$fn/enable'; }
fp_clear() { echo 0 > events/fprobes/enable; echo > dynamic_events; }
fp_count() { grep -c '^f:' dynamic_events; }
# The kind measured first grows the slab caches and leaves partial slabs
# that the next one fills: measured first, 1,000 kprobe events took
# 1,187 bytes each, then 1,126 and 1,114 in turns after function events
# (1,105, 1,101, 1,085).  So one unmeasured round of each kind first,
# then the two in turns, fevent kprobe kprobe fevent: each kind's figure
# is the mean of its two rounds (scripts/bench.py adds them up).
fe_def; fe_on; fe_clear
kp_def; kp_on; kp_clear
mem fevent "$total" fe_def fe_on fe_clear fe_count
mem kprobe "$total" kp_def kp_on kp_clear kp_count
mem kprobe "$total" kp_def kp_on kp_clear kp_count
mem fevent "$total" fe_def fe_on fe_clear fe_count
case $(uname -m) in
x86_64) KCALLER='$stack0' ;;
aarch64) KCALLER='%x30' ;;
*) KCALLER= ;;
esac
# That $KCALLER is the caller a function event records, not read from the
# code alone: both on vfs_read, as the address of the most hits (dd's
# reads), through a histogram of each.
top_key() { # hist-file key
	awk -v k="$2:" '$1 == "{" && $2 == k && $NF > n { n = $NF; v = $3 }
		END { print v }' "$1"
}
caller_check() {
	if ! { echo 'vfs_read()' >> function_events &&
	       echo "p:kprobes/kcaller vfs_read caller=$KCALLER:x64" >> kprobe_events &&
	       echo 'hist:keys=__parent_ip.hex' > events/functions/vfs_read/trigger &&
	       echo 'hist:keys=caller.hex' > events/kprobes/kcaller/trigger &&
	       echo 1 > events/functions/vfs_read/enable &&
	       echo 1 > events/kprobes/kcaller/enable; }; then
		echo "BENCH-ERROR kprobe-caller: the check of $KCALLER cannot be set up"
		return
	fi
	dd if=/proc/version of=/dev/null bs=1 count=8 2> /dev/null
	echo 0 > events/functions/vfs_read/enable
	echo 0 > events/kprobes/kcaller/enable
	fe=$(top_key events/functions/vfs_read/hist __parent_ip)
	kc=$(top_key events/kprobes/kcaller/hist caller)
	echo '!hist:keys=__parent_ip.hex' > events/functions/vfs_read/trigger
	echo '!hist:keys=caller.hex' > events/kprobes/kcaller/trigger
	echo > function_events
	echo > kprobe_events
	if [ -z "$fe" ] || [ "$fe" != "$kc" ]; then
		echo "BENCH-ERROR kprobe-caller: $KCALLER read ${kc:-nothing}, the function event's caller is ${fe:-nothing}"
	else
		echo "# kprobe-caller: $KCALLER = the function event's caller ($fe)"
	fi
}
if [ -n "$KCALLER" ]; then
	caller_check
	mem kprobe-caller "$total" kc_def kp_on kp_clear kp_count
fi
if [ -n "$HAVE_FPROBE" ]; then
	mem fprobe "$total" fp_def fp_on fp_clear fp_count
fi
# One event over the GLOB_N functions of a glob, at the entry and the exit
g_def() { echo "F:glob $GLOB$1()" > function_events; }
g_on() { echo 1 > events/functions/glob/enable; }
g_clear() { echo 0 > events/functions/glob/enable; echo > function_events; }
if [ -n "$GLOB" ]; then
	mem fevent-glob "$GLOB_N" g_def g_on g_clear fe_count
	# Exit events need the function graph tracer
	if g_def %return 2>/dev/null; then
		g_clear
		mem fexit-glob "$GLOB_N" "g_def %return" g_on g_clear fe_count
	fi
fi

# Where one event's memory goes, to the byte: what defining and enabling
# one more event of a kind changes in what is allocated, by call site
# (guest/allocs.awk reads the trace).  The kmem and percpu events record
# this shell's allocations and everyone's frees.  Each event is followed
# by a second of no work, for the RCU callbacks that free what an enable
# replaced; nothing in the window forks, opens the files that mark it or
# turns tracepoints on or off, which would leave allocations of their
# own in it.  "ALLOC kind site bytes".
ALLOCS="kmem/kmalloc kmem/kmem_cache_alloc percpu/percpu_alloc_percpu"
FREES="kmem/kfree kmem/kmem_cache_free percpu/percpu_free_percpu"
# A second or two without a fork, and with few events: the shell counts,
# and reads /proc/uptime every thousandth time
wait1() {
	read -r t0 _ < /proc/uptime
	t0=${t0%.*}
	t=$t0
	while [ "${t%.*}" -le $((t0 + 1)) ]; do
		i=0
		while [ $i -lt 1000 ]; do
			i=$((i + 1))
		done
		read -r t _ < /proc/uptime
	done
}
allocs() { # kind first-event next-event
	echo 0 > tracing_on
	echo > trace
	for e in $ALLOCS; do
		echo "common_pid == $$" > events/$e/filter
	done
	for e in $ALLOCS $FREES; do
		echo 1 > events/$e/enable
	done
	exec 4> trace_marker 5> tracing_on
	echo 1 >&5
	eval "$2"
	wait1
	echo ALLOC-START >&4
	eval "$3"
	wait1
	echo 0 >&5
	exec 4>&- 5>&-
	for e in $ALLOCS $FREES; do
		echo 0 > events/$e/enable
	done
	for e in $ALLOCS; do
		echo 0 > events/$e/filter
	done
	awk -v kind="$1" -f /fbe/allocs.awk trace
	echo > trace
}
fe_def_on() { echo "$fn()" >> function_events &&
	echo 1 > events/functions/$fn/enable; }
kp_def_on() { echo "p:kprobes/$fn $fn" >> kprobe_events &&
	echo 1 > events/kprobes/$fn/enable; }
kc_def_on() { echo "p:kprobes/$fn $fn caller=$KCALLER:x64" >> kprobe_events &&
	echo 1 > events/kprobes/$fn/enable; }
fp_def_on() { echo "f:fprobes/$fn $fn" >> dynamic_events &&
	echo 1 > events/fprobes/$fn/enable; }
# The first event of a kind makes its group's directory: not counted
alloc_kind() { # kind define-and-enable clear
	allocs "$1" "fn=$f1; $2 || echo 'BENCH-ERROR alloc $1: $f1 refused'" \
		"fn=$f2; $2 || echo 'BENCH-ERROR alloc $1: $f2 refused'"
	eval "$3"
}
f1=$(sed -n 1p $funcs)
f2=$(sed -n 2p $funcs)
if [ -n "$f2" ]; then
	echo "# allocs: one more event on $f2, after one on $f1"
	alloc_kind fevent fe_def_on fe_clear
	alloc_kind kprobe kp_def_on kp_clear
	if [ -n "$KCALLER" ]; then
		alloc_kind kprobe-caller kc_def_on kp_clear
	fi
	if [ -n "$HAVE_FPROBE" ]; then
		alloc_kind fprobe fp_def_on fp_clear
	fi
fi
echo 1 > tracing_on
echo "BENCH-DONE"
