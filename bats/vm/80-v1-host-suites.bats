#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The host's register and add suites, unchanged, against the patched
# kernel: the same tests pass with the emulated shrinker on a stock kernel
# and with the kernel's mempressure.shrinker here.
#
# "-v1-" in the name: shrinker.bash mounts memory on a v1 hierarchy, so
# this file runs in the v1 boot (see run-vm.sh).

load helpers

setup() {
	requires vm root mempressure mpctl
}

host_suite() {
	MPCTL_BIN=$MP_BIN/mpctl mp_run bats --tap "/mpctl/bats/$1.bats"
	assert_success
	refute_line --regexp '^not ok '
	assert_line --regexp '^ok [0-9]+ '
}

@test "host suite register.bats passes on the patched kernel" {
	host_suite register
}

@test "host suite add.bats passes on the patched kernel" {
	host_suite add
}
