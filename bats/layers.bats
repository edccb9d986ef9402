#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The source tree's layering: common/ is a stack under stress/ and cmd/,
# and stress/ has no cycle of its own.

load helpers

@test "layers: common/'s include graph has no cycle and nothing includes upward" {
	command -v tsort >/dev/null || skip "no tsort"
	run "$ROOT/scripts/check-layers.sh"
	echo "$output" >&2
	assert_success
}

@test "layers: stress/ has no back-arrow: a workload that includes the run is refused" {
	command -v tsort >/dev/null || skip "no tsort"
	local t=$BATS_TEST_TMPDIR/tree
	mkdir -p "$t/scripts"
	cp -r "$ROOT/lib" "$ROOT/common" "$ROOT/cmd" "$ROOT/stress" "$t/"
	cp "$ROOT/scripts/check-layers.sh" "$t/scripts/"
	run "$t/scripts/check-layers.sh"
	assert_success
	# the co-tenant reaching into the run that starts it (as it once did)
	sed -i 's/^#include "cotenant.h"$/&\n#include "run.h"/' "$t/stress/cotenant.c"
	run "$t/scripts/check-layers.sh"
	assert_failure 1
	assert_output --partial "stress/ include graph has a cycle"
}
