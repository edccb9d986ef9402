#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# A fallback that needs no answer, on cgroup v2: a program that marks its
# registered chunks MADV_FREE lets reclaim take them by itself when it
# cannot answer (lazyfree pages sit on the file LRU and are dropped
# without swap). The kernel's requests stay, as advice. Each test fails
# when the co-tenant was OOM-killed or nothing was dropped, and the
# control fails when the same program without MADV_FREE was not in the
# way: it must end in an OOM kill, or the first test proves nothing.
#
# The limit is memory.max alone on a parent, no memory.high and no swap.
# The kernel never waits for a program's answer, so a stopped program's
# chunks are either taken by reclaim (offered) or in the way (not).

# MP_PIDS (helpers) is filled in each test, in the same subshell
# shellcheck disable=SC2030,SC2031
load helpers

setup() {
	mp_v2_setup
}

teardown() {
	mp_v2_teardown
}

# memstat CGDIR KEY: a memory.stat counter, empty if the kernel has none
memstat() {
	awk -v k="$2" '$1 == k { print $2 }' "$1/memory.stat"
}

# stopped_holder D OUT MPVM-FLAGS...: in D/app, a program registers and
# holds 40 chunks of 1M (40M of the 64M limit) and is stopped (it cannot
# answer); a co-tenant in the same cgroup then keeps 36M for 10 s, more
# than is left; the program is continued and ended, its summary in OUT
stopped_holder() {
	local d=$1 out=$2 pid
	shift 2
	mp_bg_mpvm "$out" "$d/app" v2-shrinker "$d/app" 1048576 40 -a "$@" \
		-t 120000 -k
	pid=${MP_PIDS[-1]}
	kill -STOP "$pid"
	# stress-ng exits 0 even when its worker was OOM-killed and
	# restarted: memory.events is what tells
	"$MP_IN_CG" "$d/app" -- stress-ng --vm 1 --vm-bytes 36M --vm-keep \
		--timeout 10s --quiet || true
	# a stopped program takes SIGTERM only once continued
	kill -CONT "$pid" 2>/dev/null || true
	mp_stop_bg
}

@test "v2 lazyfree: a stopped program's MADV_FREE chunks are taken by reclaim, no OOM kill" {
	requires stress-ng
	local d out=$BATS_TEST_TMPDIR/holder lost freed
	d=$(mp_v2_parent lazy 64M max app)
	stopped_holder "$d" "$out" -f
	cat "$out" >&2
	[ "$(mp_oom_kills "$d")" = 0 ] || fail "OOM kills: $(mp_oom_kills "$d")"
	# the program's own count: chunks whose first word reads zero. 76M
	# and the programs' own memory do not fit in 64M: at least 12 of the
	# 40 chunks had to go, 8 whole ones leave room for chunks reclaim
	# took only in part
	grep -q '^lost=' "$out" || fail "no lost= line: $(cat "$out")"
	lost=$(sed -n 's/^lost=\([0-9]*\) checked=.*/\1/p' "$out")
	[ "$lost" -ge 8 ] || fail "only $lost of 40 chunks were dropped"
	grep -q '^lost=[0-9]* checked=40$' "$out" ||
		fail "not every chunk was checked: $(grep '^lost=' "$out")"
	# and the kernel's: lazyfree pages freed under the parent (4K pages,
	# 8M at least), where the kernel counts them (since 4.12)
	freed=$(memstat "$d" pglazyfreed)
	[ -z "$freed" ] || [ "$freed" -ge 2048 ] ||
		fail "memory.stat: pglazyfreed $freed (fewer than 8M)"
}

@test "v2 lazyfree, control: the same stopped program without MADV_FREE is in the way, an OOM kill" {
	requires stress-ng
	local d out=$BATS_TEST_TMPDIR/holder
	d=$(mp_v2_parent eager 64M max app)
	stopped_holder "$d" "$out"
	cat "$out" >&2
	[ "$(mp_oom_kills "$d")" -ge 1 ] ||
		fail "no OOM kill: the co-tenant fit beside 40M it could not reclaim?"
	! grep -q '^lost=' "$out" || fail "lost= without -f: $(cat "$out")"
}

@test "v2 lazyfree: mpctl stress --no-assist --lazyfree, the kernel alone, 0 OOM kills" {
	requires mpctl jq
	mp_run mpctl stress --no-assist -b mempressure --lazyfree --chunk 1M \
		--threads 4 --overcommit 2 --duration 6s --limit 128M --json
	assert_success
	echo "$output" | jq -e '.exit_reason == "duration" and .oom_kills == 0 and
		.parameters.lazyfree == true and .emulator == null and
		(.chunks_lost | type) == "number" and
		.chunks_lost <= .chunks_allocated and
		.peak_usage_bytes <= .limit_bytes' >&2 ||
		fail "stress document: $output"
	echo "chunks lost: $(echo "$output" | jq .chunks_lost) of $(echo "$output" | jq .chunks_allocated) allocated" >&2
}

@test "v2 lazyfree: mempressure_test --lazyfree --no-assist, the kernel alone, 0 OOM kills" {
	requires prog:mempressure_test
	local d
	d=$(mp_v2_parent mpt 128M 3/4 app)
	mp_run "$MP_IN_CG" "$d/app" -- mempressure_test --backend mempressure \
		--no-assist --lazyfree --threads 2 --max-chunks 256 --duration 5s
	assert_success
	assert_line --regexp '^TOTAL: allocated [1-9][0-9]* chunks'
	assert_line --regexp '^lost [0-9]+ chunks \(MADV_FREE, dropped by reclaim\)$'
	[ "$(mp_oom_kills "$d")" = 0 ] || fail "OOM kills: $(mp_oom_kills "$d")"
}
