#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kernel.sh - unpack, patch, configure and build the VM test kernel
#
# usage: build-kernel.sh KVER [DEBUG]
#
#   KVER   6.12 or 6.1: /usr/src/linux-source-$KVER.tar.xz is unpacked
#          under build/linux-$KVER/src
#   DEBUG  1 merges kernel-patch/config/debug.config too (lockdep, KASAN...)
#
# KPATCH_SERIES_DIR=DIR takes the series from DIR instead (trying out a
# series before it is committed; a directory without patches builds the
# stock kernel). KPATCH_SOURCE=TARBALL unpacks another linux-source
# tarball (a Debian point release, debian-source.sh), and
# KPATCH_BUILD_NAME=NAME builds in build/linux-NAME instead, so that a
# stock or an older kernel does not replace the series' tree (compare-
# stock.sh).
#
# The series kernel-patch/$KVER/0*.patch (all but the cover letter) is
# applied with patch -p1; a series that does not apply fails the build.
# When the series changes, the files the old series touched are restored
# from backups and the new one is applied, so kbuild rebuilds only what
# changed.  Each flavour (plain, debug) builds out of tree in its own
# directory; a stamp keyed on the tarball, the series, the fragments and
# the compiler skips the build entirely when nothing changed.
#
# Output: build/linux-$KVER/bzImage-{plain,debug} (build/linux-NAME/...)
set -euo pipefail

kver=${1:?usage: build-kernel.sh KVER [DEBUG]}
debug=${2:-0}

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
cfgdir=$top/kernel-patch/config
series_dir=${KPATCH_SERIES_DIR:-$top/kernel-patch/$kver}
tarball=${KPATCH_SOURCE:-/usr/src/linux-source-$kver.tar.xz}
# resolved: build/linux-$kver may be a link into a cache shared by clones
# (scripts/check.sh), and kbuild's out-of-tree files hold absolute paths
mkdir -p "$top/build"
bdir=$(realpath -m "$top/build/linux-${KPATCH_BUILD_NAME:-$kver}")
src=$bdir/src

if [ "$debug" = 1 ]; then
	flavour=debug
	fragments=("$cfgdir/base.config" "$cfgdir/debug.config")
else
	flavour=plain
	fragments=("$cfgdir/base.config")
fi
out=$bdir/out-$flavour
log=$bdir/build-$flavour.log

prog="build-kernel $kver/$flavour"

hash_files() { cat "$@" | sha256sum | cut -d' ' -f1; }

# --- the source tarball ------------------------------------------------------
[ -z "${KPATCH_SOURCE:-}" ] || [ -f "$tarball" ] ||
	die "KPATCH_SOURCE '$tarball': no such file"
if [ ! -f "$tarball" ]; then
	pkg=linux-source-$kver
	msg "'$tarball' missing, installing $pkg"
	if ! apt-get install -y "$pkg" >&2; then
		apt-get update >&2 || true
		apt-get install -y "$pkg" >&2 || die "cannot install '$pkg'"
	fi
	[ -f "$tarball" ] || die "'$pkg' installed but '$tarball' missing"
fi

mkdir -p "$bdir"
exec 9>"$bdir/.lock"
flock 9

# --- the series --------------------------------------------------------------
series=()
if [ -d "$series_dir" ]; then
	for p in "$series_dir"/0*.patch; do
		[ -e "$p" ] || continue
		case ${p##*/} in
		0000-cover-letter.patch) continue ;;
		esac
		series+=("$p")
	done
fi
if [ ${#series[@]} -gt 0 ]; then
	series_id=$( (printf '%s\n' "${series[@]##*/}"; cat "${series[@]}") |
		sha256sum | cut -d' ' -f1)
else
	series_id=none
fi
tar_id=$(stat -c '%n %s %Y' "$tarball")

# files a set of patches touch (both sides of renames, new files too)
patch_files() {
	[ $# -gt 0 ] || return 0
	sed -nE -e 's|^diff --git a/([^ ]+) b/([^ ]+)$|\1\n\2|p' \
		-e 's|^(\+\+\+\|---) [ab]/([^\t ]+).*$|\2|p' "$@" | sort -u
}

# put back what the applied series changed; idempotent
restore_tree() {
	local f
	[ -s "$bdir/applied.files" ] || { rm -rf "$bdir/orig"; return 0; }
	while IFS= read -r f; do
		if [ -e "$bdir/orig/$f" ]; then
			mkdir -p "$(dirname "$src/$f")"
			cp "$bdir/orig/$f" "$src/$f"	# new mtime: kbuild rebuilds
		else
			rm -f "$src/$f"
		fi
	done <"$bdir/applied.files"
	: >"$bdir/applied.files"
	rm -rf "$bdir/orig"
	echo none >"$bdir/applied.series"
}

if [ ! -f "$bdir/src.stamp" ] || [ "$(cat "$bdir/src.stamp")" != "$tar_id" ]; then
	msg "unpacking '$tarball'"
	rm -rf "$src" "$bdir"/out-* "$bdir/orig" "$bdir/applied."*
	mkdir -p "$src"
	t0=$(date +%s)
	tar -xf "$tarball" --strip-components=1 -C "$src"
	: >"$bdir/applied.files"
	echo none >"$bdir/applied.series"
	echo "$tar_id" >"$bdir/src.stamp"
	msg "unpacked in $(($(date +%s) - t0))s"
fi

# Files that come out of the new series as they were under the old one get
# their old mtime back, so that switching series (a test-only patch on top,
# a fix in one file) rebuilds only what changed, not every user of a header
# the series touches.
snapshot_tree() {
	local f
	rm -rf "$bdir/snap"
	[ -s "$bdir/applied.files" ] || return 0
	while IFS= read -r f; do
		[ -f "$src/$f" ] || continue
		mkdir -p "$(dirname "$bdir/snap/$f")"
		cp -p "$src/$f" "$bdir/snap/$f"
	done <"$bdir/applied.files"
}

keep_unchanged_mtimes() {
	local f
	[ -d "$bdir/snap" ] || return 0
	(cd "$bdir/snap" && find . -type f -printf '%P\n') | while IFS= read -r f; do
		if [ -f "$src/$f" ] && cmp -s "$bdir/snap/$f" "$src/$f"; then
			touch -r "$bdir/snap/$f" "$src/$f"
		fi
	done
	rm -rf "$bdir/snap"
}

if [ "$(cat "$bdir/applied.series" 2>/dev/null)" != "$series_id" ]; then
	snapshot_tree
	restore_tree
	if [ ${#series[@]} -gt 0 ]; then
		echo dirty >"$bdir/applied.series"
		patch_files "${series[@]}" >"$bdir/applied.files.new"
		mkdir -p "$bdir/orig"
		while IFS= read -r f; do
			if [ -f "$src/$f" ]; then
				mkdir -p "$(dirname "$bdir/orig/$f")"
				cp -p "$src/$f" "$bdir/orig/$f"
			fi
		done <"$bdir/applied.files.new"
		mv "$bdir/applied.files.new" "$bdir/applied.files"
		for p in "${series[@]}"; do
			msg "applying ${p##*/}"
			if ! (cd "$src" && patch -p1 --batch --forward \
				--no-backup-if-mismatch -i "$p") >"$bdir/patch.log" 2>&1; then
				cat "$bdir/patch.log" >&2
				restore_tree
				die "'${p##*/}' does not apply to linux-source-$kver"
			fi
			if grep -qE 'fuzz|offset' "$bdir/patch.log"; then
				sed 's/^/  /' "$bdir/patch.log" >&2
			fi
		done
		find "$src" -name '*.rej' -o -name '*.orig' | grep -q . &&
			die "stray .rej/.orig files in '$src'"
	fi
	keep_unchanged_mtimes
	echo "$series_id" >"$bdir/applied.series"
fi

# --- configure and build -----------------------------------------------------
stamp_id=$( (echo "$tar_id"; echo "$series_id"; gcc --version | head -n1
	hash_files "${fragments[@]}" "$here/build-kernel.sh") |
	sha256sum | cut -d' ' -f1)
image=$bdir/bzImage-$flavour

if [ -f "$image" ] && [ -f "$out/.mpctl-stamp" ] &&
   [ "$(cat "$out/.mpctl-stamp")" = "$stamp_id" ]; then
	msg "up to date: $image"
	exit 0
fi
rm -f "$out/.mpctl-stamp" "$image"
mkdir -p "$out"

t0=$(date +%s)
msg "configuring (tinyconfig + ${fragments[*]##*/})"
{
	make -C "$src" O="$out" tinyconfig
	(cd "$src" && ./scripts/kconfig/merge_config.sh -O "$out" \
		"$out/.config" "${fragments[@]}")
} >"$log" 2>&1 || { tail -n 40 "$log" >&2; die "configuration failed, see '$log'"; }

# merge_config.sh only warns: check what we asked for is really there
grep -rhoE --include='Kconfig*' '^[[:space:]]*(menu)?config[[:space:]]+[A-Za-z0-9_]+' \
	"$src" | awk '{print $2}' | sort -u >"$bdir/symbols"
bad=0
for frag in "${fragments[@]}"; do
	strict=1
	[ "${frag##*/}" = debug.config ] && strict=0
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) sym=${line%%=*}; sym=${sym#CONFIG_} ;;
		"# CONFIG_"*" is not set") sym=${line#\# CONFIG_}; sym=${sym%% *} ;;
		*) continue ;;
		esac
		if ! grep -qx "$sym" "$bdir/symbols"; then
			if [ "$sym" = CGROUP_MEMPRESSURE ] && [ "$series_id" != none ]; then
				msg "series applied but CONFIG_CGROUP_MEMPRESSURE does not exist"
				bad=1
			fi
			continue
		fi
		case $line in
		"# "*) got_ok=$(grep -c "^CONFIG_$sym=[ym]" "$out/.config" || true)
		       [ "$got_ok" = 0 ] && continue ;;
		*) grep -qx "$line" "$out/.config" && continue ;;
		esac
		got=$(grep -E "^(# )?CONFIG_${sym}[= ]" "$out/.config" || echo "CONFIG_$sym undefined")
		if [ $strict = 1 ]; then
			msg "wanted '$line', got '$got'"
			bad=1
		else
			msg "warning: wanted '$line', got '$got' (not available here)"
		fi
	done <"$frag"
done
[ $bad = 0 ] || die "configuration lacks required options, see '$out/.config'"

msg "building bzImage with -j$(nproc), log in '$log'"
# uname -v names the series, not the build's number, time, user and host:
# random_init() mixes init_utsname() into the kernel's random state, so
# with these two builds of one series boot alike in the det mode, whose
# only other input is the seed of the guest's clock (README-harness.md,
# "Seeds")
if ! KBUILD_BUILD_VERSION=${series_id:0:12} \
	KBUILD_BUILD_TIMESTAMP="2026-01-01 00:00:00 UTC" \
	KBUILD_BUILD_USER=mpctl KBUILD_BUILD_HOST=mpctl \
	make -C "$src" O="$out" -j"$(nproc)" bzImage >>"$log" 2>&1; then
	grep -E 'error|Error' "$log" | head -n 40 >&2 || true
	tail -n 20 "$log" >&2
	die "kernel build failed, see '$log'"
fi
cp "$out/arch/x86/boot/bzImage" "$image"
if [ ${#series[@]} -gt 0 ]; then
	printf '%s\n' "${series[@]##*/}" >"$bdir/series-$flavour"
else
	echo none >"$bdir/series-$flavour"
fi
echo "$stamp_id" >"$out/.mpctl-stamp"
secs=$(($(date +%s) - t0))
echo "$(date -u +%FT%TZ) $kver $flavour series=$series_id build_s=$secs" \
	>>"$top/build/kernel-times.log"
msg "built '$image' in ${secs}s"
