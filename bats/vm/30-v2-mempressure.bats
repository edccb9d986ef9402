#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The mempressure controller on cgroup v2: mempressure.level and
# mempressure.shrinker opened O_RDWR, a write registers, POLLPRI tells that
# a read has something.  Pressure comes from the same cgroup's memory.max
# with memory.swap.max 0, memory and mempressure enabled together; the
# shrinkers run in that cgroup, since the kernel asks a shrinker for the
# memory cgroup its chunks are charged to.

load helpers

setup() {
	mp_v2_setup
}

teardown() {
	mp_v2_teardown
}

# cg NAME [LIMIT]: a cgroup, with memory.max LIMIT and no swap
cg() {
	local d=$MP_V2/t-$1
	mkdir -p "$d"
	if [ -n "${2:-}" ]; then
		echo "$2" >"$d/memory.max"
		[ ! -e "$d/memory.swap.max" ] || echo 0 >"$d/memory.swap.max"
	fi
	echo "$d"
}

hog() {
	"$MP_IN_CG" "$1" -- stress-ng --vm 1 --vm-bytes "$2" --vm-keep \
		--timeout "${3}s" --quiet || true
}

@test "v2: mempressure files in a child cgroup" {
	local d
	d=$(cg files)
	grep -qw mempressure "$MP_V2/cgroup.controllers"
	[ -e "$d/mempressure.level" ]
	[ -e "$d/mempressure.shrinker" ]
	[ -e "$d/mempressure.events" ]
	[ ! -e "$d/cgroup.event_control" ]
	mp_run cat "$d/mempressure.level"
	assert_output low
	mp_run cat "$d/mempressure.shrinker"
	assert_output ""
}

@test "v2: level events at low, medium and oom under a 32M memory.max" {
	local d l
	d=$(cg lvl 32M)
	for l in low medium oom critical; do
		mp_bg_registered "$BATS_TEST_TMPDIR/$l" \
			mpvm v2-level "$d" "$l" -t 90000 -k -n 1
	done
	hog "$d" 128M 15
	for l in low medium oom critical; do
		mp_wait_line "$BATS_TEST_TMPDIR/$l" '^event (low|medium|oom) [1-9]' 300 ||
			fail "no '$l' event: $(cat "$BATS_TEST_TMPDIR/$l")"
	done
	# a listener only hears its level and above
	grep -qE '^event (medium|oom) ' "$BATS_TEST_TMPDIR/medium"
	grep -qE '^event oom ' "$BATS_TEST_TMPDIR/oom"
}

@test "v2: a second level write on one open file is refused" {
	local d
	d=$(cg rd)
	mp_run mpvm write "$d/mempressure.level" low medium
	assert_equal "${lines[*]}" "ok error: EBUSY"
}

@test "v2: bad mempressure.level input gives an errno" {
	local d s
	d=$(cg badl)
	for s in bogus "" "low medium" LOW 1 -1; do
		[ -n "$s" ] || continue
		mp_run mpvm write "$d/mempressure.level" "$s"
		assert_output "error: EINVAL"
	done
	mp_run cat "$d/mempressure.level"
	assert_output low
}

@test "v2: shrinker registration, accounting up and down" {
	local d
	d=$(cg acct)
	mp_run mpvm write "$d/mempressure.shrinker" 4096 +10 -3 5 -100 +1
	assert_success
	assert_equal "${lines[*]}" \
		"ok state 4096 0 ok state 4096 10 ok state 4096 7 ok state 4096 12 ok state 4096 0 ok state 4096 1"
	mp_wait_content "$d/mempressure.shrinker" ""
}

@test "v2: bad mempressure.shrinker input gives an errno" {
	local d s
	d=$(cg bads)
	# a sign is a count, never a chunk size
	for s in 0 -4096 +4096 abc 18446744073709551615; do
		mp_run mpvm write "$d/mempressure.shrinker" "$s"
		assert_line --index 0 "error: EINVAL"
	done
	mp_run mpvm write "$d/mempressure.shrinker" 99999999999999999999999
	assert_line --index 0 "error: ERANGE"
	mp_run mpvm write "$d/mempressure.shrinker" 4096 garbage + +18446744073709551615 \
		+4503599627370496 -18446744073709551615 +2
	assert_equal "${lines[*]}" "$(printf '%s ' 'ok state 4096 0' \
		'error: EINVAL state 4096 0' 'error: EINVAL state 4096 0' \
		'error: EOVERFLOW state 4096 0' 'error: EOVERFLOW state 4096 0' \
		'ok state 4096 0' 'ok state 4096 2' | sed 's/ $//')"
}

@test "v2: shrinker requests under pressure never exceed what is registered" {
	local d
	d=$(cg shr 32M)
	mp_bg_app "$BATS_TEST_TMPDIR/s" "$d" -- \
		mpvm v2-shrinker "$d" 65536 1000 -t 60000 -k
	mp_run cat "$d/mempressure.shrinker"
	assert_output "65536 1000"
	hog "$d" 128M 15
	mp_stop_bg TERM
	mp_run cat "$BATS_TEST_TMPDIR/s"
	assert_line --regexp '^request [1-9]'
	refute_line --regexp '^over'
	local total
	total=$(sed -n 's/^events=.* total=\([0-9]*\) .*/\1/p' "$BATS_TEST_TMPDIR/s")
	[ "$total" -ge 1 ] && [ "$total" -le 1000 ]
	assert_line "state 65536 $((1000 - total))"
}

@test "v2: a request wakes the poller of the registration asked, not those of other opens of the file" {
	local d n polls sleeps
	d=$(cg wake 32M)
	# registered with no chunks: never asked, it polls its own open file
	mp_bg_app "$BATS_TEST_TMPDIR/idle" "$d" -- \
		mpvm v2-shrinker "$d" 65536 0 -t 60000 -k
	mp_bg_app "$BATS_TEST_TMPDIR/s" "$d" -- \
		mpvm v2-shrinker "$d" 65536 1000 -t 60000 -k
	hog "$d" 128M 8
	mp_stop_bg TERM
	n=$(grep -c '^request' "$BATS_TEST_TMPDIR/s") || true
	polls=$(mp_field polls "$(cat "$BATS_TEST_TMPDIR/idle")")
	sleeps=$(mp_field sleeps "$(cat "$BATS_TEST_TMPDIR/idle")")
	echo "# requests read by the program: $n; the registration beside it: $polls polls, $sleeps sleeps" >&3
	[ "$n" -ge 3 ] || fail "too few requests to tell: $n"
	mp_run cat "$BATS_TEST_TMPDIR/idle"
	assert_line --regexp '^events=0 '
	# one sleep per poll() that found nothing; a sleep more is a
	# wake-up by a request to the other registration (before the
	# series' per-open wait queue: about one per request)
	[ -n "$sleeps" ] && [ $((sleeps - polls)) -le 1 ] ||
		fail "the idle registration was woken $((sleeps - polls)) times for $n requests to another"
}

@test "v2: several shrinkers with different chunk sizes are all served" {
	local d
	d=$(cg fair 32M)
	mp_bg_app "$BATS_TEST_TMPDIR/a" "$d" -- \
		mpvm v2-shrinker "$d" 4096 4096 -t 60000 -k
	mp_bg_app "$BATS_TEST_TMPDIR/b" "$d" -- \
		mpvm v2-shrinker "$d" 1048576 16 -t 60000 -k
	mp_run cat "$d/mempressure.shrinker"
	assert_line "4096 4096"
	assert_line "1048576 16"
	hog "$d" 256M 20
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
	[ "$a" -le $((4 * b + 1048576)) ] && [ "$b" -le $((4 * a + 1048576)) ] ||
		fail "unfair: $a vs $b bytes"
}

@test "v2: a killed process's registrations are dropped" {
	local d
	d=$(cg kill)
	mp_bg_registered "$BATS_TEST_TMPDIR/s" \
		mpvm v2-shrinker "$d" 4096 10 -t 60000 -k
	mp_bg_registered "$BATS_TEST_TMPDIR/l" \
		mpvm v2-level "$d" low -t 60000 -k
	mp_run cat "$d/mempressure.shrinker"
	assert_output "4096 10"
	mp_stop_bg 9
	mp_wait_content "$d/mempressure.shrinker" ""
}

@test "v2: rmdir with live registrations" {
	local d
	d=$(cg gone)
	mp_bg_registered "$BATS_TEST_TMPDIR/s" \
		mpvm v2-shrinker "$d" 4096 10 -t 60000 -k
	mp_bg_registered "$BATS_TEST_TMPDIR/l" \
		mpvm v2-level "$d" low -t 60000 -k
	rmdir "$d"
	[ ! -e "$d" ]
	sleep 1
	mp_stop_bg TERM
	mkdir "$d"
	mp_run cat "$d/mempressure.shrinker"
	assert_output ""
}

@test "v2: unprivileged registration is refused" {
	local d
	d=$(cg unpriv)
	mp_run mpvm -u 65534 v2-level "$d" low -t 100
	assert_failure 2
	assert_line --regexp '^error: (EACCES|EPERM)'
	mp_run mpvm -u 65534 v2-shrinker "$d" 4096 1 -t 100
	assert_failure 2
	assert_line --regexp '^error: (EACCES|EPERM)'
}
