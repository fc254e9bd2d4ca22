#!/bin/bash
# Install what the harness needs, from Debian's packages only; more
# packages for one target as arguments (make bench: python3-matplotlib).
. "$(dirname "$0")/common.sh"
PKGS="build-essential flex bison bc libelf-dev libssl-dev cpio kmod xz-utils
      ccache qemu-system-x86 busybox-static python3 git perl rsync
      python3-sphinx python3-yaml dwarves lz4 linux-perf trace-cmd $*"
missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
say "installing:$missing"
[ "$(id -u)" = 0 ] || die "need root to install:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
	die "apt-get install failed"
