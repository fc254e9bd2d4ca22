#!/bin/bash
# Install what the harness needs, from Debian's packages only; more
# packages for one target as arguments (make bench: python3-matplotlib;
# make hitprofile: gdb, which stands for the architecture's, GDB).
# ARCH=arm64: its cross compiler and QEMU too, and the guest's user space
# (busybox-static, dash, libc6, and chrt and nice from util-linux and
# coreutils, of that architecture), downloaded with
# apt-get download and unpacked into the cache: they cannot be installed
# beside the host's own (busybox-static:arm64 would replace the host's).
. "$(dirname "$0")/harness/common.sh"
eval "$(harness arch shell "${ARCH:-}")" || die "unknown ARCH"
PKGS="build-essential flex bison bc libelf-dev libssl-dev cpio kmod xz-utils
      ccache qemu-system-x86 busybox-static python3 git perl rsync
      python3-sphinx python3-yaml dwarves lz4 linux-perf trace-cmd shellcheck pyflakes3
      $HOST_PKGS"
for p in "$@"; do
	[ "$p" = gdb ] && p=$GDB
	PKGS="$PKGS $p"
done
missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	say "installing:$missing"
	[ "$(id -u)" = 0 ] || die "need root to install:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	# a list of package names: split into words on purpose
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
		die "apt-get install failed"
fi
[ -z "$USER_PKGS" ] && exit 0
# The guest's user space of another architecture, kept by the versions
# apt has of its packages.
if ! dpkg --print-foreign-architectures | grep -qx "$DEBIAN_ARCH"; then
	[ "$(id -u)" = 0 ] || die "need root: dpkg --add-architecture $DEBIAN_ARCH"
	dpkg --add-architecture "$DEBIAN_ARCH"
	apt-get update -qq >/dev/null
fi
want=$(for p in $USER_PKGS; do
	apt-cache policy "$p:$DEBIAN_ARCH" | awk -v p="$p" '/Candidate:/ {print p, $2}'
done)
echo "$want" | grep -q '(none)' && { apt-get update -qq >/dev/null; want=$(for p in $USER_PKGS; do
	apt-cache policy "$p:$DEBIAN_ARCH" | awk -v p="$p" '/Candidate:/ {print p, $2}'
done); }
[ -f "$USER_ROOT/.versions" ] && [ "$(cat "$USER_ROOT/.versions")" = "$want" ] && exit 0
say "unpacking the $DEBIAN_ARCH guest's user space:" $USER_PKGS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
# a list of package names: split into words on purpose
# shellcheck disable=SC2046
(cd "$tmp" && apt-get download -q $(for p in $USER_PKGS; do echo "$p:$DEBIAN_ARCH"; done) \
	>/dev/null 2>&1) || die "apt-get download failed"
rm -rf "$USER_ROOT"
mkdir -p "$USER_ROOT"
for d in "$tmp"/*.deb; do
	dpkg-deb -x "$d" "$USER_ROOT"
done
echo "$want" > "$USER_ROOT/.versions"
