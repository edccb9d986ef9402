#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# scripts/check.sh's TAP bookkeeping (scripts/tap.sh): a suite killed
# half-way, or a runner that fails, is never a pass.

load helpers

# a suite of four tests whose third kills its whole run (the process
# group setsid gives it), as an OOM kill or a timeout would (written by
# printf: bats would take a test line in a here-document for its own)
half_suite() {
	local t='@test'
	printf '%s "%s" { %s; }\n' "$t" one true "$t" two true \
		"$t" three "kill -KILL 0" "$t" four true >"$BATS_TEST_TMPDIR/half.bats"
}

@test "check: a host suite killed after 2 of 4 tests fails the count" {
	. "$ROOT/scripts/tap.sh"
	half_suite
	tapdir=$BATS_TEST_TMPDIR/tap
	mkdir "$tapdir"
	# as check.sh runs the host suite, killed while the third runs
	rc=0
	# (its run dir in this test's: killed, it cannot remove it)
	TMPDIR=$BATS_TEST_TMPDIR setsid -w bats --tap \
		"$BATS_TEST_TMPDIR/half.bats" >"$tapdir/host.tap" || rc=$?
	[ "$rc" -ne 0 ]
	grep -qx '1\.\.4' "$tapdir/host.tap"
	[ "$(grep -c '^ok ' "$tapdir/host.tap")" -eq 2 ]
	# the plan alone: 2 of 4 results came, 2 are missing
	run tap_count "$tapdir/host.tap"
	assert_output --partial "2 of 4 planned results, 2 missing"
	tap_count "$tapdir/host.tap" 2>/dev/null
	[ "$tap_passed" -eq 2 ] && [ "$tap_failed" -eq 2 ] && [ "$tap_skipped" -eq 0 ]
	# the runner's status as well
	tap_status "$tapdir/host.tap" "$rc" "bats (host suite)"
	tail -n 1 "$tapdir/host.tap" | grep -qx "not ok - bats (host suite) exited with status $rc"
	tap_count "$tapdir/host.tap" 2>/dev/null
	[ "$tap_failed" -eq 3 ]
}

@test "check: a complete plan passes; a failing runner without a 'not ok' does not" {
	. "$ROOT/scripts/tap.sh"
	tapdir=$BATS_TEST_TMPDIR/tap
	mkdir "$tapdir"
	printf '1..3\nok 1 a\nok 2 b # skip why\nnot ok 3 c\n' >"$tapdir/a.tap"
	# results without a plan (the clang-format step) count as they are
	printf 'ok 1 d\n' >"$tapdir/b.tap"
	tap_count "$tapdir"/*.tap
	[ "$tap_passed" -eq 2 ] && [ "$tap_failed" -eq 1 ] && [ "$tap_skipped" -eq 1 ]
	printf '1..1\nok 1 e\n' >"$tapdir/c.tap"
	tap_status "$tapdir/c.tap" 0 runner
	tap_count "$tapdir/c.tap"
	[ "$tap_passed" -eq 1 ] && [ "$tap_failed" -eq 0 ]
	tap_status "$tapdir/c.tap" 1 runner
	tap_count "$tapdir/c.tap"
	[ "$tap_passed" -eq 1 ] && [ "$tap_failed" -eq 1 ]
	# check.sh uses both
	grep -q 'tap_status "$tapdir/host.tap" "${PIPESTATUS\[0\]}"' "$ROOT/scripts/check.sh"
	grep -q '^	tap_count "$tapdir"/\*.tap' "$ROOT/scripts/check.sh"
}

@test "check: what a suite leaves in its temp dir is a failure" {
	. "$ROOT/scripts/tap.sh"
	d=$BATS_TEST_TMPDIR/tmp
	mkdir "$d"
	tap_empty_dir "$BATS_TEST_TMPDIR/a.tap" "$d" suite
	assert_equal "$(cat "$BATS_TEST_TMPDIR/a.tap")" "ok - suite left no temp file"
	# as the killed half-way suite above left its run dir in /tmp
	mkdir "$d/bats-run-x" && : >"$d/mpctl.1"
	tap_empty_dir "$BATS_TEST_TMPDIR/b.tap" "$d" suite
	assert_equal "$(cat "$BATS_TEST_TMPDIR/b.tap")" \
		"not ok - suite left temp files behind in $d: bats-run-x mpctl.1"
	tap_count "$BATS_TEST_TMPDIR/b.tap"
	[ "$tap_failed" -eq 1 ] && [ "$tap_passed" -eq 0 ]
	# check.sh runs the host suite in such a dir
	grep -q 'TMPDIR=$htmp bats --tap' "$ROOT/scripts/check.sh"
	grep -q '^	tap_empty_dir "$tapdir/host.tap" "$htmp"' "$ROOT/scripts/check.sh"
}

@test "check: the end of the log says again what failed, with its diagnostics" {
	. "$ROOT/scripts/tap.sh"
	tapdir=$BATS_TEST_TMPDIR/tap
	mkdir "$tapdir"
	printf '1..4\nok 1 a\nnot ok 2 b\n# (in test file x.bats, line 7)\n#   `false'"'"' failed\nok 3 c\n' >"$tapdir/a.tap"
	printf 'not ok - vmtest 6.1: the VM run failed\n' >"$tapdir/b.tap"
	run tap_failures "$tapdir"/*.tap
	assert_success
	assert_line --index 0 "a.tap: not ok 2 b"
	assert_line --index 1 "    # (in test file x.bats, line 7)"
	assert_line --index 2 "    #   \`false' failed"
	# the result the plan promised and that never came
	assert_line --index 3 "a.tap: 1 of 4 planned results never came"
	assert_line --index 4 "b.tap: not ok - vmtest 6.1: the VM run failed"
	[ "${#lines[@]}" -eq 5 ]
	# a passing result's comments are not a failure's
	printf '1..1\nok 1 a\n# note\n' >"$tapdir/c.tap"
	run tap_failures "$tapdir/c.tap"
	assert_output ''
	grep -q '^		tap_failures "$tapdir"/\*.tap' "$ROOT/scripts/check.sh"
}
