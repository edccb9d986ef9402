#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The harness itself: the kernel booted with our config, the tools work,
# PSI is there (70-v1-memcg.bats proves the pressure workload).

load helpers

setup() {
	requires vm root
}

teardown() {
	mp_v2_release
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

@test "PSI memory pressure files exist (global and cgroup2)" {
	requires psi memory
	mp_run cat /proc/pressure/memory
	assert_line --regexp '^some avg10=[0-9.]+ avg60=[0-9.]+ avg300=[0-9.]+ total=[0-9]+$'
	assert_line --regexp '^full avg10=[0-9.]+ avg60=[0-9.]+ avg300=[0-9.]+ total=[0-9]+$'
	mp_v2_enable memory
	mkdir "$MP_V2/t-basic"
	[ -r "$MP_V2/t-basic/memory.pressure" ]
	[ -r "$MP_V2/t-basic/memory.current" ]
}
