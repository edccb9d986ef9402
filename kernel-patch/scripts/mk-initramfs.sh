#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mk-initramfs.sh - build the gzipped newc initramfs the VM tests boot
#
# usage: mk-initramfs.sh KVER [DEBUG]
#
# Holds busybox (with applet links), bash-static as /bin/bash, bats-core
# with bats-support and bats-assert, stress-ng and jq with their shared
# libraries and loader, build/static/mpctl when it exists, the programs of
# kernel-patch/tests/*.c and bats/vm/*.c (built with gcc -static), the
# kselftest test_mempressure of the patched tree when it exists, the
# repository's bats/ directory as /mpctl/bats and /init (vm-init.sh).
#
# Output: build/vm-$KVER/initramfs-{plain,debug}.cpio.gz
set -euo pipefail

kver=${1:?usage: mk-initramfs.sh KVER [DEBUG]}
debug=${2:-0}
flavour=plain
[ "$debug" = 1 ] && flavour=debug

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
vdir=$top/build/vm-$kver
kdir=$(realpath -m "$top/build/linux-$kver")
src=$kdir/src
root=$vdir/root-$flavour
out=$vdir/initramfs-$flavour.cpio.gz

prog="mk-initramfs $kver/$flavour"

for f in /bin/busybox /bin/bash-static /usr/bin/bats /usr/bin/stress-ng \
	 /usr/bin/jq /usr/lib/bats/bats-support/load.bash \
	 /usr/lib/bats/bats-assert/load.bash; do
	[ -e "$f" ] || die "'$f' missing (apt-get install busybox-static" \
		"bash-static bats bats-support bats-assert stress-ng jq)"
done
file -L /bin/busybox | grep -q 'statically linked' ||
	die "'/bin/busybox' is not static (apt-get install busybox-static)"

mkdir -p "$vdir"
rm -rf "$root"
mkdir -p "$root"/{usr/bin,usr/lib,usr/libexec,usr/lib64,dev,proc,sys,tmp,run,root}
mkdir -p "$root"/{etc,mpctl/bin,var/tmp}
ln -s usr/bin "$root/bin"
ln -s usr/bin "$root/sbin"
ln -s bin "$root/usr/sbin"
ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"
chmod 1777 "$root/tmp" "$root/var/tmp"

# busybox first, the real programs below override its applets
cp /bin/busybox "$root/usr/bin/busybox"
for a in $(/bin/busybox --list); do
	[ "$a" = busybox ] || ln -sf busybox "$root/usr/bin/$a"
done
rm -f "$root/usr/bin/bash"
cp /bin/bash-static "$root/usr/bin/bash"

# copy a binary and the shared libraries it needs, loader included
copy_dyn() {
	local bin=$1 dest=$2 lib
	cp "$bin" "$root$dest"
	ldd "$bin" | awk '/=> \// {print $3} /^\t\// {print $1}' |
	while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}
mkdir -p "$root/usr/lib/x86_64-linux-gnu"
ln -s ../usr/lib/x86_64-linux-gnu "$root/usr/lib64/x86_64-linux-gnu"
copy_dyn /usr/bin/stress-ng /usr/bin/stress-ng
copy_dyn /usr/bin/jq /usr/bin/jq
# ldd names /lib64/ld-linux-x86-64.so.2 and /lib/x86_64-linux-gnu/...:
# both land in usr/ through the symlinks above

# bats-core as Debian lays it out, plus the helper libraries
cp -a /usr/lib/bats-core "$root/usr/lib/"
cp -a /usr/libexec/bats-core "$root/usr/libexec/"
cp -a /usr/lib/bats "$root/usr/lib/"
cp -P /usr/bin/bats "$root/usr/bin/bats" 2>/dev/null || true
if [ -L /usr/bin/bats ]; then
	ln -sf "$(readlink /usr/bin/bats)" "$root/usr/bin/bats"
fi

# mpctl itself and its static helpers, when the lead's static build exists
if [ -x "$top/build/static/mpctl" ]; then
	cp "$top"/build/static/* "$root/mpctl/bin/"
	msg "including build/static/*"
else
	msg "build/static/mpctl missing: mpctl-based VM tests will skip"
fi

# static test programs: each .c with a main() becomes a program, the
# other .c files of the directory are linked into all of them
build_progs() {
	local dir=$1 c mains=() libs=()
	for c in "$dir"/*.c; do
		[ -e "$c" ] || return 0
		if grep -qE '^(int|static int)[[:space:]]+main[[:space:]]*\(' "$c"; then
			mains+=("$c")
		else
			libs+=("$c")
		fi
	done
	for c in "${mains[@]}"; do
		local name
		name=$(basename "$c" .c)
		gcc -static -O2 -g -Wall -pthread -I"$dir" -o "$root/mpctl/bin/$name" \
			"$c" "${libs[@]}" ||
			die "cannot build '$c' with gcc -static"
	done
	msg "built ${#mains[@]} program(s) from ${dir#"$top"/}"
}
build_progs "$top/bats/vm"
[ -d "$top/kernel-patch/tests" ] && build_progs "$top/kernel-patch/tests"

# the kselftest of the patched tree
sel=$src/tools/testing/selftests
if [ -f "$sel/cgroup/test_mempressure.c" ]; then
	hdr=$kdir/out-$flavour/usr/include
	if [ ! -d "$hdr" ]; then
		make -s -C "$src" O="$kdir/out-$flavour" \
			headers_install >&2 || die "headers_install failed"
	fi
	if (cd "$sel/cgroup" && gcc -static -O2 -Wall -pthread -isystem "$hdr" \
		-I"$sel" -o "$root/mpctl/bin/test_mempressure" \
		test_mempressure.c cgroup_util.c) >"$vdir/kselftest-build.log" 2>&1; then
		msg "built kselftest test_mempressure"
	else
		cat "$vdir/kselftest-build.log" >&2
		echo "test_mempressure.c present but does not build" \
			>"$root/mpctl/kselftest-broken"
		msg "warning: kselftest test_mempressure does not build"
	fi
fi

# all of bats/: the VM suites, and what they load from outside bats/vm
# (bats/lib/core.bash; the host suites and helpers.bash that
# 80-v1-host-suites.bats runs)
cp -a "$top/bats" "$root/mpctl/bats"
[ -f "$root/mpctl/bats/lib/core.bash" ] || die "bats/lib/core.bash missing"
cp "$here/vm-init.sh" "$root/init"
chmod 755 "$root/init"
printf 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/:/bin/sh\n' \
	>"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
echo "$kver $flavour" >"$root/mpctl/flavour"
cp "$top/build/linux-$kver/series-$flavour" "$root/mpctl/series" 2>/dev/null ||
	echo none >"$root/mpctl/series"

(cd "$root" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
msg "wrote '$out' ($(du -h "$out" | cut -f1))"
