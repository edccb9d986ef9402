#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The harness itself: the kernel booted with our config, the tools work and
# a memory cgroup under a small limit really produces pressure events.

load helpers

setup() {
	requires vm root
}

teardown() {
	mp_v1_umount memory
	rmdir "$MP_V2/basic" 2>/dev/null || true
}

@test "kernel booted with the test configuration" {
	mp_run uname -r
	assert_success
	grep -q 'console=ttyS0' /proc/cmdline
	for c in MEMCG PSI EVENTFD SWAP ZRAM PRINTK_TIME; do
		mp_kconfig "$c" || fail "CONFIG_$c is not =y"
	done
	[ "$(grep -c ^processor /proc/cpuinfo)" = 2 ]
}

@test "the mempressure controller is there when the series is applied" {
	[ "$(mp_series)" != none ] || skip "kernel built without a patch series"
	mp_kconfig CGROUP_MEMPRESSURE || fail "series applied but no CONFIG_CGROUP_MEMPRESSURE"
	mp_have_controller mempressure || fail "series applied but no mempressure in /proc/cgroups"
}

@test "tools in the VM run" {
	mp_run stress-ng --version
	assert_success
	mp_run jq -n '{a: 1} | .a'
	assert_success
	assert_output 1
	mp_run mpvm
	assert_failure 1
}

@test "zram swap is active" {
	requires swap
	grep -q '^/dev/zram0' /proc/swaps
}

@test "memcg v1 has memory.pressure_level and takes a limit" {
	requires memcg
	mp_v1_mount memory memory
	[ -e "$MP_CG/memory/memory.pressure_level" ]
	mkdir "$MP_CG/memory/basic"
	echo 16M >"$MP_CG/memory/basic/memory.limit_in_bytes"
	mp_run cat "$MP_CG/memory/basic/memory.limit_in_bytes"
	assert_output 16777216
}

@test "PSI memory pressure files exist (global and cgroup2)" {
	requires psi memcg
	mp_run cat /proc/pressure/memory
	assert_line --regexp '^some avg10=[0-9.]+ avg60=[0-9.]+ avg300=[0-9.]+ total=[0-9]+$'
	assert_line --regexp '^full avg10=[0-9.]+ avg60=[0-9.]+ avg300=[0-9.]+ total=[0-9]+$'
	mp_v2_enable memory
	mkdir "$MP_V2/basic"
	[ -r "$MP_V2/basic/memory.pressure" ]
	[ -r "$MP_V2/basic/memory.current" ]
}

@test "a memcg v1 under a 32M limit delivers a low pressure_level event" {
	requires memcg
	mp_v1_mount memory memory
	local cg=$MP_CG/memory/hog
	mkdir "$cg"
	echo 32M >"$cg/memory.limit_in_bytes"
	mp_run mpvm evctl "$cg" memory.pressure_level low -t 60000 -n 1 -- \
		"$MP_IN_CG" "$cg" -- stress-ng --vm 1 --vm-bytes 96M --vm-keep \
		--timeout 30s --quiet
	assert_success
	assert_line registered
	assert_line --regexp '^event [1-9]'
}
