#!/bin/bash
# make check-nolibc: function events where Debian has no user space.
# For each architecture of scripts/arch.py's NOLIBC (ppc32: a 32-bit
# big-endian ABI with 64-bit arguments in register pairs; riscv64: exit
# events on fgraph there), a small kernel (config/ARCH.config on
# tinyconfig) is built with and without BTF and booted with
# guest/nolibc/fevent-test.c as its init, built on the kernel's nolibc,
# which checks what function events record against known values and a
# kprobe event reading the registers, and prints KTAP.
# scripts/verdict.py judges the console as make check's: a failed case or
# any kernel report fails it.  Ends with "N passed, N failed, N skipped".
#   [NOLIBC_ARCHES="ppc32"] [BTF="y n"] scripts/check-nolibc.sh
. "$(dirname "$0")/common.sh"
set -o pipefail
[ -d "$TREE/.git" ] || die "no build/linux (make tree)"
export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache} CCACHE_BASEDIR=$TOP CCACHE_NOHASHDIR=1
t_all=$(date +%s)
bad=0 pass=0 fail=0 skip=0
for a in ${NOLIBC_ARCHES:-ppc32 riscv64}; do
	eval "$(python3 "$TOP/scripts/arch.py" nolibc "$a")" || die "unknown $a"
	# shellcheck disable=SC2086
	"$TOP/scripts/deps.sh" $HOST_PKGS || exit 1
	for btf in ${BTF:-n y}; do
		obj=$BUILD/obj-$a-btf$btf
		mkdir -p "$obj" "$LOGS"
		frag=$obj/fragment.config
		cp "$ARCH_CONFIG" "$frag"
		if [ "$btf" = y ]; then
			printf '%s\n' CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y \
				CONFIG_DEBUG_INFO_BTF=y CONFIG_DEBUG_INFO_BTF_MODULES=y \
				CONFIG_BPF_SYSCALL=y CONFIG_PROBE_EVENTS_BTF_ARGS=y >> "$frag"
		fi
		k=(make -s -C "$TREE" O="$obj" ARCH="$KARCH" CROSS_COMPILE="$CROSS"
		   CC="ccache ${CROSS}gcc" LOCALVERSION=)
		t0=$(date +%s)
		"${k[@]}" tinyconfig >/dev/null 2>&1 &&
		"$TREE/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" >/dev/null &&
		"${k[@]}" olddefconfig >/dev/null 2>&1 || die "$a btf=$btf: config failed"
		lost=$(grep '^CONFIG_.*=[ym]$' "$frag" | while read -r o; do
			grep -qx "$o" "$obj/.config" || echo "$o"; done)
		[ -z "$lost" ] || die "$a btf=$btf: options that did not survive olddefconfig: $lost"
		if ! "${k[@]}" -j"$JOBS" "$KTARGET" modules > "$LOGS/nolibc-$a-btf$btf-build.log" 2>&1; then
			tail -20 "$LOGS/nolibc-$a-btf$btf-build.log" >&2
			say "$a btf=$btf: build failed"
			bad=1 fail=$((fail + 1))
			continue
		fi
		say "$a btf=$btf: built in $(( $(date +%s) - t0 )) s"
		out=$LOGS/nolibc-$a-btf$btf-summary
		python3 "$TOP/scripts/nolibc.py" --arch "$a" --obj "$obj" --btf "$btf" |
			tee "$out" || bad=1
		line=$(grep -E "^nolibc $a btf=$btf: [0-9]+ passed, [0-9]+ failed" "$out" | tail -1)
		if [ -n "$line" ]; then
			pass=$((pass + $(echo "$line" | awk '{print $4}')))
			fail=$((fail + $(echo "$line" | awk '{print $6}')))
			skip=$((skip + $(echo "$line" | awk '{print $8}')))
		else
			fail=$((fail + 1))
		fi
	done
done
echo "nolibc $(( $(date +%s) - t_all ))" >> "$LOGS/times"
[ $bad = 0 ] && [ $fail = 0 ] || bad=1
echo "$pass passed, $fail failed, $skip skipped"
[ $bad = 0 ] || die "check-nolibc failed"
