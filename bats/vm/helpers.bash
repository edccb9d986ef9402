#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# helpers.bash - shared by the in-VM suites (load helpers)
#
# These suites run inside the test VM as root (kernel-patch/scripts/vm-init.sh
# runs them); on a host they skip.  The layout is the hybrid one: cgroup2 at
# /sys/fs/cgroup/unified, v1 hierarchies mounted by the tests that need them
# under /sys/fs/cgroup/<name> and unmounted in their teardown, because a
# controller bound to v1 is not available in v2.

load /usr/lib/bats/bats-support/load
load /usr/lib/bats/bats-assert/load

MP_CG=/sys/fs/cgroup
MP_V2=$MP_CG/unified
MP_BIN=/mpctl/bin
# shellcheck disable=SC2034 # used by the suites
MP_IN_CG=$BATS_TEST_DIRNAME/in-cg.sh
PATH=$MP_BIN:$PATH

# run with a trace on stderr that bats shows only for failing tests
# shellcheck disable=SC2154 # status and output are set by run
mp_run() {
	run "$@"
	echo "$* (status=$status)" >&2
	printf '%s\n' "$output" >&2
}

in_vm() {
	[ -f /mpctl/flavour ]
}

# requires WHAT...: skip the test with a reason unless every WHAT holds
requires() {
	local w
	for w in "$@"; do
		case $w in
		vm) in_vm || skip "not in the mpctl test VM" ;;
		root) [ "$(id -u)" = 0 ] || skip "needs root" ;;
		mempressure)
			mp_have_controller mempressure ||
				skip "no mempressure controller in /proc/cgroups" ;;
		memcg) mp_have_controller memory || skip "no memory controller" ;;
		psi) [ -r /proc/pressure/memory ] || skip "no PSI" ;;
		swap) [ "$(wc -l </proc/swaps)" -gt 1 ] || skip "no swap" ;;
		mpctl) [ -x $MP_BIN/mpctl ] || skip "no static mpctl in the VM" ;;
		prog:*) [ -x "$MP_BIN/${w#prog:}" ] ||
				skip "no ${w#prog:} in the VM" ;;
		*) fail "requires: unknown '$w'" ;;
		esac
	done
}

mp_have_controller() {
	awk -v c="$1" '$1 == c && $4 == 1 { f = 1 } END { exit !f }' /proc/cgroups
}

# the series the kernel was built with ("none" without patches)
mp_series() {
	cat /mpctl/series 2>/dev/null || echo none
}

mp_kconfig() {
	zcat /proc/config.gz | grep -qx "CONFIG_$1=y"
}

# mp_is_mounted DIR: busybox has no mountpoint(1)
mp_is_mounted() {
	awk -v d="$1" '$2 == d { f = 1 } END { exit !f }' /proc/mounts
}

# mp_v1_mount NAME OPTS: mount a v1 hierarchy at /sys/fs/cgroup/NAME
mp_v1_mount() {
	local dir=$MP_CG/$1
	mkdir -p "$dir"
	mp_is_mounted "$dir" && return 0
	# EBUSY while cgroup2 children that used the controller are dying
	for _ in $(seq 50); do
		mount -t cgroup -o "$2" none "$dir" 2>/dev/null && return 0
		echo 3 >/proc/sys/vm/drop_caches
		sleep 0.2
	done
	mount -t cgroup -o "$2" none "$dir"
}

# remove every child cgroup below DIR, deepest first, killing what is in them
mp_cg_rmtree() {
	local dir=$1 d p
	[ -d "$dir" ] || return 0
	find "$dir" -mindepth 1 -depth -type d | while read -r d; do
		# v1 memcg: uncharge what is left, so the cgroup really goes away
		[ ! -e "$d/memory.force_empty" ] ||
			echo 0 >"$d/memory.force_empty" 2>/dev/null || true
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			while read -r p; do
				kill -9 "$p" 2>/dev/null || true
			done <"$d/cgroup.procs"
			rmdir "$d" 2>/dev/null && break
			sleep 0.2
		done
	done
}

# mp_v1_umount NAME: empty and unmount a v1 hierarchy, then wait until its
# controllers are back in cgroup2's root
mp_v1_umount() {
	local dir=$MP_CG/$1
	mp_is_mounted "$dir" || return 0
	mp_cg_rmtree "$dir"
	umount "$dir"
	rmdir "$dir" 2>/dev/null || true
}

# mp_v2_enable CONTROLLER: make it usable by children of the cgroup2 root;
# a controller just released from v1 takes a moment to come back
mp_v2_enable() {
	for _ in $(seq 50); do
		if grep -qw "$1" $MP_V2/cgroup.controllers; then
			echo "+$1" >$MP_V2/cgroup.subtree_control && return 0
		fi
		sleep 0.1
	done
	echo "controller '$1' not available in cgroup2 (still bound to v1?)" >&2
	return 1
}

# mp_wait_file FILE [TENTHS]: wait for FILE to exist
mp_wait_file() {
	for _ in $(seq "${2:-100}"); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# mp_wait_line FILE REGEX [TENTHS]: wait for a line in FILE
mp_wait_line() {
	for _ in $(seq "${3:-100}"); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# memory hog for a memcg of a given limit: fill anonymous memory past it
mp_hog() {
	local bytes=$1 secs=${2:-10}
	stress-ng --vm 1 --vm-bytes "$bytes" --vm-keep --vm-method all \
		--timeout "${secs}s" --quiet
}

# mp_wait_content FILE WANT [TENTHS]: wait until FILE reads exactly WANT
# (removals of registrations happen in a work item, shortly after the close)
mp_wait_content() {
	for _ in $(seq "${3:-50}"); do
		[ "$(cat "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	echo "'$1' reads '$(cat "$1")', not '$2'" >&2
	return 1
}

# mp_v2_release: remove the cgroup2 test cgroups (t-*) and disable the
# controllers the tests enabled, so that v1 suites can bind them later
mp_v2_release() {
	local d c
	for d in "$MP_V2"/t-*; do
		[ -d "$d" ] || continue
		mp_cg_rmtree "$d"
		for _ in $(seq 20); do
			rmdir "$d" 2>/dev/null && break
			sleep 0.1
		done
	done
	for c in mempressure memory; do
		grep -qw "$c" "$MP_V2/cgroup.subtree_control" || continue
		echo "-$c" >"$MP_V2/cgroup.subtree_control" || true
	done
}

# mp_ksft: after mp_run of a kselftest-style program: skip on KSFT_SKIP (4),
# else pass only on 0 without a "not ok" line
mp_ksft() {
	# shellcheck disable=SC2154 # set by run
	[ "$status" != 4 ] || skip "skipped by the program: ${lines[-1]:-}"
	assert_success
	refute_line --regexp '^not ok'
}

# mark each test in the kernel log, so a splat on the console can be
# matched to the test that caused it
if [ -w /dev/kmsg ] && [ -n "${BATS_TEST_NAME:-}" ]; then
	echo "mpctl-test: ${BATS_TEST_FILENAME##*/}: ${BATS_TEST_DESCRIPTION:-$BATS_TEST_NAME}" \
		>/dev/kmsg 2>/dev/null || true
fi
