#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The kernel alone keeps a cooperating program alive on cgroup v1, where
# the mempressure and memory controllers sit on separate hierarchies: the
# shrinker is asked for the memory cgroup its chunks are charged to.

load helpers

MP=$MP_CG/mempressure
MEM=$MP_CG/memory

setup() {
	requires vm root mempressure memory
	mp_v1_mount mempressure mempressure
	mp_v1_mount memory memory
}

teardown() {
	rmdir "$MEM/kp/app" "$MEM/kp" "$MP/kp" 2>/dev/null || true
	mp_v1_teardown
}

@test "v1 kernel alone: mpctl stress --no-assist, 4 threads, twice a 128M limit: asked, memory back" {
	requires mpctl
	# On v1 the soft limit stands in for memory.high; four threads that
	# populate 1 MiB per system call can still outrun it to the hard
	# limit on this TCG guest (the benchmark, bench-kernel-shrinker.sh,
	# records how often), so this asserts what must hold at any speed:
	# the kernel asked, the engine gave memory back, the run was not cut
	# short before the first request.
	# stdout alone: an engine that was killed adds a line on stderr
	mp_run --separate-stderr mpctl stress --no-assist -b mempressure \
		--chunk 1M --threads 4 --overcommit 2 --duration 10s \
		--limit 128M --json
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
	echo "$output" | jq -e '(.exit_reason == "duration" or .exit_reason == "engine_killed") and
		.emulator == null and .early_warning == false and
		.memory_high_bytes > 0 and .memory_high_bytes < .limit_bytes and
		.reclaim_requests > 0 and .chunks_freed > 0' >&2 ||
		fail "stress document: $output"
}

@test "v1 kernel alone: the limit on a parent memcg, a program in a child is asked and survives" {
	mkdir -p "$MEM/kp/app" "$MP/kp"
	echo 48M >"$MEM/kp/memory.limit_in_bytes"
	# v1 has no memory.high: the soft limit takes its part (mempressure(7))
	echo 36M >"$MEM/kp/memory.soft_limit_in_bytes"
	echo 0 >"$MEM/kp/memory.swappiness"
	echo 0 >"$MEM/kp/app/memory.swappiness"
	mp_run "$MP_IN_CG" "$MEM/kp/app" "$MP/kp" -- mpvm v1-shrinker "$MP/kp" \
		1048576 40 -a -t 30000 -- stress-ng --vm 1 --vm-bytes 24M --vm-keep \
		--timeout 10s --quiet
	assert_success
	assert_line --regexp '^request [1-9]'
	refute_line --regexp '^over'
	[ "$(sed -n 's/^oom_kill //p' "$MEM/kp/memory.oom_control")" = 0 ] ||
		fail "OOM kills: $(cat "$MEM/kp/memory.oom_control")"
}

@test "v1 races: closing, forking, concurrent counts and rmdir under reclaim" {
	requires prog:mp_race
	mkdir -p "$MEM/kp" "$MP/kp"
	echo 32M >"$MEM/kp/memory.limit_in_bytes"
	echo 0 >"$MEM/kp/memory.swappiness"
	mp_run mp_race v1 "$MP/kp" "$MEM/kp" 20
	assert_success
	assert_output --regexp '^rounds [1-9][0-9]* writes [1-9][0-9]* requests [0-9]+ unexpected errors 0$'
	[ ! -d "$MP/kp" ] || fail "mp_race did not remove '$MP/kp'"
}
