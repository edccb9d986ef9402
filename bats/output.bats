#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Output files (common/mp_output.c) as a security tester would try them:
# /dev/stdout-style names, symlink chains, files planted in sticky
# directories, dangling links. report --input is the quickest writer.

load helpers

FIX=$ROOT/bats/fixtures

report_to() {
	"$MPCTL_BIN" report --input "$FIX/report-base.json" --json "$@"
}

@test "output: -o /dev/stdout, /dev/stderr and /dev/fd/N append to what >> opened" {
	local d=$BATS_TEST_TMPDIR
	echo earlier >"$d/results.txt"
	echo earlier >"$d/run.log"
	echo earlier >"$d/three.txt"
	report_to -o /dev/stdout >>"$d/results.txt"
	report_to -o /dev/stderr >/dev/null 2>>"$d/run.log"
	report_to -o /dev/fd/3 >/dev/null 3>>"$d/three.txt"
	local f
	for f in results.txt run.log three.txt; do
		[ "$(head -n 1 "$d/$f")" = earlier ] || {
			echo "$f lost its contents" >&2
			return 1
		}
		grep -q '"mpctl-report"' "$d/$f"
	done
	# > truncates once, in the shell; the document follows what is there
	report_to -o /dev/stdout >"$d/plain.txt"
	jq -e '.schema.name == "mpctl-report"' "$d/plain.txt"
	# a descriptor that is not open for writing is an error, before the run
	run "$MPCTL_BIN" report --input "$FIX/report-base.json" -o /dev/fd/7 7<"$d/run.log"
	assert_failure 1
	assert_output --partial "cannot write '/dev/fd/7'"
}

@test "output: every link of a chain is checked, as protected_symlinks does" {
	requires root
	local d=$BATS_TEST_TMPDIR
	mkdir -m 0700 "$d/private" && mkdir -m 1777 "$d/tmp"
	echo secret >"$d/private/f"
	# another user's link, reached through a link of our own
	ln -s "$d/private/f" "$d/tmp/theirs" && chown -h nobody "$d/tmp/theirs"
	ln -s "$d/tmp/theirs" "$d/tmp/mine"
	mpctl report --input "$FIX/report-base.json" -o "$d/tmp/mine"
	assert_failure 77
	assert_output --partial "refusing to follow '$d/tmp/mine'"
	# and through a directory link of theirs
	ln -s "$d/private" "$d/tmp/dir" && chown -h nobody "$d/tmp/dir"
	mpctl report --input "$FIX/report-base.json" -o "$d/tmp/dir/f"
	assert_failure 77
	[ "$(cat "$d/private/f")" = secret ]
}

@test "output: a file another user planted in a sticky directory is neither replaced nor given to them" {
	requires root
	local d=$BATS_TEST_TMPDIR
	mkdir -m 1777 "$d/tmp"
	echo planted >"$d/tmp/r.json" && chown nobody "$d/tmp/r.json"
	mpctl report --input "$FIX/report-base.json" -o "$d/tmp/r.json"
	assert_failure 77
	assert_output --partial "refusing to replace '$d/tmp/r.json'"
	[ "$(cat "$d/tmp/r.json")" = planted ]
	# elsewhere the file is replaced, and the new one stays ours
	mkdir "$d/plain"
	echo old >"$d/plain/r.json" && chown nobody "$d/plain/r.json"
	mpctl report --input "$FIX/report-base.json" -o "$d/plain/r.json"
	assert_success
	[ "$(stat -c %u "$d/plain/r.json")" = 0 ]
}

@test "output: a dangling link and its target are one file" {
	local d=$BATS_TEST_TMPDIR
	cd "$d"
	ln -s new.json dl
	mpctl report --input "$FIX/report-base.json" -o dl --svg new.json
	assert_failure 64
	assert_line --index 0 --partial "are one file: each output needs its own"
	# a chain: the same, however long
	ln -s dl dl2
	mpctl report --input "$FIX/report-base.json" -o dl2 --html "$d/new.json"
	assert_failure 64
	[ ! -e new.json ]
}

@test "output: a dangling chain into a missing directory fails before the run" {
	local d=$BATS_TEST_TMPDIR
	ln -s /nonexistent/dir/f "$d/far"
	ln -s far "$d/near"
	run timeout 20 "$MPCTL_BIN" stress --duration 10m -o "$d/near"
	assert_failure 1
	assert_output "mpctl stress: cannot create '$d/near': No such file or directory"
}

@test "output: a device node that cannot be opened fails before the run" {
	requires root
	local d=$BATS_TEST_TMPDIR
	# major 240: reserved for local use, no driver behind it here
	mknod "$d/nodev" c 240 0
	run timeout 20 "$MPCTL_BIN" stress --duration 10m -o "$d/nodev"
	assert_failure 1
	assert_output "mpctl stress: cannot open '$d/nodev': No such device or address"
	[ -c "$d/nodev" ]
}
