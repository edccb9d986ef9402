#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# mpctl against the patched kernel on cgroup v1: listen and register/add
# with the mempressure backend through cgroup.event_control. Pressure comes
# from a v1 memcg of the same name (the controllers cannot share a mount).

# MP_PIDS (helpers) is filled in each test, in the same subshell
# shellcheck disable=SC2030,SC2031
load helpers

MP=$MP_CG/mempressure
MEM=$MP_CG/memory

setup() {
	requires vm root mempressure mpctl
	mp_v1_mount mempressure mempressure
	mp_v1_mount memory memory
}

teardown() {
	mp_v1_teardown
}

pair() {
	mkdir -p "$MEM/$1" "$MP/$1"
	echo 0 >"$MEM/$1/memory.swappiness"
	echo "$2" >"$MEM/$1/memory.limit_in_bytes"
}

@test "v1 mpctl: listen -b mempressure hears oom as critical, in JSON" {
	pair mpl 32M
	mpctl listen -b mempressure -c mpl -l medium -n 1 -t 120s -j -v \
		>"$BATS_TEST_TMPDIR/json" 2>"$BATS_TEST_TMPDIR/err" &
	MP_PIDS+=($!)
	mp_wait_line "$BATS_TEST_TMPDIR/err" listening 100
	grep -q "file=$MP/mpl/mempressure.level" "$BATS_TEST_TMPDIR/err"
	"$MP_IN_CG" "$MEM/mpl" "$MP/mpl" -- stress-ng --vm 1 --vm-bytes 96M \
		--vm-keep --timeout 15s --quiet || true
	mp_wait_line "$BATS_TEST_TMPDIR/json" '"event"' 300 ||
		fail "no event: $(cat "$BATS_TEST_TMPDIR/err")"
	mp_run jq -e '.event.backend == "mempressure" and .event.cgroup == "/mpl" and
		(.event.level | IN("medium", "critical")) and
		(.event.level_native | IN("medium", "oom"))' "$BATS_TEST_TMPDIR/json"
	assert_success
}

@test "v1 mpctl: listen exits 1 when the mempressure cgroup is removed" {
	mkdir -p "$MP/gone"
	mpctl listen -b mempressure -c gone -v >/dev/null 2>"$BATS_TEST_TMPDIR/err" &
	local pid=$!
	MP_PIDS+=("$pid")
	mp_wait_line "$BATS_TEST_TMPDIR/err" listening 100
	rmdir "$MP/gone"
	local st=0
	wait_exit "$pid" 10 || st=$?
	[ "$st" -eq 1 ] || fail "status $st: $(cat "$BATS_TEST_TMPDIR/err")"
	grep -q "cgroup removed '/gone'" "$BATS_TEST_TMPDIR/err"
}

@test "v1 mpctl: the register monitor exits 1 when its cgroup is removed" {
	mkdir -p "$MP/rgone"
	mpctl register -b mempressure --chunk 1M --chunks 4 -c rgone -v \
		>/dev/null 2>"$BATS_TEST_TMPDIR/err" &
	local pid=$!
	MP_PIDS+=("$pid")
	mp_wait_line "$BATS_TEST_TMPDIR/err" 'registered: mode=kernel-v1' 100 ||
		fail "not registered: $(cat "$BATS_TEST_TMPDIR/err")"
	rmdir "$MP/rgone"
	# the kernel wakes the reader blocked on the eventfd (2^63 added)
	local st=0
	wait_exit "$pid" 10 || st=$?
	[ "$st" -eq 1 ] || fail "status $st: $(cat "$BATS_TEST_TMPDIR/err")"
	grep -q "cgroup removed '/rgone'" "$BATS_TEST_TMPDIR/err"
}

@test "v1 mpctl: register/add serve the kernel's shrinker requests" {
	pair mpr 48M
	mp_run mpctl register --chunk 1M --cgroup mpr --join -v -- sh -c '
		mpctl add 64 || exit 10
		stress-ng --vm 1 --vm-bytes 96M --vm-keep --timeout 20s --quiet &
		n=$(mpctl add --wait --timeout 60s) || exit 11
		kill $! 2>/dev/null; wait
		echo "asked $n"'
	assert_success
	assert_line --partial "registered: mode=kernel-v1 backend=mempressure"
	assert_line --regexp '^asked [1-9][0-9]*$'
	n=$(echo "$output" | sed -n 's/^asked //p')
	[ "$n" -le 64 ]
}
