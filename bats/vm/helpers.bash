#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# helpers.bash - shared by the in-VM suites (load helpers); what the host
# suites share too (requires, mp_run, MP_PIDS, cgroup removal) is in
# ../lib/core.bash
#
# These suites run inside the test VM as root (kernel-patch/scripts/vm-init.sh
# runs them); on a host they skip.  The layout is the hybrid one: cgroup2 at
# /sys/fs/cgroup/unified, v1 hierarchies mounted by the tests that need them
# under /sys/fs/cgroup/<name> and unmounted in their teardown, because a
# controller bound to v1 is not available in v2.

MP_CG=/sys/fs/cgroup
MP_V2=$MP_CG/unified
MP_BIN=/mpctl/bin
MPCTL_BIN=${MPCTL_BIN:-$MP_BIN/mpctl}

# requires, mp_run, background processes (MP_PIDS, mp_stop_bg; teardown
# calls mp_kill_bg) and cgroup removal: the same as in the host suites
# shellcheck source=bats/lib/core.bash
. "${BASH_SOURCE[0]%/*}/../lib/core.bash"

# shellcheck disable=SC2034 # used by the suites
MP_IN_CG=$BATS_TEST_DIRNAME/in-cg.sh
PATH=$MP_BIN:$PATH

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
		rm_cgroup "$d"
	done
	for c in mempressure memory; do
		grep -qw "$c" "$MP_V2/cgroup.subtree_control" || continue
		echo "-$c" >"$MP_V2/cgroup.subtree_control" || true
	done
}

# the setup and teardown of the cgroup2 suites: memory and mempressure
# enabled for the root's children; background processes ended, the test
# cgroups removed and the controllers released
mp_v2_setup() {
	requires vm root mempressure memory "$@"
	mp_v2_enable memory
	mp_v2_enable mempressure
}
mp_v2_teardown() {
	mp_kill_bg
	mp_v2_release
}

# the teardown of the v1 suites: background processes ended, the v1
# mempressure and memory hierarchies emptied and unmounted
mp_v1_teardown() {
	mp_kill_bg
	mp_v1_umount mempressure
	mp_v1_umount memory
}

# mp_bg_registered OUT CMD...: run CMD in the background (in MP_PIDS),
# output to OUT; wait until it says "registered", fail on "error"
mp_bg_registered() {
	local out=$1
	shift
	"$@" >"$out" 2>&1 &
	MP_PIDS+=($!)
	mp_wait_line "$out" '^(registered|error)' 100 ||
		fail "'$*' did not register: $(cat "$out")"
	if grep -q '^error' "$out"; then
		fail "'$*': $(cat "$out")"
	fi
}

# mp_bg_app OUT MEMCG -- CMD...: CMD in the background in the memory
# cgroup MEMCG (mp_bg_registered), out of the OOM killer's reach: the app
# under test is not the OOM killer's to take, the hog is
mp_bg_app() {
	local out=$1 cg=$2
	shift 3
	mp_bg_registered "$out" "$MP_IN_CG" "$cg" -- "$@"
	echo -1000 >"/proc/${MP_PIDS[-1]}/oom_score_adj"
}

# mp_v2_parent NAME LIMIT HIGH CHILD...: the test cgroup t-NAME with
# memory.max LIMIT, memory.high HIGH (a size, 3/4 for three quarters of
# the limit as mempressure.rst advises, or max for none) and no swap, its
# children with memory and mempressure enabled; prints its directory
mp_v2_parent() {
	local d=$MP_V2/t-$1 high=$3 c
	mkdir -p "$d"
	echo "$2" >"$d/memory.max"
	[ "$high" != 3/4 ] || high=$(($(cat "$d/memory.max") / 4 * 3))
	echo "$high" >"$d/memory.high"
	[ ! -e "$d/memory.swap.max" ] || echo 0 >"$d/memory.swap.max"
	echo "+memory +mempressure" >"$d/cgroup.subtree_control"
	shift 3
	for c in "$@"; do
		mkdir -p "$d/$c"
	done
	echo "$d"
}

# mp_bg_mpvm OUT CGDIR ARGS...: mpvm ARGS in CGDIR in the background (in
# MP_PIDS), output to OUT, once it registered
mp_bg_mpvm() {
	local out=$1 cg=$2
	shift 2
	mp_bg_registered "$out" "$MP_IN_CG" "$cg" -- mpvm "$@"
}

# mp_oom_kills CGDIR: the OOM kills in CGDIR and below (memory.events)
mp_oom_kills() {
	sed -n 's/^oom_kill //p' "$1/memory.events"
}

# mp_ksft: after mp_run of a kselftest-style program: skip on KSFT_SKIP (4),
# else pass only on 0 without a "not ok" line
mp_ksft() {
	# shellcheck disable=SC2154 # set by run
	[ "$status" != 4 ] || skip "skipped by the program: ${lines[-1]:-}"
	assert_success
	refute_line --regexp '^not ok'
}

# gap_start: vcpu-gap (bats/vm/vcpu-gap.c) in the background (MP_PIDS),
# its line into $BATS_TEST_TMPDIR/gap; gap_stop: stop every background
# process and set gap to how late vcpu-gap's FIFO sleepers woke at worst
# (ns): how long the host took the guest's vCPUs, which a latency bound
# of a test adds to itself (plain TCG's guest clock follows the host's)
gap_start() {
	vcpu-gap 600 >"$BATS_TEST_TMPDIR/gap" &
	MP_PIDS+=($!)
}

gap_stop() {
	mp_stop_bg TERM
	gap=$(sed -n 's/^max_gap_ns=\([0-9]*\) .*/\1/p' "$BATS_TEST_TMPDIR/gap")
	[ -n "$gap" ] || fail "vcpu-gap measured nothing: $(cat "$BATS_TEST_TMPDIR/gap")"
}

# mark each test in the kernel log, so a splat on the console can be
# matched to the test that caused it
if [ -w /dev/kmsg ] && [ -n "${BATS_TEST_NAME:-}" ]; then
	echo "mpctl-test: ${BATS_TEST_FILENAME##*/}: ${BATS_TEST_DESCRIPTION:-$BATS_TEST_NAME}" \
		>/dev/kmsg 2>/dev/null || true
fi

# mp_debug_kernel: the kernel under test is the debug flavour (KASAN,
# lockdep: several times slower), so a workload that must reach its limit
# within a fixed time gets more of it
mp_debug_kernel() {
	zcat /proc/config.gz 2>/dev/null | grep -q '^CONFIG_KASAN=y'
}

# mp_field NAME TEXT...: the value after NAME= in mpvm's output ("alloc
# loops=L ms=T", "waits sleeps=S"), the first one
mp_field() {
	local n=$1
	shift
	printf "%s\n" "$@" | tr " " "\n" | sed -n "s/^$n=//p" | head -n1
}
