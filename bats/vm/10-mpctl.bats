#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The static mpctl in the VM, against the booted kernel.

load helpers

setup() {
	requires vm root mpctl
}

@test "mpctl --help runs in the VM" {
	mp_run mpctl --help
	assert_success
}
