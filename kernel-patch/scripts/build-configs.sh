#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-configs.sh - compile the series' code under the configurations a
# reviewer's build bots try
#
# usage: build-configs.sh KVER [VARIANT...]
#
# Needs the patched tree of build-kernel.sh (build/linux-KVER/src). Each
# VARIANT is configured from tinyconfig + kernel-patch/config/base.config
# with its own changes, in build/linux-KVER/out-cfg-VARIANT, and the
# directories the series touches (mm, kernel/cgroup, fs/kernfs,
# fs/eventfd.o) are compiled with -Werror. Variants (default: all of them):
#
#   no-memcg      CONFIG_MEMCG=n (the controller without memory cgroups)
#   no-memcg-v1   CONFIG_MEMCG_V1=n (6.12 only)
#   no-lru-gen    CONFIG_LRU_GEN=n
#   no-swap       CONFIG_SWAP=n
#   i386          ARCH=i386 (32-bit: u64 divisions, unsigned long counters)
#
# Exit status: 0 when every variant compiled, 1 otherwise (the failures'
# logs are named), 64 on a usage error.
set -euo pipefail

kver=${1:-}
[ -n "$kver" ] || { echo "usage: build-configs.sh KVER [VARIANT...]" >&2; exit 64; }
shift
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
bdir=$(realpath -m "$top/build/linux-$kver")
src=$bdir/src
[ -f "$src/mm/mempressure.c" ] ||
	{ echo "build-configs: no patched tree in '$src' (run build-kernel.sh $kver)" >&2; exit 1; }

variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(no-memcg no-memcg-v1 no-lru-gen no-swap i386)

rc=0
for v in "${variants[@]}"; do
	arch=x86_64
	case $v in
	no-memcg) change="CONFIG_MEMCG=n" ;;
	no-memcg-v1)
		[ "$kver" != 6.1 ] || { echo "build-configs $kver: $v: skipped (6.12 only)"; continue; }
		change="CONFIG_MEMCG_V1=n" ;;
	no-lru-gen) change="CONFIG_LRU_GEN=n" ;;
	no-swap) change="CONFIG_SWAP=n" ;;
	i386) change="" arch=i386 ;;
	*) echo "build-configs: unknown variant '$v'" >&2; exit 64 ;;
	esac
	out=$bdir/out-cfg-$v
	log=$bdir/build-cfg-$v.log
	frag=$(mktemp)
	printf '%s\n' "$change" | sed 's/^\(CONFIG_[A-Z0-9_]*\)=n$/# \1 is not set/' >"$frag"
	t0=$(date +%s)
	if {
		make -C "$src" O="$out" ARCH=$arch tinyconfig &&
		(cd "$src" && ./scripts/kconfig/merge_config.sh -O "$out" \
			"$out/.config" "$top/kernel-patch/config/base.config" "$frag") &&
		make -C "$src" O="$out" ARCH=$arch olddefconfig &&
		grep -qx 'CONFIG_CGROUP_MEMPRESSURE=y' "$out/.config" &&
		{ [ -z "$change" ] || ! grep -q "^${change%=n}=y" "$out/.config"; } &&
		make -C "$src" O="$out" ARCH=$arch -j"$(nproc)" KCFLAGS=-Werror \
			mm/ kernel/cgroup/ fs/kernfs/ fs/eventfd.o
	} >"$log" 2>&1; then
		echo "build-configs $kver: $v: ok ($(( $(date +%s) - t0 )) s)"
	else
		echo "build-configs $kver: $v: FAILED, see '$log'"
		rc=1
	fi
	rm -f "$frag"
done
exit $rc
