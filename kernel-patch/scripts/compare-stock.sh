#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# compare-stock.sh - the kernels users run: compare Debian's kernel sources
#                    without the series, or a point release with another,
#                    under the stock interfaces (make compare-stock, by hand)
#
# usage: compare-stock.sh [-o DIR] [-B] BASE NEW [-- COMPARE-KERNELS OPTIONS]
#
#   BASE, NEW  each one of
#                KVER                 Debian's installed linux-source-KVER
#                                     (6.1 or 6.12), stock: no series
#                KVER=VERSION         that point release of it, stock (see
#                                     "debian-source.sh KVER list")
#                KVER+series          the installed source with this tree's
#                                     series: the harness's own kernel
#   -o DIR     output directory (default build/compare-stock)
#   -B         do not build: the kernels must be built already
#
# Each stock kernel is built by build-kernel.sh with the harness's config
# (kernel-patch/config/base.config) and an empty series, in a tree of its
# own (build/linux-KVER-stock, build/linux-KVER-VERSION-stock or -series:
# the series' tree build/linux-KVER is left as it is); a point release's
# source comes from debian-source.sh (apt-get download). Then compare-kernels.sh boots both
# with -P, the interfaces a stock kernel has: cgroup2 alone, the report's
# scenarios on the emulated shrinker over PSI (the series' kernel booted
# with cgroup_disable=mempressure), in the deterministic mode, with -K/-k
# for the two kernels, and its other options after "--". DIR/kcidb.json
# gets NEW's patchset_hash: empty for a stock kernel.
#
# Examples (each several boots of about a minute, plus the kernel builds):
#   compare-stock.sh 6.1 6.12                  is 6.12's deficit mainline's?
#   compare-stock.sh 6.12 6.12+series          what the series changes
#   compare-stock.sh 6.12=6.12.113-1~deb12u1 6.12   did this update change
#                                              memory-pressure behaviour?
#
# Exit status: compare-kernels.sh's (0 no regression, 1 a regression, 2 a
# build, VM or report failed); 64 usage.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
out=$top/build/compare-stock
build=1


while getopts o:Bh opt; do
	case $opt in
	o) out=$(realpath -m "$OPTARG") ;;
	B) build=0 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
specs=("$1" "$2")
shift 2
if [ $# -gt 0 ]; then
	[ "$1" = -- ] || { msg "'$1': compare-kernels.sh's options go after --"; usage; }
	shift
fi

# spec SPEC: sets kver, ver ("" the installed source), series (0 or 1)
spec() {
	local s=$1
	series=0
	case $s in *+series) series=1; s=${s%+series} ;; esac
	kver=${s%%=*}
	ver=
	[ "$kver" = "$s" ] || ver=${s#*=}
	case $kver in 6.1 | 6.12) ;;
	*) msg "'$1': KVER is 6.1 or 6.12"; usage ;;
	esac
	case $ver in
	*[!A-Za-z0-9.+~-]*) msg "'$1': '$ver' is no Debian version"; usage ;;
	esac
}

# check both before anything is built
for s in "${specs[@]}"; do spec "$s"; done

empty=$out/no-series
mkdir -p "$out" "$empty"
imgs=() kvers=() hashes=()
for s in "${specs[@]}"; do
	spec "$s"
	src=
	name=$kver${ver:+-$ver}
	if [ -n "$ver" ] && [ "$build" = 1 ]; then
		src=$("$here/debian-source.sh" "$kver" "$ver") || exit 2
	fi
	if [ "$series" = 1 ]; then
		[ -z "$ver" ] || name=$name-series
		sdir=$top/kernel-patch/$kver
		hashes+=("$("$here/series-hash.sh" "$sdir")")
	else
		name=$name-stock
		sdir=$empty
		hashes+=("")
	fi
	if [ "$build" = 1 ]; then
		msg "$s: building build/linux-$name"
		if [ "$name" = "$kver" ]; then
			make -C "$top" --no-print-directory kernel KVER="$kver" DEBUG=0 >&2
		else
			KPATCH_SOURCE=$src KPATCH_SERIES_DIR=$sdir KPATCH_BUILD_NAME=$name \
				"$here/build-kernel.sh" "$kver" 0 >&2
		fi || { msg "$s: the kernel build failed"; exit 2; }
	fi
	img=$top/build/linux-$name/bzImage-plain
	[ -f "$img" ] || { msg "$s: '$img' missing (without -B it is built)"; exit 2; }
	imgs+=("$img")
	kvers+=("$kver")
done

msg "${specs[0]} against ${specs[1]} ('$out')"
rc=0
MPCTL_PATCHSET_HASH=${hashes[1]} "$here/compare-kernels.sh" -P \
	-K "${imgs[0]}" -k "${imgs[1]}" -o "$out" "$@" "${kvers[0]}" "${kvers[1]}" ||
	rc=$?
exit "$rc"
