#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The test programs of kernel-patch/tests/ (see kernel-patch/README.md) on
# cgroup v2: mp_abi (ABI checks, TAP) and mp_load (level events and shrinker
# requests under real pressure).

load helpers

setup() {
	requires vm root
}

teardown() {
	mp_v2_release
}

@test "mp_abi v2" {
	requires prog:mp_abi mempressure memory
	mp_v2_enable memory
	mp_v2_enable mempressure
	mp_run mp_abi v2 "$MP_V2"
	mp_ksft
}

@test "mp_load v2: a program holding 24M under memory.max 32M (high 28M) frees what a 16M hog needs" {
	requires prog:mp_load mempressure memory
	mp_v2_enable memory
	mp_v2_enable mempressure
	local d=$MP_V2/t-load
	mkdir "$d"
	echo 32M >"$d/memory.max"
	# over memory.high the kernel asks the program first
	echo 28M >"$d/memory.high"
	[ ! -e "$d/memory.swap.max" ] || echo 0 >"$d/memory.swap.max"
	mp_run mp_load v2 "$d" - 24 16 60
	mp_ksft
}
