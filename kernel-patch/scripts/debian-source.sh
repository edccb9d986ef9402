#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debian-source.sh - the source tarball of a Debian kernel point release
#
# usage: debian-source.sh KVER list
#        debian-source.sh KVER VERSION
#
#   KVER      6.12 or 6.1 (the package linux-source-KVER)
#   list      the versions apt can install (apt-cache madison), newest first
#   VERSION   one of them, e.g. 6.12.113-1~deb12u1: its package is fetched
#             with "apt-get download" (the installed linux-source-KVER is
#             left alone: the harness builds from it) and unpacked under
#             build/debian-src/; prints the tarball's path, for
#             build-kernel.sh's KPATCH_SOURCE. The installed version
#             prints /usr/src/linux-source-KVER.tar.xz without a download.
#
# Only what the configured apt sources hold can be had: on Debian 12 with
# bookworm and bookworm-security, linux-source-6.12 6.12.107 to 6.12.118
# and linux-source-6.1 6.1.170 to 6.1.192 (2026-12-07, a subset of each
# range). Exit status: 0; 1 a failed download; 64 usage, or a version apt
# does not have.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"


[ $# = 2 ] || usage
kver=$1 ver=$2
case $kver in 6.1 | 6.12) ;; *) msg "KVER '$kver': 6.1 or 6.12"; usage ;; esac
pkg=linux-source-$kver

versions=$(apt-cache madison "$pkg" 2>/dev/null | awk -F' *[|] *' '{ print $2 }' | sort -urV)
if [ "$ver" = list ]; then
	[ -n "$versions" ] || { msg "apt knows no $pkg (apt-get update?)"; exit 1; }
	echo "$versions"
	exit 0
fi
grep -qxF -- "$ver" <<<"$versions" || {
	msg "$pkg $ver: not in apt's sources (debian-source.sh $kver list)"
	exit 64
}
installed=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)
if [ "$installed" = "$ver" ] && [ -f "/usr/src/$pkg.tar.xz" ]; then
	echo "/usr/src/$pkg.tar.xz"
	exit 0
fi

dir=$top/build/debian-src/$pkg-$ver
tarball=$dir/$pkg.tar.xz
if [ ! -f "$tarball" ]; then
	mkdir -p "$dir"
	(cd "$dir" && apt-get download "$pkg=$ver" >&2) ||
		{ msg "cannot download $pkg $ver"; exit 1; }
	deb=$(ls "$dir"/"${pkg}"_*.deb)
	dpkg-deb --fsys-tarfile "$deb" |
		tar -x -O "./usr/src/$pkg.tar.xz" >"$tarball.tmp" ||
		{ msg "'$deb' holds no usr/src/$pkg.tar.xz"; rm -f "$tarball.tmp"; exit 1; }
	mv "$tarball.tmp" "$tarball"
	rm -f "$deb"
fi
echo "$tarball"
