#!/bin/bash
# make check: build, then the ftracetest run(s) in QEMU, then one summary.
#   TESTS=...     a subset (.tc files or directories, anywhere on disk)
#   KCMDLINE=...  added to the kernel command line
. "$(dirname "$0")/common.sh"
set -e
summary=$BUILD/summary
mkdir -p "$LOGS"
rm -f "$summary"
rc=0
if [ -n "$TESTS" ]; then
	# shellcheck disable=SC2086
	python3 "$TOP/scripts/qemu.py" check --name check --summary "$summary" \
		--kcmdline "$KCMDLINE" --tests $TESTS || rc=1
else
	# The whole suite: split into one shard per CPU, each in a guest of
	# its own (single-threaded TCG uses one host CPU per guest).
	shards=${SHARDS:-$JOBS}
	td=$TREE/tools/testing/selftests/ftrace/test.d
	# Balance the shards by the time tests take under TCG (config/test-weights,
	# in units of an average test; 1 if not listed).
	python3 - "$td" "$shards" "$TOP/config/test-weights" "$LOGS/shard" <<'PY'
import os, sys
td, n, wfile, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
w = {}
for line in open(wfile):
    f = line.split('#')[0].split()
    if len(f) == 2:
        w[f[0]] = float(f[1])
known = {}
for line in open(os.path.join(os.path.dirname(wfile), 'known-failures')):
    if line.strip() and not line.startswith('#'):
        name, _, reason = line.strip().partition(' ')
        known[name] = reason
tests = sorted(os.path.relpath(os.path.join(d, f), td)
               for d, _, fs in os.walk(td) for f in fs if f.endswith('.tc'))
with open(out + '-known', 'w') as f:
    for t in tests:
        if t in known:
            f.write(f'[      SKIP] {t}  # known failure, not run: {known[t]}\n')
tests = [t for t in tests if t not in known]
load, parts = [0.0] * n, [[] for _ in range(n)]
for t in sorted(tests, key=lambda t: -w.get(t, 1)):
    i = load.index(min(load))
    parts[i].append(t)
    load[i] += w.get(t, 1)
for i in range(n):
    with open(f'{out}{i}', 'w') as f:
        f.write('\n'.join(os.path.join(td, t) for t in sorted(parts[i])) + '\n')
PY
	pids=()
	for ((i = 0; i < shards; i++)); do
		mapfile -t part < "$LOGS/shard$i"
		python3 "$TOP/scripts/qemu.py" check --name "check$i" \
			--summary "$summary" --kcmdline "$KCMDLINE" \
			--tests "${part[@]}" > "$LOGS/check$i.out" 2>&1 &
		pids+=($!)
	done
	for ((i = 0; i < shards; i++)); do
		wait "${pids[i]}" || rc=1
		cat "$LOGS/check$i.out"
	done
	cat "$LOGS/shard-known"
	echo "0 0 $(wc -l < "$LOGS/shard-known")" >> "$summary"
	# Boot parameters: a boot of its own, with the definitions on the
	# command line, checked before anything clears them.
	python3 "$TOP/scripts/qemu.py" check --name boot --summary "$summary" \
		--kcmdline "kprobe_event=p:kprobes/boot_probe,vfs_read function_event=\"vfs_read(x64 file, NULL, size_t count);kernel_clone()\" $KCMDLINE" \
		--boot-tests "$TOP"/tests/boot/*.sh --tests none --timeout 300 || rc=1
fi
awk '{p+=$1; f+=$2; s+=$3} END {printf "\n=== total\n%d passed, %d failed, %d skipped\n", p, f, s}' "$summary"
exit $rc
