#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The kernel shrinker benchmark on cgroup v2 (boot group bench-v2).

load bench

setup() {
	bench_setup
	mp_v2_enable memory
	mp_v2_enable mempressure
}

teardown() {
	bench_teardown
}

@test "bench v2: kernel shrinker alone, no swap" {
	bench_stress v2 noswap --no-assist -b mempressure
}

@test "bench v2: kernel shrinker alone, zram swap" {
	requires swap
	bench_stress v2 swap --no-assist -b mempressure --swap
}

# memory.max alone, no memory.high (docker --memory, MemoryMax=)
@test "bench v2: kernel shrinker alone, memory.max only, no swap" {
	bench_stress v2 maxonly --no-assist -b mempressure --no-throttle
}

# the same with the fallback that needs no answer: every chunk MADV_FREE
# once written, so reclaim at memory.max drops what the program is slow
# to give back (lazyfree folios go without swap)
@test "bench v2: kernel shrinker alone, memory.max only, no swap, lazyfree fallback" {
	bench_stress v2 maxonly-lazy --no-assist -b mempressure --no-throttle --lazyfree
}

@test "bench v2: kernel shrinker alone, memory.max only, zram swap" {
	requires swap
	bench_stress v2 maxonly-swap --no-assist -b mempressure --no-throttle --swap
}

# a program written the ordinary way: three threads map 1M chunks and
# populate each, the kernel's requests are answered with munmap(); THP on
@test "bench v2: ordinary program, munmap() answers, THP, no swap" {
	bench_thp_always
	bench_stress --gap v2 munmap --no-assist -b mempressure --free munmap --threads 3
}

@test "bench v2: ordinary program, munmap() answers, THP, zram swap" {
	requires swap
	bench_thp_always
	bench_stress --gap v2 munmap-swap --no-assist -b mempressure --free munmap \
		--threads 3 --swap
}
