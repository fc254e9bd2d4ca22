#!/bin/bash
# Configure and build the kernel in build/linux out of tree.
#   [ARCH=arm64] build.sh [OBJDIR] [FRAGMENT...]
# Default: the one kernel make check boots, in build/obj (build/obj-ARCH
# for another architecture than x86_64): config/kconfig/base.config, the
# architecture's fragment and config/kconfig/debug.config.  The architecture's
# fragment (scripts/harness/arch.py) always follows base.config.  Every option a
# fragment sets is checked after olddefconfig; one that did not survive
# fails the build.
. "$(dirname "$0")/harness/common.sh"
set -e
eval "$(harness arch shell "${ARCH:-}")" || die "unknown ARCH"
obj=$(realpath -m "${1:-$ARCH_OBJ}")
shift || true
frags=()
for f in "${@:-$TOP/config/kconfig/base.config}"; do
	frags+=("$f")
	[ "$(realpath "$f")" = "$TOP/config/kconfig/base.config" ] && frags+=("$ARCH_CONFIG")
done
[ $# -gt 0 ] || frags+=("$TOP/config/kconfig/debug.config")
[ -n "$CROSS" ] && ! command -v "${CROSS}gcc" >/dev/null &&
	die "no ${CROSS}gcc (make deps ARCH=$ARCH_NAME)"
[ -d "$TREE/.git" ] || die "no build/linux (make tree)"
mkdir -p "$obj" "$LOGS"
cc=${CROSS}gcc
command -v ccache >/dev/null && cc="ccache ${CROSS}gcc"
export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache} CCACHE_BASEDIR=$TOP CCACHE_NOHASHDIR=1
export CCACHE_SLOPPINESS=time_macros,include_file_mtime,include_file_ctime
ccache -M 8G >/dev/null 2>&1 || true
ccache -z >/dev/null 2>&1 || true
# KASAN instruments only the directories config/lists/kasan-scope lists: a
# command-line KASAN_SANITIZE=n turns it off everywhere, and a per-object
# KASAN_SANITIZE_<stem>.o=y (scripts/Makefile.lib) turns it back on for
# each .c file found there.
kasan=()
if grep -qx 'CONFIG_KASAN=y' "${frags[@]}" && [ -f "$TOP/config/lists/kasan-scope" ]; then
	kasan=(KASAN_SANITIZE=n)
	while read -r dir; do
		case "$dir" in ''|'#'*) continue ;; esac
		[ -d "$TREE/$dir" ] || die "config/lists/kasan-scope: no $dir in build/linux"
		for f in "$TREE/$dir"/*.c; do
			f=${f##*/}
			kasan+=("KASAN_SANITIZE_${f%.c}.o=y")
		done
	done < "$TOP/config/lists/kasan-scope"
fi
kmake() { make -s -C "$TREE" O="$obj" ARCH="$KARCH" CROSS_COMPILE="$CROSS" CC="$cc" \
	LOCALVERSION= "${kasan[@]}" "$@"; }

t0=$(date +%s)
# The kernel cache: the kernel make check boots, kept by what it is built
# from (the tree build/linux holds, the fragments, this script, the
# compiler and pahole), for a second run of the same series, as in CI.
# Builds from a tree with uncommitted changes, or into another directory,
# are not kept.  FBE_KERNEL_CACHE=0 builds anyway.
kcache_key() {
	[ "$obj" = "$(realpath -m "$ARCH_OBJ")" ] && [ "${FBE_KERNEL_CACHE:-1}" != 0 ] &&
		[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] || return 1
	{ git -C "$TREE" rev-parse 'HEAD^{tree}'; cat "${frags[@]}" "$TOP/config/lists/kasan-scope" "$0"
	  echo "$KARCH"; "${CROSS}gcc" --version; pahole --version; } | sha256sum | cut -c1-16
}
kcache=
if key=$(kcache_key); then
	kcache=$CACHE/kernels/$key
	if [ -f "$kcache/done" ]; then
		rm -rf "$obj/modinst"
		mkdir -p "$(dirname "$obj/$KIMAGE")"
		cp "$kcache/image" "$obj/$KIMAGE"
		cp -a "$kcache/modinst" "$obj/modinst"
		cp "$kcache/config" "$obj/.config"
		touch "$kcache/done"
		phase_done "${PHASE:-build}" "$t0"
		say "=== phase ${PHASE:-build}: $(( $(date +%s) - t0 ))s, $(cat "$kcache/release"): from the kernel cache (${kcache#"$HOME"/}: this tree, config and compiler, built $(cat "$kcache/built"))"
		exit 0
	fi
fi
# FBE_CACHED_ONLY=1: only from the kernel cache; exit 3 if it is not there
[ "${FBE_CACHED_ONLY:-0}" = 1 ] && exit 3
# The one configure step of every kernel (scripts/harness/kconfig.py): from
# tinyconfig when a fragment changed, else olddefconfig on the .config
# there; every requested option must have survived (check-bisect builds
# patches that come before the options they add: KCONFIG_CHECK=0).
want=$(cat "${frags[@]}" | sha256sum | cut -d' ' -f1)
keep=()
[ -f "$obj/.config" ] && [ "$(cat "$obj/.fragments" 2>/dev/null)" = "$want" ] && keep=(--keep)
nocheck=()
[ "$KCONFIG_CHECK" = 0 ] && nocheck=(--no-check)
harness kconfig --karch "$KARCH" --cross "$CROSS" --cc "$cc" --obj "$obj" \
	"${keep[@]}" "${nocheck[@]}" "${frags[@]}" ||
	die "requested Kconfig options did not survive olddefconfig"
echo "$want" > "$obj/.fragments"

if ! kmake -j"$JOBS" "$KTARGET" modules > "$LOGS/build-$(basename "$obj").log" 2>&1; then
	grep -E 'error|Error' "$LOGS/build-$(basename "$obj").log" | head -30 >&2
	tail -20 "$LOGS/build-$(basename "$obj").log" >&2
	die "kernel build failed (log: build/logs/build-$(basename "$obj").log)"
fi
log="$LOGS/build-$(basename "$obj").log"
grep -E 'warning:' "$log" | head -20 >&2 || true
# A warning in a file the series touches fails the build (only the files
# compiled in this build are seen: ccache replays their warnings too).
series_files=$(git -C "$TREE" diff --name-only base..HEAD 2>/dev/null || true)
for f in $series_files; do
	case "$f" in *.c|*.h) ;; *) continue ;; esac
	if grep -E "^(\.\./linux/)?$f:[0-9]+:[0-9]+: warning:" "$log" >&2; then
		die "compiler warning in $f, which the series changes"
	fi
done
rm -rf "$obj/modinst"
kmake INSTALL_MOD_PATH="$obj/modinst" INSTALL_MOD_STRIP=1 modules_install >/dev/null
if [ -n "$kcache" ] && [ "$(kcache_key)" = "$key" ]; then
	tmp=$CACHE/kernels/.tmp-$$
	rm -rf "$tmp" "$kcache"
	mkdir -p "$tmp"
	cp "$obj/$KIMAGE" "$tmp/image"
	cp -a "$obj/modinst" "$tmp/modinst"
	cp "$obj/.config" "$tmp/config"
	kmake -s kernelrelease > "$tmp/release"
	date -u '+%F %T UTC' > "$tmp/built"
	touch "$tmp/done"
	mv "$tmp" "$kcache"
	# The three used last
	find "$CACHE/kernels" -mindepth 2 -maxdepth 2 -name 'done' -printf '%T@ %h\n' |
		sort -rn | tail -n +4 | cut -d' ' -f2- | xargs -r rm -rf
fi
phase_done "${PHASE:-build}" "$t0"
say "=== phase ${PHASE:-build}: $(( $(date +%s) - t0 ))s, $(kmake -s kernelrelease); ccache: $(ccache -s 2>/dev/null |
	awk '/^ *Hits:/ && !h {h=$0} /^ *Misses:/ && !m {m=$0} END {gsub(/  +/, " ", h); gsub(/  +/, " ", m); print h ";" m}')"
