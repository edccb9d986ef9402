#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The kselftest of the patch series (tools/testing/selftests/cgroup/
# test_mempressure), built static from the patched tree.

load helpers

setup() {
	requires vm root
}

teardown() {
	mp_v2_release
}

@test "kselftest test_mempressure builds" {
	if [ -e /mpctl/kselftest-broken ]; then
		fail "$(cat /mpctl/kselftest-broken)"
	fi
	[ "$(mp_series)" != none ] || skip "kernel built without a patch series"
	requires prog:test_mempressure
}

@test "kselftest test_mempressure passes" {
	requires mempressure prog:test_mempressure
	mp_v2_enable memory
	mp_v2_enable mempressure
	mp_run test_mempressure
	# KSFT_SKIP
	[ "$status" != 4 ] || skip "test_mempressure skipped: ${lines[-1]}"
	assert_success
	refute_line --regexp '^not ok'
}
