#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# libmpctl-shrinker on the patched kernel's cgroup2 interface: the example
# program (examples/cooperate.c) registers on its own cgroup through the
# library, or takes the registration mpctl register hands down, and frees
# its cache when the kernel asks, while a hog fills the parent's limit.
# Each test fails when the cache was never asked or freed nothing.

# MP_PIDS (helpers) is filled in each test, in the same subshell
# shellcheck disable=SC2030,SC2031
load helpers

setup() {
	mp_v2_setup
	requires prog:cooperate stress-ng
}

teardown() {
	mp_v2_teardown
}

hog() {
	"$MP_IN_CG" "$1" -- stress-ng --vm 1 --vm-bytes "$2" --vm-keep \
		--timeout "${3}s" --quiet || true
}

# check_freed OUT: the cache was asked, freed what it held of it, and
# said so in its totals
check_freed() {
	grep -q '^registered kernel-v2 chunk 1048576 chunks 32$' "$1" ||
		fail "not registered on kernel v2: $(cat "$1")"
	grep -Eq '^asked [1-9][0-9]* freed [1-9][0-9]*$' "$1" ||
		fail "never asked: $(cat "$1")"
	grep -Eq '^held [0-9]+ freed [1-9][0-9]* requests [1-9][0-9]* lost 0$' "$1" ||
		fail "no totals with chunks freed: $(cat "$1")"
	echo "# $(tail -n 1 "$1")" >&3
}

@test "v2 library: the example registers on its own cgroup and frees when the kernel asks" {
	local d out=$BATS_TEST_TMPDIR/coop
	d=$(mp_v2_parent lib 64M 3/4 app hog)
	# no -g: the library finds its cgroup in /proc/self/cgroup
	mp_bg_app "$out" "$d/app" -- cooperate -n 32 -c 1048576 -d 60
	hog "$d/hog" 64M 10
	mp_stop_bg
	check_freed "$out"
	[ "$(sed -n 's/^oom_kill //p' "$d/app/memory.events")" = 0 ]
}

@test "v2 library: the example takes mpctl register's kernel registration" {
	requires mpctl
	local d out=$BATS_TEST_TMPDIR/coop
	d=$(mp_v2_parent libreg 64M 3/4 app hog)
	mp_bg_app "$out" "$d/app" -- mpctl register --chunk 1M --cgroup "$d/app" \
		-- cooperate -n 32 -c 1048576 -d 60
	hog "$d/hog" 64M 10
	mp_stop_bg
	check_freed "$out"
}
