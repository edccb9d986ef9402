#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Issue 36's "files and environment" review, the items that are not about
# output files (bats/output.bats) or the service manager (systemd.bats):
# what report passes to stress, cgroups shared with others, a failed hog,
# a truncated config.gz.

load helpers

@test "report: a --stress-arg that would override report's own options is refused" {
	local a
	for a in --duration=5s --dur=5s -d5s -jd5s --limit=1G -L1G --json -j \
		--pretty -p --output=/tmp/x -o/tmp/x --cgroup=/ -c/ --parent=/ \
		--hog=--vm --quiet -q --help --version -V --usage; do
		mpctl report --stress-arg="$a" -s shrinker -d 1s -r 1
		assert_failure 64
		assert_line --index 0 --partial "--stress-arg '$a' would override report's own"
	done
	# what report does not set passes (and is checked by stress itself)
	mpctl report --stress-arg=--no-such-option -s shrinker -d 1s -r 1 --json
	refute_output --partial "would override"
}

# wait_procs CG: until a process is in the cgroup (10 s at most)
wait_procs() {
	local i
	for i in $(seq 200); do
		[ -n "$(cat "$1/cgroup.procs")" ] && return 0
		sleep 0.05
	done
	return 1
}

@test "stress --cgroup: a cgroup another run is using is refused" {
	requires root memcg
	local cg
	cg=$(make_memcg shared-run 256M)
	"$MPCTL_BIN" stress -c "$cg" --duration 30s --threads 1 -q &
	MP_PIDS+=("$!")
	wait_procs "$cg"
	mpctl stress -c "$cg" --duration 1s --threads 1
	assert_failure 1
	assert_output --regexp "^mpctl stress: cgroup '/$MP_RUN_ID-shared-run' is in use by another mpctl run"
}

@test "stress --cgroup: other processes in the cgroup are one warning" {
	requires root memcg
	local cg
	cg=$(make_memcg shared-tenant 256M)
	spawn_in "$cg" -- sleep 60
	wait_procs "$cg"
	mpctl stress -c "$cg" --duration 1s --threads 1
	assert_success
	assert_line --index 0 "mpctl stress: warning: cgroup '/$MP_RUN_ID-shared-tenant' has 1 other process: it shares the limit, and its memory counts in the results"
	mpctl stress -c "$cg" --duration 1s --threads 1 -q
	assert_success
	refute_output --partial "warning"
}

@test "stress --hog: a hog that fails is said, and the run fails" {
	requires root memcg stress-ng
	local d=$BATS_TEST_TMPDIR
	run timeout 60 "$MPCTL_BIN" stress --hog "--no-such-option 1" \
		--duration 2s --threads 1 --json -o "$d/s.json"
	mp_trace "stress --hog (failing)"
	assert_failure 1
	assert_output --partial "mpctl stress: the hog 'stress-ng --no-such-option 1' failed: exited with status 1: stress-ng: unrecognized option '--no-such-option'"
	# the document is still written, and says so
	jq -e '.hog.exit_status == 1 and .hog.failed' "$d/s.json"
}

@test "stress --hog: how the hog ends when the run stops it is teardown, not a failure" {
	requires root memcg jq
	local bin=$BATS_TEST_TMPDIR/bin d=$BATS_TEST_TMPDIR
	mkdir "$bin"
	# a stress-ng that runs until told to stop, and then exits 2, as a
	# stress-ng whose worker the run's pressure killed did
	printf '#!/bin/sh\ntrap "exit 2" INT\nsleep 60 &\nwait\n' >"$bin/stress-ng"
	chmod +x "$bin/stress-ng"
	PATH=$bin:$PATH run timeout 60 "$MPCTL_BIN" stress --hog "--vm 1" \
		--duration 1s --threads 1 --json -o "$d/s.json"
	mp_trace "stress --hog (stopped at the end, exits 2)"
	[ "$status" -ne 69 ] || skip "no pressure interface"
	assert_success
	refute_output --partial "hog"
	jq -e '.hog.exit_status == 2 and .hog.failed == false' "$d/s.json"
}

@test "report: a truncated config.gz is said, and its options are unknown" {
	requires jq
	local r=$BATS_TEST_TMPDIR/root
	cp -a "$ROOT/bats/fixtures/sysroot/bare" "$r"
	# a config long enough to span blocks, cut before the gzip trailer
	{
		echo CONFIG_PSI=y
		seq -f 'CONFIG_FILLER_%g=y' 5000
		echo '# CONFIG_SWAP is not set'
	} | gzip >"$BATS_TEST_TMPDIR/config.gz"
	head -c "$(($(stat -c %s "$BATS_TEST_TMPDIR/config.gz") / 2))" \
		"$BATS_TEST_TMPDIR/config.gz" >"$r/proc/config.gz"
	MPCTL_SYSROOT=$r run --separate-stderr "$MPCTL_BIN" report -s shrinker \
		-d 1s -r 1 --json
	mp_trace "report on a truncated config.gz"
	# what was read stands; what was not is unknown, never "n"
	echo "$output" | jq -e '.system.kernel_config |
		.options.CONFIG_PSI == "y" and .options.CONFIG_SWAP == null and
		.error == "\u0027/proc/config.gz\u0027: truncated: unexpected end of file"'
	# only the trailer missing: truncated too
	head -c "$(($(stat -c %s "$BATS_TEST_TMPDIR/config.gz") - 8))" \
		"$BATS_TEST_TMPDIR/config.gz" >"$r/proc/config.gz"
	MPCTL_SYSROOT=$r run --separate-stderr "$MPCTL_BIN" report -s shrinker \
		-d 1s -r 1 --json
	echo "$output" | jq -e '.system.kernel_config |
		.error | test("truncated")'
}

@test "report: the text table says a config.gz was incomplete" {
	requires jq
	local doc=$BATS_TEST_TMPDIR/r.json
	jq '.system.kernel_config = {options: {CONFIG_PSI: "y"},
		error: "\u0027/proc/config.gz\u0027: truncated: unexpected end of file"}' \
		"$ROOT/bats/fixtures/report-base.json" >"$doc"
	mpctl report --input "$doc"
	assert_success
	assert_line --regexp "^config +PSI=y \(incomplete: '/proc/config.gz': truncated: unexpected end of file\)$"
	jq 'del(.system.kernel_config.error)' "$doc" >"$doc.ok"
	mpctl report --input "$doc.ok"
	assert_success
	refute_output --partial incomplete
}

@test "report: a scenario whose hog fails says the hog's exit status" {
	requires root memcg jq
	local bin=$BATS_TEST_TMPDIR/bin
	mkdir "$bin"
	# a stress-ng that fails at once, as one refused by its options
	printf '#!/bin/sh\nexit 2\n' >"$bin/stress-ng"
	chmod +x "$bin/stress-ng"
	PATH=$bin:$PATH run timeout 60 "$MPCTL_BIN" report -s hog -r 1 -d 1s \
		-o "$BATS_TEST_TMPDIR/r.json"
	mp_trace "report -s hog (failing hog)"
	[ "$status" -ne 69 ] || skip "no pressure interface"
	assert_failure
	# the status read from the run's document before it is freed
	assert_output --partial "scenario 'hog': the hog failed: stress-ng exited with status 2"
}
