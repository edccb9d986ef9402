#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# mpctl against the patched kernel on cgroup v2: listen, register/add and
# stress with the mempressure backend (registration through the files).

# MP_PIDS (helpers) is filled in each test, in the same subshell
# shellcheck disable=SC2030,SC2031
load helpers

setup() {
	mp_v2_setup mpctl
}

teardown() {
	mp_v2_teardown
}

cg() {
	local d=$MP_V2/t-$1
	mkdir -p "$d"
	echo "$2" >"$d/memory.max"
	[ ! -e "$d/memory.swap.max" ] || echo 0 >"$d/memory.swap.max"
	echo "$d"
}

@test "v2 mpctl: listen -b mempressure hears low events, text and JSON" {
	local d
	d=$(cg mpl 32M)
	mpctl listen -b mempressure -c "$d" -l low -n 2 -t 120s -v \
		>"$BATS_TEST_TMPDIR/text" 2>"$BATS_TEST_TMPDIR/text.err" &
	MP_PIDS+=($!)
	mpctl listen -b mempressure -c t-mpl -n 1 -t 120s -j -v \
		>"$BATS_TEST_TMPDIR/json" 2>"$BATS_TEST_TMPDIR/json.err" &
	MP_PIDS+=($!)
	mp_wait_line "$BATS_TEST_TMPDIR/text.err" listening 100
	mp_wait_line "$BATS_TEST_TMPDIR/json.err" listening 100
	grep -q 'file=/sys/fs/cgroup/unified/t-mpl/mempressure.level' \
		"$BATS_TEST_TMPDIR/text.err"
	"$MP_IN_CG" "$d" -- stress-ng --vm 1 --vm-bytes 96M --vm-keep \
		--timeout 15s --quiet || true
	mp_wait_line "$BATS_TEST_TMPDIR/json" '"event"' 300 ||
		fail "no JSON event: $(cat "$BATS_TEST_TMPDIR/json.err")"
	mp_run jq -e '.schema.name == "mpctl-listen" and
		.event.backend == "mempressure" and .event.cgroup == "/t-mpl" and
		(.event.level | IN("low", "medium", "critical")) and
		(.event.level_native | IN("low", "medium", "oom")) and
		.event.events >= 1' "$BATS_TEST_TMPDIR/json"
	assert_success
	mp_wait_line "$BATS_TEST_TMPDIR/text" 'backend=mempressure cgroup=/t-mpl level=(low|medium|oom) events=[1-9]' 300 ||
		fail "no text event: $(cat "$BATS_TEST_TMPDIR/text")"
}

@test "v2 mpctl: register/add serve the kernel's shrinker requests" {
	local d
	d=$(cg mpr 48M)
	mp_run mpctl register --chunk 1M --cgroup "$d" --join -v -- sh -c '
		mpctl add 64 || exit 10
		stress-ng --vm 1 --vm-bytes 96M --vm-keep --timeout 20s --quiet &
		n=$(mpctl add --wait --timeout 60s) || exit 11
		kill $! 2>/dev/null; wait
		echo "asked $n"'
	assert_success
	assert_line --partial "registered: mode=kernel-v2 backend=mempressure"
	assert_line --regexp '^asked [1-9][0-9]*$'
	# never more than registered
	n=$(echo "$output" | sed -n 's/^asked //p')
	[ "$n" -le 64 ]
}

# bats test_tags=det
@test "v2 mpctl: stress with the kernel shrinker, 0 OOM kills (done-when)" {
	mp_run mpctl stress --chunk 1M --threads 4 --duration 20s --limit 256M \
		-b mempressure --json
	assert_success
	echo "$output" | jq -e '.schema.name == "mpctl-stress" and
		.oom_kills == 0 and .chunks_freed > 0 and
		.peak_usage_bytes <= .limit_bytes and .limit_bytes == 268435456' >&2 ||
		fail "stress document: $output"
}

@test "v2 mpctl: stress counts swap used while the run went, not after" {
	local d out=$BATS_TEST_TMPDIR/sw.json sw=0
	requires swap
	d=$(cg msw 32M)
	[ ! -e "$d/memory.swap.max" ] || echo max >"$d/memory.swap.max"
	# an uncooperative hog of 64M in 32M: at least 32M go to swap, and
	# the hog is stopped before the run's last sample (the old reading,
	# taken after the end, saw none of it). 16M of swap is enough to
	# tell, and swapping 48M to zram took about 90 s in the VM
	mpctl stress --cgroup "$d" --overcommit 0.25 --duration 10m --json \
		--hog '--vm 1 --vm-bytes 64M --vm-keep' >"$out" \
		2>"$BATS_TEST_TMPDIR/sw.err" &
	MP_PIDS+=($!)
	for _ in $(seq 3000); do
		sw=$(cat "$d/memory.swap.current")
		[ "$sw" -lt $((16 << 20)) ] || break
		sleep 0.1
	done
	[ "$sw" -ge $((16 << 20)) ] ||
		fail "the hog never swapped 16M: $sw; $(cat "$BATS_TEST_TMPDIR/sw.err")"
	# samples are taken every 100 ms
	sleep 2
	kill -INT "${MP_PIDS[-1]}"
	wait "${MP_PIDS[-1]}" ||
		fail "stress failed: $(cat "$BATS_TEST_TMPDIR/sw.err")"
	jq -e '.exit_reason == "interrupted"' "$out"
	jq -e '.swap_growth_bytes >= 16777216' "$out" ||
		fail "swap growth $(jq .swap_growth_bytes "$out"), the hog had $sw"
}

@test "v2 mpctl: stress --strategy reclaim-agent writes memory.reclaim, not OOM-killed" {
	requires mpctl swap
	# the cache wants twice the limit and never gives back itself; the
	# agent asks memory.reclaim for what is above 85 % of the limit, and
	# reclaim can only take anonymous chunks to swap (the zram device)
	mp_run mpctl stress --strategy reclaim-agent --swap --limit 128M \
		--duration 5s --json
	assert_success
	echo "$output" | jq -e '.strategy == "reclaim-agent" and
		.oom_kills == 0 and .cache.memory_reclaim_writes > 0 and
		.cache.memory_reclaim_bytes > 0 and .cache.reads > 0' >&2 ||
		fail "stress document: $output"
}
