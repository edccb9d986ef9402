#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The kernel shrinker benchmark on cgroup v1 (boot group bench-v1).

load bench

setup() {
	bench_setup
	mp_v1_mount mempressure mempressure
	mp_v1_mount memory memory
}

teardown() {
	mp_v1_umount mempressure
	mp_v1_umount memory
}

@test "bench v1: kernel shrinker alone, no swap" {
	bench_stress v1 noswap --no-assist -b mempressure
}

@test "bench v1: kernel shrinker alone, zram swap" {
	requires swap
	bench_stress v1 swap --no-assist -b mempressure --swap
}

# memory.limit_in_bytes alone, no soft limit
@test "bench v1: kernel shrinker alone, limit only, no swap" {
	bench_stress v1 maxonly --no-assist -b mempressure --no-throttle
}
