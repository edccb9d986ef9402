#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The test programs of kernel-patch/tests/ (see kernel-patch/README.md),
# built static into the VM: mp_abi (ABI checks, TAP) and mp_load (level
# events and shrinker requests under real pressure).

load helpers

MP=$MP_CG/mempressure
MEM=$MP_CG/memory

setup() {
	requires vm root
}

teardown() {
	mp_v1_umount mempressure
	mp_v1_umount memory
	local d
	for d in "$MP_V2"/kt-*; do
		[ -d "$d" ] || continue
		mp_cg_rmtree "$d"
		rmdir "$d" 2>/dev/null || true
	done
}

# ksft STATUS: skip on KSFT_SKIP, else succeed only on 0
ksft() {
	[ "$status" != 4 ] || skip "skipped by the program: ${lines[-1]:-}"
	assert_success
	refute_line --regexp '^not ok'
}

v2_setup() {
	mp_v1_umount mempressure
	mp_v1_umount memory
	mp_v2_enable memory
	mp_v2_enable mempressure
}

@test "mp_abi v1" {
	requires prog:mp_abi mempressure
	mp_v1_mount mempressure mempressure
	mp_run mp_abi v1 "$MP"
	ksft
}

@test "mp_abi v2" {
	requires prog:mp_abi mempressure memcg
	v2_setup
	mp_run mp_abi v2 "$MP_V2"
	ksft
}

@test "mp_load v1: a 32M memcg and a mempressure cgroup" {
	requires prog:mp_load mempressure memcg
	mp_v1_mount mempressure mempressure
	mp_v1_mount memory memory
	mkdir "$MP/kt" "$MEM/kt"
	echo 0 >"$MEM/kt/memory.swappiness"
	echo 32M >"$MEM/kt/memory.limit_in_bytes"
	mp_run mp_load v1 "$MP/kt" "$MEM/kt" 64 60
	ksft
}

@test "mp_load v2: memory.max 32M" {
	requires prog:mp_load mempressure memcg
	v2_setup
	local d=$MP_V2/kt-load
	mkdir "$d"
	echo 32M >"$d/memory.max"
	[ ! -e "$d/memory.swap.max" ] || echo 0 >"$d/memory.swap.max"
	mp_run mp_load v2 "$d" - 64 60
	ksft
}
