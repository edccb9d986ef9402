#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Runs last (file order): the suites left no cgroup and no process behind.

load helpers

@test "leftovers: no test, stress or report cgroup remains" {
	local root left=()
	for root in "$(memcg_root)" "$(v2_root)" "$(mempressure_root)"; do
		[ -n "$root" ] || continue
		for c in "$root"/mpctl-test-* "$root"/mpctl-stress-* "$root"/mpctl-report-*; do
			[ -d "$c" ] && left+=("$c")
		done
	done
	[ ${#left[@]} -eq 0 ] || fail "left behind: ${left[*]}"
}

@test "leftovers: no mpctl or stress-ng process of the suites remains" {
	run pgrep -f "$ROOT/build/(mpctl|mempressure_test)"
	[ "$status" -ne 0 ] || fail "still running: $(pgrep -af "$ROOT/build/")"
	run pgrep -x stress-ng
	[ "$status" -ne 0 ] || fail "stress-ng still running: $(pgrep -ax stress-ng)"
}
