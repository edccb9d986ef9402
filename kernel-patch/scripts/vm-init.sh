#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-init.sh - /init of the mpctl test VM
#
# Mounts the pseudo filesystems, sets up zram swap, runs the bats suites of
# /mpctl/bats/vm and writes their TAP, between the lines MPCTL-TAP-BEGIN and
# "MPCTL-TAP-END rc=N", to the second serial port (/dev/ttyS1), so kernel
# messages on the console cannot interleave with it.  Then it reboots, which
# with reboot=t and qemu -no-reboot ends qemu.
#
# Kernel command line parameters it reads:
#   mpctl.probe=1     print MPCTL-PROBE-OK and stop (KVM probe)
#   mpctl.filter=RE   run only the tests whose name matches RE (no spaces)
#   mpctl.zram=0      no zram swap
#   mpctl.timeout=S   per-test timeout (default 300)
#   mpctl.host_suites=0  leave out the host suites replayed in the VM
#                     (*-host-suites.bats): they test mpctl on a layout,
#                     not the kernel, so make check runs them on one
#                     kernel only
#   mpctl.boot=GROUP  which suites: v2 (default) those of /mpctl/bats/vm
#                     without "-v1-" or "-v2pure-" in their name (but not
#                     their tests tagged "det"), v2det only those tests
#                     (run-vm.sh boots it deterministic), v1 those
#                     with "-v1-", v2pure those with "-v2pure-" (cgroup2
#                     alone on /sys/fs/cgroup; run-vm.sh boots it with
#                     cgroup_disable=mempressure), all
#                     every one, repro those of /mpctl/bats/vm-repro,
#                     bench-v2 and bench-v1 the benchmarks of
#                     /mpctl/bats/vm-bench for that layout, scale
#                     its *-scale.bats (hybrid layout; by hand)
set -euo pipefail

export PATH=/mpctl/bin:/usr/bin
export HOME=/root TERM=dumb LANG=C

stop() {
	trap - EXIT
	sync
	sleep 1
	reboot -f
	sleep 60
}
trap stop EXIT

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null || true
ln -sfn /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mkdir -p /dev/shm /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=755 tmpfs /run
exec </dev/console >/dev/console 2>&1

arg() {
	local w words
	read -r -a words </proc/cmdline
	for w in "${words[@]}"; do
		case $w in
		"mpctl.$1="*) echo "${w#*=}"; return 0 ;;
		esac
	done
	echo "${2:-}"
}

boot_s=$(cut -d' ' -f1 /proc/uptime)
echo "MPCTL-INIT uptime=${boot_s}s kernel=$(uname -r) flavour=$(cat /mpctl/flavour)"

if [ "$(arg probe 0)" = 1 ]; then
	echo MPCTL-PROBE-OK
	exit 0
fi

group=$(arg boot v2)
if [ "$group" = v2pure ] || [ "$group" = bench-v2pure ]; then
	# what systemd mounts: cgroup2 alone on /sys/fs/cgroup
	mount -t cgroup2 none /sys/fs/cgroup
else
	# hybrid cgroup layout: v1 hierarchies are mounted by the suites
	# that need them under /sys/fs/cgroup/<name>, cgroup2 is
	# /sys/fs/cgroup/unified
	mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup
	mkdir -p /sys/fs/cgroup/unified
	mount -t cgroup2 none /sys/fs/cgroup/unified
fi
if [ -d /sys/kernel/debug ]; then
	mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
fi

if [ "$(arg zram 1)" = 1 ] && [ -e /sys/block/zram0 ]; then
	if echo 256M >/sys/block/zram0/disksize &&
	   mkswap /dev/zram0 >/dev/null && swapon /dev/zram0; then
		echo "MPCTL-INIT zram swap: $(grep zram0 /proc/swaps | tr -s ' \t' ' ')"
	else
		echo "MPCTL-INIT zram swap setup failed, running without swap"
	fi
fi

tap=/dev/ttyS1
[ -c "$tap" ] || tap=/dev/console
export BATS_TEST_TIMEOUT
BATS_TEST_TIMEOUT=$(arg timeout 300)
filter=$(arg filter "")
# per-test times in the TAP ("ok N name in Tms"): what each test costs
bats_args=(--tap --timing)
[ -n "$filter" ] && bats_args+=(--filter "$filter")

# the memory controller stays on one hierarchy for the whole boot: kmem
# charged on cgroup2 and freed after it moved to v1 underflows a counter
suites=()
# tests tagged "det" measure time side by side: they run in the v2det
# boot, which run-vm.sh boots in the deterministic mode (guest time counts
# instructions, whatever the host's load), and in no other group
case $group in
v2 | v2det)
    for f in /mpctl/bats/vm/*.bats; do
	case ${f##*/} in *-v1-* | *-v2pure-*) ;; *) suites+=("$f") ;; esac
    done
    if [ "$group" = v2det ]; then
	bats_args+=(--filter-tags det)
    else
	bats_args+=(--filter-tags '!det')
    fi ;;
v1) suites=(/mpctl/bats/vm/*-v1-*.bats) ;;
v2pure) suites=(/mpctl/bats/vm/*-v2pure-*.bats) ;;
all) suites=(/mpctl/bats/vm) ;;
repro) suites=(/mpctl/bats/vm-repro) ;;
bench-v2) suites=(/mpctl/bats/vm-bench/*-v2-*.bats) ;;
bench-v1) suites=(/mpctl/bats/vm-bench/*-v1-*.bats) ;;
bench-v2pure) suites=(/mpctl/bats/vm-bench/*-v2pure-*.bats) ;;
scale) suites=(/mpctl/bats/vm-bench/*-scale.bats) ;;
trace) suites=(/mpctl/bats/vm-bench/*-trace.bats) ;;
*) echo "MPCTL-INIT unknown mpctl.boot=$group"; exit 1 ;;
esac
# (the groups that name their files; "all" and "repro" name directories)
if [ "$(arg host_suites 1)" = 0 ]; then
	kept=()
	for f in "${suites[@]}"; do
		case $f in *-host-suites.bats) ;; *) kept+=("$f") ;; esac
	done
	if [ ${#kept[@]} -lt ${#suites[@]} ]; then
		echo "MPCTL-INIT host suites left out (mpctl.host_suites=0)"
	fi
	suites=("${kept[@]}")
fi
echo "MPCTL-INIT boot group $group: ${suites[*]##*/}"

t0=$(cut -d' ' -f1 /proc/uptime)
rc=0
{
	echo MPCTL-TAP-BEGIN
	(cd /tmp && bats "${bats_args[@]}" "${suites[@]}") || rc=$?
	echo "MPCTL-TAP-END rc=$rc"
} >"$tap"
t1=$(cut -d' ' -f1 /proc/uptime)

if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak || true
	sleep 6
	echo scan >/sys/kernel/debug/kmemleak || true
	cat /sys/kernel/debug/kmemleak || true
fi

echo "MPCTL-TIMING boot_s=$boot_s suite_start_s=$t0 suite_end_s=$t1 rc=$rc"
