#!/bin/bash
# Fetch and unpack the base kernel source into the cache (once).
# Prints the path of the unpacked source tree on stdout.
. "$(dirname "$0")/harness/common.sh"
set -e
mkdir -p "$CACHE"
src=$CACHE/$BASE_PKG-$BASE_VERSION
if [ -f "$src/.unpacked" ]; then
	echo "$src"
	exit 0
fi
cd "$CACHE"
version=$BASE_VERSION
deb="${BASE_PKG}_${version}_all.deb"
if [ ! -f "$deb" ]; then
	[ -n "$(find /var/lib/apt/lists -name '*Packages' 2>/dev/null | head -1)" ] ||
		apt-get update -qq >/dev/null
	if ! apt-get download "$BASE_PKG=$version" >/dev/null 2>&1; then
		apt-get update -qq >/dev/null || true
		if ! apt-get download "$BASE_PKG=$version" >/dev/null 2>&1; then
			version=$(apt-cache madison "$BASE_PKG" | awk '{print $3}' |
				  sort -V | tail -1)
			[ -n "$version" ] || die "$BASE_PKG is not available"
			say "WARNING: $BASE_PKG $BASE_VERSION is no longer served;"
			say "WARNING: falling back to $version, which the series was NOT tested on"
			apt-get download "$BASE_PKG=$version" >/dev/null ||
				die "cannot download $BASE_PKG=$version"
			deb="${BASE_PKG}_${version}_all.deb"
			src=$CACHE/$BASE_PKG-$version
		fi
	fi
fi
deb=$(ls "${BASE_PKG}_${version/:/%3a}_all.deb" 2>/dev/null || echo "$deb")
if [ "$version" = "$BASE_VERSION" ]; then
	echo "$BASE_SHA256  $deb" | sha256sum -c --quiet - ||
		die "checksum mismatch for $deb"
else
	# Checked against the signed archive index apt fetched.
	want=$(apt-cache show "$BASE_PKG=$version" | awk '/^SHA256:/{print $2; exit}')
	echo "$want  $deb" | sha256sum -c --quiet - ||
		die "checksum mismatch for $deb"
fi
rm -rf "$src.tmp"
mkdir -p "$src.tmp"
dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$BASE_PKG.tar.xz" |
	tar -xJ -C "$src.tmp" --strip-components=1
rm -rf "$src"
mv "$src.tmp" "$src"
touch "$src/.unpacked"
echo "$src"
