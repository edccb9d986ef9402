#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The source tree's layering: common/ is a stack under stress/ and cmd/.

load helpers

@test "layers: common/'s include graph has no cycle and nothing includes upward" {
	command -v tsort >/dev/null || skip "no tsort"
	run "$ROOT/scripts/check-layers.sh"
	echo "$output" >&2
	assert_success
}
