#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The mempressure controller on cgroup v1: cgroup.event_control,
# mempressure.level and mempressure.shrinker.  Pressure comes from a v1
# memory cgroup with a small limit and no swap (memory.swappiness 0); the
# hog is in that memcg and in the mempressure cgroup under test, as the
# two controllers cannot be co-mounted.  Shrinkers run in that memcg: the
# kernel asks a shrinker for the memory cgroup its chunks are charged to.

# MP_PIDS (helpers) is filled in each test, in the same subshell
# shellcheck disable=SC2030,SC2031
load helpers

MP=$MP_CG/mempressure
MEM=$MP_CG/memory

setup() {
	requires vm root mempressure
	mp_v1_mount mempressure mempressure
}

teardown() {
	mp_v1_teardown
}

# memcg NAME LIMIT: a v1 memory cgroup without swap
memcg() {
	mp_v1_mount memory memory
	mkdir -p "$MEM/$1"
	echo 0 >"$MEM/$1/memory.swappiness"
	echo "$2" >"$MEM/$1/memory.limit_in_bytes"
}

# hog NAME BYTES SECS: fill memory in $MEM/NAME and $MP/NAME
hog() {
	"$MP_IN_CG" "$MEM/$1" "$MP/$1" -- stress-ng --vm 1 --vm-bytes "$2" \
		--vm-keep --timeout "${3}s" --quiet || true
}

@test "v1: mempressure mounts on its own with its files" {
	[ -w "$MP/cgroup.event_control" ]
	[ -r "$MP/mempressure.level" ]
	[ -r "$MP/mempressure.shrinker" ]
	[ -r "$MP/mempressure.events" ]
	mp_run cat "$MP/mempressure.level"
	assert_output low
	mp_run cat "$MP/mempressure.shrinker"
	assert_output ""
	mkdir "$MP/child"
	mp_run cat "$MP/child/mempressure.level"
	assert_output low
}

@test "v1: mempressure and memory cannot be co-mounted" {
	mp_v1_umount mempressure
	mkdir -p "$MP_CG/both"
	mp_run mount -t cgroup -o memory,mempressure none "$MP_CG/both"
	assert_failure
	! mp_is_mounted "$MP_CG/both" || umount "$MP_CG/both"
	rmdir "$MP_CG/both"
}

@test "v1: level events at low, medium and oom under a 32M memcg limit" {
	memcg lvl 32M
	mkdir "$MP/lvl"
	local l
	for l in low medium oom critical; do
		mp_bg_registered "$BATS_TEST_TMPDIR/$l" \
			mpvm evctl "$MP/lvl" mempressure.level "$l" -t 90000 -k -n 1
	done
	# watch the level file while the hog runs
	(for _ in $(seq 150); do cat "$MP/lvl/mempressure.level"; sleep 0.1; done) \
		>"$BATS_TEST_TMPDIR/seen" &
	MP_PIDS+=($!)
	hog lvl 128M 15
	for l in low medium oom critical; do
		mp_wait_line "$BATS_TEST_TMPDIR/$l" '^event [1-9]' 300 ||
			fail "no '$l' event: $(cat "$BATS_TEST_TMPDIR/$l")"
	done
	wait "${MP_PIDS[-1]}" || true
	grep -qE '^(medium|oom)$' "$BATS_TEST_TMPDIR/seen" ||
		fail "mempressure.level never left low: $(sort "$BATS_TEST_TMPDIR/seen" | uniq -c)"
}

@test "v1: without listeners the level still follows reclaim" {
	# no registration: the windows are closed in reclaim, no work item
	memcg nol 32M
	mkdir "$MP/nol"
	(for _ in $(seq 150); do cat "$MP/nol/mempressure.level"; sleep 0.1; done) \
		>"$BATS_TEST_TMPDIR/seen" &
	MP_PIDS+=($!)
	hog nol 128M 15
	wait "${MP_PIDS[-1]}" || true
	grep -qE '^(medium|oom)$' "$BATS_TEST_TMPDIR/seen" ||
		fail "mempressure.level never left low: $(sort "$BATS_TEST_TMPDIR/seen" | uniq -c)"
}

@test "v1: no level event without pressure" {
	mkdir "$MP/idle"
	mp_run mpvm evctl "$MP/idle" mempressure.level low -t 2000 -- sleep 1
	assert_failure 3
	assert_line "events=0 total=0 held=0 over=0"
}

@test "v1: shrinker registration, accounting up and down" {
	mkdir "$MP/acct"
	mp_run mpvm shrinker-write "$MP/acct" keep '%d +10' '%d -3' '%d 5' \
		'%d -100' '%d +1'
	assert_success
	assert_equal "${lines[*]}" \
		"ok state 4096 10 ok state 4096 7 ok state 4096 12 ok state 4096 0 ok state 4096 1"
	mp_wait_content "$MP/acct/mempressure.shrinker" ""
}

@test "v1: shrinker requests under pressure never exceed what is registered" {
	memcg shr 32M
	mkdir "$MP/shr"
	mp_bg_app "$BATS_TEST_TMPDIR/s" "$MEM/shr" -- \
		mpvm v1-shrinker "$MP/shr" 65536 1000 -t 60000 -k
	mp_run cat "$MP/shr/mempressure.shrinker"
	assert_output "65536 1000"
	hog shr 128M 15
	mp_stop_bg TERM
	mp_run cat "$BATS_TEST_TMPDIR/s"
	assert_line --regexp '^request [1-9]'
	refute_line --regexp '^over'
	assert_line --regexp '^events=[1-9][0-9]* total=[1-9][0-9]* held=[0-9]+ over=0$'
}

@test "v1: kernel count after requests equals registered minus requested" {
	memcg cnt 32M
	mkdir "$MP/cnt"
	mp_bg_registered "$BATS_TEST_TMPDIR/s" "$MP_IN_CG" "$MEM/cnt" -- \
		mpvm v1-shrinker "$MP/cnt" 65536 1000 -t 20000 -k \
		-- "$MP_IN_CG" "$MEM/cnt" "$MP/cnt" -- stress-ng --vm 1 \
		--vm-bytes 128M --vm-keep --timeout 10s --quiet
	# the app under test is not the OOM killer's to take (stress-ng sets
	# its own parent to -1000 and its workers to 1000)
	echo -1000 >"/proc/${MP_PIDS[-1]}/oom_score_adj" 2>/dev/null || true
	wait "${MP_PIDS[0]}" || true
	mp_run cat "$BATS_TEST_TMPDIR/s"
	assert_line --regexp '^request [1-9]'
	refute_line --regexp '^over'
	local total
	total=$(sed -n 's/^events=.* total=\([0-9]*\) .*/\1/p' "$BATS_TEST_TMPDIR/s")
	assert_line "state 65536 $((1000 - total))"
}

@test "v1: several shrinkers with different chunk sizes are all served" {
	memcg fair 32M
	mkdir "$MP/fair"
	# the same 16M each, in 4K and in 1M chunks
	mp_bg_app "$BATS_TEST_TMPDIR/a" "$MEM/fair" -- \
		mpvm v1-shrinker "$MP/fair" 4096 4096 -t 60000 -k
	mp_bg_app "$BATS_TEST_TMPDIR/b" "$MEM/fair" -- \
		mpvm v1-shrinker "$MP/fair" 1048576 16 -t 60000 -k
	mp_run cat "$MP/fair/mempressure.shrinker"
	assert_line "4096 4096"
	assert_line "1048576 16"
	hog fair 256M 20
	mp_stop_bg TERM
	local a b
	a=$(awk '/^request/ { s += $2 } END { print s * 4096 }' "$BATS_TEST_TMPDIR/a")
	b=$(awk '/^request/ { s += $2 } END { print s * 1048576 }' "$BATS_TEST_TMPDIR/b")
	echo "requested bytes: 4K shrinker $a, 1M shrinker $b" >&2
	[ "$a" -gt 0 ] || fail "the 4K shrinker got no request"
	[ "$b" -gt 0 ] || fail "the 1M shrinker got no request"
	if grep -q '^over' "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b"; then
		fail "a shrinker was asked for more than it held"
	fi
	# proportional shares: neither gets more than 4 times the other
	# (one chunk of slack for the coarse one)
	[ "$a" -le $((4 * b + 1048576)) ] && [ "$b" -le $((4 * a + 1048576)) ] ||
		fail "unfair: $a vs $b bytes"
}

@test "v1: a killed process's registrations are dropped" {
	mkdir "$MP/kill"
	mp_bg_registered "$BATS_TEST_TMPDIR/s" \
		mpvm v1-shrinker "$MP/kill" 4096 10 -t 60000 -k
	mp_bg_registered "$BATS_TEST_TMPDIR/l" \
		mpvm evctl "$MP/kill" mempressure.level low -t 60000 -k
	mp_run cat "$MP/kill/mempressure.shrinker"
	assert_output "4096 10"
	mp_stop_bg 9
	mp_wait_content "$MP/kill/mempressure.shrinker" ""
	rmdir "$MP/kill"
}

@test "v1: rmdir with live registrations" {
	mkdir "$MP/gone"
	mp_bg_registered "$BATS_TEST_TMPDIR/s" \
		mpvm v1-shrinker "$MP/gone" 4096 10 -t 60000 -k
	mp_bg_registered "$BATS_TEST_TMPDIR/l" \
		mpvm evctl "$MP/gone" mempressure.level low -t 60000 -k
	rmdir "$MP/gone"
	[ ! -e "$MP/gone" ]
	# the level listener is told its registration went away, and the
	# shrinker, blocked in poll/read, reads 2^63: gone, nothing asked
	mp_wait_line "$BATS_TEST_TMPDIR/l" '^event' 50 ||
		fail "no removal event: $(cat "$BATS_TEST_TMPDIR/l")"
	mp_wait_line "$BATS_TEST_TMPDIR/s" '^gone 0$' 50 ||
		fail "shrinker not told: $(cat "$BATS_TEST_TMPDIR/s")"
	mp_stop_bg 9
	# and the cgroup can be made again, clean
	mkdir "$MP/gone"
	mp_run cat "$MP/gone/mempressure.shrinker"
	assert_output ""
}

@test "v1: the shrinker of a removed memory cgroup moves up, and mempressure.events says so" {
	local w
	memcg mv1 64M
	mkdir "$MEM/mv2" "$MP/mv"
	# bound to mv1, the memory cgroup of the task that registers
	mp_bg_registered "$BATS_TEST_TMPDIR/s" "$MP_IN_CG" "$MEM/mv1" "$MP/mv" \
		-- mpvm v1-shrinker "$MP/mv" 4096 10 -t 60000 -k
	mp_run cat "$MP/mv/mempressure.events"
	assert_output "moved 0"
	mpvm watch "$MP/mv/mempressure.events" -n 1 -t 10000 \
		>"$BATS_TEST_TMPDIR/w" 2>&1 &
	w=$!
	mp_wait_line "$BATS_TEST_TMPDIR/w" '^watching' 50 ||
		fail "watch did not start: $(cat "$BATS_TEST_TMPDIR/w")"
	# the program moves to mv2 and mv1 is removed: mv1 goes offline
	echo "${MP_PIDS[-1]}" >"$MEM/mv2/cgroup.procs"
	rmdir "$MEM/mv1"
	wait "$w" || fail "no event on mempressure.events: $(cat "$BATS_TEST_TMPDIR/w")"
	mp_run cat "$BATS_TEST_TMPDIR/w"
	assert_line "event moved 1"
	# the registration stays, with its chunks
	mp_run cat "$MP/mv/mempressure.shrinker"
	assert_output "4096 10"
	mp_stop_bg 9
}

@test "v1: bad event_control input gives an errno" {
	mkdir "$MP/bad" "$MP/other"
	mp_run mpvm write "$MP/bad/cgroup.event_control" garbage 1 "1 2" \
		"-1 -1 low" "4294967296 1 low"
	assert_success
	assert_equal "${lines[*]}" \
		"error: EINVAL error: EINVAL error: EINVAL error: EINVAL error: EINVAL"
	local -A want=(
		["pipe mempressure.level low"]=EINVAL
		["closed mempressure.level low"]=EBADF
		["eventfd closed low"]=EBADF
		["eventfd mempressure.level bogus"]=EINVAL
		["eventfd mempressure.level x"]=EINVAL
		["eventfd cgroup.procs low"]=EINVAL
		["eventfd /proc/self/status low"]=EINVAL
		["eventfd /dev/null low"]=EINVAL
		["eventfd ../other/mempressure.level low"]=EINVAL
		["eventfd mempressure.shrinker 0"]=EINVAL
		["eventfd mempressure.shrinker -4096"]=EINVAL
		["eventfd mempressure.shrinker abc"]=EINVAL
		["eventfd mempressure.shrinker 18446744073709551615"]=EINVAL
		["eventfd mempressure.shrinker 99999999999999999999999"]=ERANGE
		["eventfd mempressure.level low"]=ok
		["eventfd mempressure.level critical"]=ok
		["eventfd mempressure.shrinker 4096"]=ok
	)
	local k e t a
	for k in "${!want[@]}"; do
		read -r e t a <<<"$k"
		mp_run mpvm ec "$MP/bad" "$e" "$t" "$a"
		[ "$output" = "${want[$k]}" ] || [ "$output" = "error: ${want[$k]}" ] ||
			fail "ec '$k': got '$output', want '${want[$k]}'"
	done
}

@test "v1: bad mempressure.shrinker input gives an errno" {
	mkdir "$MP/bads"
	mp_run mpvm shrinker-write "$MP/bads" keep garbage '%d' '%d x' '%d +' \
		'%d +18446744073709551615' '%d +4503599627370496' \
		'%d -18446744073709551615' '%d -99999999999999999999999' '%d +2'
	assert_success
	assert_equal "${lines[*]}" "$(printf '%s ' \
		'error: EINVAL state 4096 0' 'error: EINVAL state 4096 0' \
		'error: EINVAL state 4096 0' 'error: EINVAL state 4096 0' \
		'error: EOVERFLOW state 4096 0' 'error: EOVERFLOW state 4096 0' \
		'ok state 4096 0' 'error: ERANGE state 4096 0' 'ok state 4096 2' |
		sed 's/ $//')"
	# an fd that is no eventfd, closed, or an eventfd that is not registered
	mp_run mpvm shrinker-write "$MP/bads" pipe '%d +1'
	assert_line --index 0 "error: EINVAL"
	mp_run mpvm shrinker-write "$MP/bads" closed '%d +1'
	assert_line --index 0 "error: EBADF"
	mp_run mpvm shrinker-write "$MP/bads" eventfd '%d +1'
	assert_line --index 0 "error: ENOENT"
	# the same eventfd twice
	mp_run mpvm shrinker-write "$MP/bads" keep '@ec %d %d 4096'
	assert_line --index 0 "error: EBUSY"
}

@test "v1: unprivileged registration is refused" {
	mkdir "$MP/unpriv"
	mp_run mpvm -u 65534 evctl "$MP/unpriv" mempressure.level low -t 100
	assert_failure 2
	assert_line --regexp '^error: (EACCES|EPERM)'
	mp_run mpvm -u 65534 write "$MP/unpriv/mempressure.shrinker" "3 +1"
	assert_failure 2
	assert_line --regexp '^error: (EACCES|EPERM)'
}
