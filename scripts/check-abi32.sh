#!/bin/bash
# make check-abi32: function events on a 32-bit ABI.  A 32-bit powerpc
# kernel (config/ppc32.config, on tinyconfig), with and without BTF, is
# booted in QEMU's ppce500 machine; its init is guest/abi32/abi32-test.c,
# built with the kernel's nolibc (Debian has no 32-bit powerpc user
# space), which checks what function events record of the 64-bit
# parameters of the sample's fevent_sample_wide() against the values it
# is called with, and prints KTAP.  scripts/verdict.py judges the console
# as make check's: a failed case or any kernel report fails it.
#   [BTF="y n"] scripts/check-abi32.sh
. "$(dirname "$0")/common.sh"
set -o pipefail
"$TOP/scripts/deps.sh" gcc-powerpc-linux-gnu qemu-system-ppc || exit 1
[ -d "$TREE/.git" ] || die "no build/linux (make tree)"
export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache} CCACHE_BASEDIR=$TOP CCACHE_NOHASHDIR=1
CROSS=powerpc-linux-gnu-
t_all=$(date +%s)
bad=0 pass=0 fail=0
for btf in ${BTF:-n y}; do
	obj=$BUILD/obj-ppc32-btf$btf
	mkdir -p "$obj" "$LOGS"
	frag=$obj/fragment.config
	cp "$TOP/config/ppc32.config" "$frag"
	if [ "$btf" = y ]; then
		printf '%s\n' CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y CONFIG_DEBUG_INFO_BTF=y \
			CONFIG_DEBUG_INFO_BTF_MODULES=y CONFIG_BPF_SYSCALL=y \
			CONFIG_PROBE_EVENTS_BTF_ARGS=y >> "$frag"
	fi
	k=(make -s -C "$TREE" O="$obj" ARCH=powerpc CROSS_COMPILE=$CROSS
	   CC="ccache ${CROSS}gcc" LOCALVERSION=)
	t0=$(date +%s)
	"${k[@]}" tinyconfig >/dev/null 2>&1 &&
	"$TREE/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" >/dev/null &&
	"${k[@]}" olddefconfig >/dev/null 2>&1 || die "ppc32 btf=$btf: config failed"
	lost=$(grep '^CONFIG_.*=[ym]$' "$frag" | while read -r o; do
		grep -qx "$o" "$obj/.config" || echo "$o"; done)
	[ -z "$lost" ] || die "ppc32 btf=$btf: options that did not survive olddefconfig: $lost"
	"${k[@]}" -j"$JOBS" vmlinux modules > "$LOGS/abi32-btf$btf-build.log" 2>&1 ||
		{ tail -20 "$LOGS/abi32-btf$btf-build.log" >&2; die "ppc32 btf=$btf: build failed"; }
	say "ppc32 btf=$btf: built in $(( $(date +%s) - t0 )) s"
	out=$LOGS/abi32-btf$btf-summary
	python3 "$TOP/scripts/abi32.py" --obj "$obj" --btf "$btf" | tee "$out" || bad=1
	line=$(grep -E "^abi32 btf=$btf: [0-9]+ passed, [0-9]+ failed" "$out" | tail -1)
	if [ -n "$line" ]; then
		pass=$((pass + $(echo "$line" | awk '{print $3}')))
		fail=$((fail + $(echo "$line" | awk '{print $5}')))
	else
		fail=$((fail + 1))
	fi
done
echo "abi32 $(( $(date +%s) - t_all ))" >> "$LOGS/times"
[ $bad = 0 ] && [ $fail = 0 ] || bad=1
echo "$pass passed, $fail failed"
[ $bad = 0 ] || die "check-abi32 failed"
