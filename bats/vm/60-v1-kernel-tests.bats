#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The test programs of kernel-patch/tests/ (see kernel-patch/README.md) on
# cgroup v1: mempressure on its own mount, pressure from a v1 memcg.

load helpers

MP=$MP_CG/mempressure
MEM=$MP_CG/memory

setup() {
	requires vm root
}

teardown() {
	mp_v1_umount mempressure
	mp_v1_umount memory
}

@test "mp_abi v1" {
	requires prog:mp_abi mempressure
	mp_v1_mount mempressure mempressure
	mp_run mp_abi v1 "$MP"
	mp_ksft
}

@test "mp_load v1: a program holding 24M in a 32M memcg frees what a 16M hog needs" {
	requires prog:mp_load mempressure memory
	mp_v1_mount mempressure mempressure
	mp_v1_mount memory memory
	mkdir "$MP/kt" "$MEM/kt"
	echo 0 >"$MEM/kt/memory.swappiness"
	echo 32M >"$MEM/kt/memory.limit_in_bytes"
	# the chunks offered: nothing waits for the program, and a 16M hog
	# can outrun its answers to the limit (2026-12-07, not offered: the
	# hog OOM-killed on 6.12, not on 6.1), where reclaim takes what it
	# offered instead
	mp_run mp_load v1 "$MP/kt" "$MEM/kt" 24 16 60 offer
	mp_ksft
}

@test "seed_client: a program written from the RFC's documentation alone" {
	requires prog:seed_client mempressure memory
	mp_v1_mount mempressure mempressure
	mp_v1_mount memory memory
	mkdir "$MP/seed" "$MEM/seed"
	# swap allowed (zram): the client keeps up to 128M in 1M chunks
	echo 32M >"$MEM/seed/memory.limit_in_bytes"
	mp_run "$MP_IN_CG" "$MEM/seed" "$MP/seed" -- seed_client "$MP/seed" 10
	assert_success
	assert_line registered
	assert_line --regexp '^requests=[1-9][0-9]* chunks=[1-9][0-9]* .* over=0 '
}
