#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The host's suites, unchanged, on the pure cgroup2 layout of a stock
# kernel (boot group v2pure): what applies there runs, what needs cgroup
# v1 or the patched kernel says why it skips. Each suite must pass and
# must have run at least one test for real.

load helpers

setup() {
	requires vm root mpctl
	[ ! -d /sys/fs/cgroup/unified ] || skip "not the pure cgroup2 layout"
}

host_suite() {
	MPCTL_BIN=$MP_BIN/mpctl mp_run bats --tap "/mpctl/bats/$1.bats"
	assert_success
	refute_line --regexp '^not ok '
	# at least one test ran and was not skipped
	assert_line --regexp '^ok [0-9]+ [^#]*$'
}

@test "host suite listen.bats passes on pure cgroup2" {
	host_suite listen
}

@test "host suite stress.bats passes on pure cgroup2" {
	host_suite stress
}

@test "host suite sysroot.bats passes on pure cgroup2" {
	host_suite sysroot
}
