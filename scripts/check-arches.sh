#!/bin/bash
# make check-arches: the series' C files built with W=1 for every
# architecture Debian has a cross compiler for, each on a tracing config
# with and without BTF.  A warning or an error in a file the series
# changes fails it; so does an architecture where FUNCTION_EVENTS or
# FUNCTION_EXIT_EVENTS, or its absence, is not what Kconfig should give
# (i386 has no DYNAMIC_FTRACE_WITH_ARGS: no function events, and the rest
# of the tracing code still builds; exit events exist where the function
# graph entry passes the argument registers, HAVE_FUNCTION_GRAPH_ENTRY_FREGS:
# not on s390 and powerpc; loongarch, which Debian 12 has no compiler for,
# does not select it either).
#   ARCHES="arm64 riscv64" scripts/check-arches.sh
. "$(dirname "$0")/common.sh"
ARCHES=${ARCHES:-x86_64 i386 arm64 riscv64 s390x riscv32 ppc32}
# arch: kernel ARCH, cross compiler prefix, Debian package, function
# events, what selects the word size (riscv32 and ppc32: 64-bit arguments
# in two registers)
declare -A KARCH=([x86_64]=x86 [i386]=i386 [arm64]=arm64 [riscv64]=riscv [s390x]=s390
		  [riscv32]=riscv [ppc32]=powerpc)
declare -A CROSS=([x86_64]= [i386]= [arm64]=aarch64-linux-gnu- [riscv64]=riscv64-linux-gnu-
		  [s390x]=s390x-linux-gnu- [riscv32]=riscv64-linux-gnu- [ppc32]=powerpc-linux-gnu-)
declare -A PKG=([x86_64]=gcc [i386]=gcc [arm64]=gcc-aarch64-linux-gnu [riscv64]=gcc-riscv64-linux-gnu
		[s390x]=gcc-s390x-linux-gnu [riscv32]=gcc-riscv64-linux-gnu [ppc32]=gcc-powerpc-linux-gnu)
declare -A FEVENTS=([x86_64]=y [i386]=n [arm64]=y [riscv64]=y [s390x]=y [riscv32]=y [ppc32]=y)
declare -A FEXIT=([x86_64]=y [i386]=n [arm64]=y [riscv64]=y [s390x]=n [riscv32]=y [ppc32]=n)
declare -A BITS=([x86_64]=CONFIG_64BIT=y [i386]= [arm64]=CONFIG_64BIT=y [riscv64]=CONFIG_64BIT=y
		 [s390x]=CONFIG_64BIT=y [riscv32]=CONFIG_ARCH_RV32I=y [ppc32]=CONFIG_PPC32=y)
[ -d "$TREE/.git" ] || die "no build/linux (make tree)"
pkgs=
for a in $ARCHES; do pkgs="$pkgs ${PKG[$a]}"; done
# shellcheck disable=SC2086
"$TOP/scripts/deps.sh" $pkgs || exit 1
export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache} CCACHE_BASEDIR=$TOP CCACHE_NOHASHDIR=1
series=$(git -C "$TREE" diff --name-only base..HEAD -- '*.c' '*.h')
dirs="kernel/trace/ samples/trace_events/"
frag=$(mktemp)
trap 'rm -f "$frag"' EXIT
bad=0 n=0
for a in $ARCHES; do
	for btf in y n; do
		obj=$BUILD/obj-arches/$a-btf$btf
		log=$LOGS/arches-$a-btf$btf.log
		mkdir -p "$obj" "$LOGS"
		{
			echo "CONFIG_SMP=y"; echo "CONFIG_MODULES=y"
			[ -z "${BITS[$a]}" ] || echo "${BITS[$a]}"
			for o in FTRACE FUNCTION_TRACER FUNCTION_GRAPH_TRACER DYNAMIC_FTRACE \
				KPROBES KPROBE_EVENTS PERF_EVENTS DEBUG_FS BPF_SYSCALL \
				FUNCTION_EVENTS SAMPLES; do
				echo "CONFIG_$o=y"
			done
			echo "CONFIG_SAMPLE_TRACE_EVENTS=m"; echo "CONFIG_SAMPLE_FUNCTION_EVENTS=m"
			echo "CONFIG_FUNCTION_GRAPH_RETVAL=y"
			if [ $btf = y ]; then
				echo "CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y"
				echo "CONFIG_DEBUG_INFO_BTF=y"; echo "CONFIG_PROBE_EVENTS_BTF_ARGS=y"
			fi
		} > "$frag"
		cc=${CROSS[$a]}gcc
		k=(make -s -C "$TREE" O="$obj" ARCH="${KARCH[$a]}" CROSS_COMPILE="${CROSS[$a]}"
		   CC="ccache $cc" LOCALVERSION=)
		"${k[@]}" tinyconfig >/dev/null 2>&1 &&
		"$TREE/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" >/dev/null &&
		"${k[@]}" olddefconfig >/dev/null 2>&1 || { say "$a btf=$btf: config failed"; bad=1; continue; }
		if [ $btf = y ] && ! grep -q '^CONFIG_DEBUG_INFO_BTF=y' "$obj/.config"; then
			say "$a btf=y: CONFIG_DEBUG_INFO_BTF did not survive olddefconfig"
			bad=1
		fi
		got=$(grep -q '^CONFIG_FUNCTION_EVENTS=y' "$obj/.config" && echo y || echo n)
		if [ "$got" != "${FEVENTS[$a]}" ]; then
			say "$a btf=$btf: FUNCTION_EVENTS=$got, expected ${FEVENTS[$a]}"
			bad=1
		fi
		gotx=$(grep -q '^CONFIG_FUNCTION_EXIT_EVENTS=y' "$obj/.config" && echo y || echo n)
		if [ "$gotx" != "${FEXIT[$a]}" ]; then
			say "$a btf=$btf: FUNCTION_EXIT_EVENTS=$gotx, expected ${FEXIT[$a]}"
			bad=1
		fi
		# shellcheck disable=SC2086
		if ! "${k[@]}" -j"$JOBS" W=1 $dirs > "$log" 2>&1; then
			say "$a btf=$btf: the build failed (log: ${log#"$TOP"/})"
			grep -E 'error' "$log" | head -5 >&2
			bad=1
			continue
		fi
		w=0
		for f in $series; do
			if grep -E "(^|/)$f:[0-9]+:[0-9]+: (warning|error):" "$log" >&2; then
				w=1
			fi
		done
		n=$((n + 1))
		[ $w = 0 ] || { say "$a btf=$btf: a warning in a file the series changes"; bad=1; }
		echo "check-arches: $a btf=$btf: FUNCTION_EVENTS=$got FUNCTION_EXIT_EVENTS=$gotx, $dirs built with W=1$([ $w = 0 ] && echo ', no warning in the series'\'' files')"
	done
done
[ $bad = 0 ] || die "check-arches failed"
echo "check-arches: $n configs, no warning in the series' files"
