#!/bin/bash
# make check-debug: the debug kernel (config/debug.config on top of
# config/base.config: KASAN, UBSAN, kmemleak, lockdep, PROVE_RCU, the
# ftrace start-up self-tests) in build/obj-debug, running the dynevent
# and kprobe selftests (function events among them), the parser fuzzer
# and the concurrency stress, then a kmemleak scan.  A KASAN/UBSAN
# report, BUG, WARNING, lockdep splat, RCU stall or leak fails the run.
#   FUZZ_N, FUZZ_KN, FUZZ_SEED  fuzzer definitions (function, kprobe), seed
#   FUZZ_EVERY                  enable and fire every N'th accepted event
#   STRESS_SECS                 length of the stress run
#   ONLY=fuzz                   just the fuzzer (make fuzz)
. "$(dirname "$0")/common.sh"
set -e
obj=$BUILD/obj-debug
bin=$BUILD/guest-bin
summary=$BUILD/summary-debug
td=$TREE/tools/testing/selftests/ftrace/test.d
FUZZ_N=${FUZZ_N:-20000}
FUZZ_KN=${FUZZ_KN:-2000}
FUZZ_EVERY=${FUZZ_EVERY:-32}
FUZZ_SEED=${FUZZ_SEED:-$(date +%s)}
STRESS_SECS=${STRESS_SECS:-60}

PHASE=build-debug "$TOP/scripts/build.sh" "$obj" "$TOP/config/base.config" \
	"$TOP/config/debug.config"

# The guest tools: static, so that they run on busybox
mkdir -p "$bin"
for t in fevent-fuzz fevent-stress; do
	gcc -static -O2 -Wall -Wextra -Werror -pthread -o "$bin/$t" "$TOP/guest/fuzz/$t.c"
done

rm -f "$summary"
env=(FUZZ_N="$FUZZ_N" FUZZ_KN="$FUZZ_KN" FUZZ_SEED="$FUZZ_SEED" STRESS_SECS="$STRESS_SECS"
     FUZZ_EVERY="$FUZZ_EVERY")
say "check-debug: fuzz seed $FUZZ_SEED (FUZZ_SEED=$FUZZ_SEED reproduces it)"
guest() { # name timeout boot-tests tests...
	local name=$1 timeout=$2 boot=$3
	shift 3
	python3 "$TOP/scripts/qemu.py" check --obj "$obj" --name "$name" \
		--summary "$summary" --timeout "$timeout" --kcmdline "$KCMDLINE" \
		--extra "$bin/fevent-fuzz" "$bin/fevent-stress" --env "${env[@]}" \
		--boot-tests $boot --post-tests "$TOP/tests/debug/kmemleak.sh" \
		--tests "$@"
}
rc=0
if [ "$ONLY" = fuzz ]; then
	guest fuzz $(( FUZZ_N / 5 + 1800 )) "$TOP/tests/debug/fuzz.sh" none || rc=1
else
	# Two guests side by side, one host CPU each, the fuzzing split
	# between them (seeds FUZZ_SEED and FUZZ_SEED+1)
	half=("FUZZ_N=$(( (FUZZ_N + 1) / 2 ))" "FUZZ_KN=$(( (FUZZ_KN + 1) / 2 ))")
	env=("${env[@]}" "${half[@]}")
	guest debug0 3600 "$TOP/tests/debug/fuzz.sh" "$td/kprobe" \
		> "$LOGS/debug0.out" 2>&1 & p0=$!
	env=("${env[@]}" "FUZZ_SEED=$(( FUZZ_SEED + 1 ))")
	guest debug1 3600 "$TOP/tests/debug/fuzz.sh $TOP/tests/debug/stress.sh" \
		"$td/dynevent" > "$LOGS/debug1.out" 2>&1 & p1=$!
	wait $p0 || rc=1
	wait $p1 || rc=1
	cat "$LOGS/debug0.out" "$LOGS/debug1.out"
	grep -h '^# \(fuzz\|stress\)' "$BUILD/logs/console-debug0.log" \
		"$BUILD/logs/console-debug1.log" | grep -v ': [0-9]*/[0-9]*$' || true
	# The totals of both halves
	awk '/^# fuzz [a-z_]*: [0-9]+ writes,/ {
		t = $3; w[t] += $4; a[t] += $6; r[t] += $10; l[t] += substr($12, 2)
		c[t] += $17; e[t] += $20; f[t] += $22; rt[t] += $24; an[t] += $27
	} END {
		for (t in w)
			printf "fuzz total %s %d writes: %d accepted (%d events checked, %d round trips, %d enabled, %d fired), %d rejected (%d with an error_log entry); %d anomalies\n", t, w[t], a[t], c[t], rt[t], e[t], f[t], r[t], l[t], an[t]
	}' \
		"$BUILD/logs/console-debug0.log" "$BUILD/logs/console-debug1.log"
fi
awk '{p+=$1; f+=$2; s+=$3} END {printf "\n=== total (debug kernel)\n%d passed, %d failed, %d skipped\n", p, f, s}' "$summary"
exit $rc
