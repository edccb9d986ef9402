#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The emulated shrinker where most users meet it (boot group bench-v2pure):
# cgroup2 alone on /sys/fs/cgroup, the kernel booted with
# cgroup_disable=mempressure (stock for memcg's paths), PSI, memory.events
# and memory.current against the effective limit.

load bench

setup() {
	bench_setup psi
	! mp_have_controller mempressure || skip "not a stock kernel"
	[ ! -d /sys/fs/cgroup/unified ] || skip "not the pure cgroup2 layout"
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control
}

@test "bench v2pure: emulated shrinker, stock kernel, no swap" {
	bench_stress v2pure emulated
}

teardown() {
	bench_teardown
}

# bench-v2's ordinary program (three threads populate 1M chunks with THP
# on, answers by munmap()) on the stock kernel, asked by the emulated
# shrinker instead of the kernel: the same run without the series
@test "bench v2pure: ordinary program, munmap() answers, THP, emulated shrinker, stock kernel, no swap" {
	bench_thp_always
	bench_stress v2pure munmap --free munmap --threads 3
}
