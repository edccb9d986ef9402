#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# memcg v1 on the test kernel, independent of the series: the workload the
# mempressure suites rely on really makes pressure.  Last, as a memory
# controller once bound to v1 may not come back to cgroup2 in this boot.

load helpers

setup() {
	requires vm root memory
}

teardown() {
	mp_v1_umount memory
}

@test "memcg v1 has memory.pressure_level and takes a limit" {
	mp_v1_mount memory memory
	[ -e "$MP_CG/memory/memory.pressure_level" ]
	mkdir "$MP_CG/memory/basic"
	echo 16M >"$MP_CG/memory/basic/memory.limit_in_bytes"
	mp_run cat "$MP_CG/memory/basic/memory.limit_in_bytes"
	assert_output 16777216
}

@test "a memcg v1 under a 32M limit delivers a low pressure_level event" {
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
