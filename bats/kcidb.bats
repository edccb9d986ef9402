#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# mpctl report --kcidb: KCIDB v5.3 documents (KernelCI's common results
# database) from recorded VM reports, from --compare and from a live run,
# each validated against schema/kcidb/schema-v5.3.json by Debian's
# validator (python3-jsonschema, installed by scripts/deps.sh); and the
# validator seen rejecting broken documents, so that its pass means
# something. What is checked against the report is derived from the
# fixtures and from --compare's own JSON, never written down here.

load helpers

FIX=$ROOT/bats/fixtures
SCHEMA=$ROOT/schema/kcidb/schema-v5.3.json
# Debian's, by its path: a jsonschema of another Python on $PATH (pyenv)
# may lack the 2020-12 draft or not be there at all
VALIDATOR=/usr/bin/jsonschema

# kcidb_validate FILE: the schema's verdict on FILE, under run
kcidb_validate() {
	[ -x "$VALIDATOR" ] ||
		fail "no $VALIDATOR: scripts/deps.sh --host installs python3-jsonschema"
	run "$VALIDATOR" -i "$1" "$SCHEMA"
	mp_trace "jsonschema -i $1"
}


@test "kcidb: a recorded VM report as a valid document, a test per scenario and per metric" {
	local k=$BATS_TEST_TMPDIR/k.json r=$BATS_TEST_TMPDIR/r.json
	# the report as mpctl reads it (the metrics it lacks summarized) is
	# written beside the KCIDB document: the tests are checked against it
	mpctl report -q --input "$FIX/report-vm612-1.json" -o "$r" --kcidb "$k"
	assert_success
	assert_output ""
	kcidb_validate "$k"
	assert_success
	# one checkout of the release, one build of it with the config; every
	# test of that build, ids of the origin, none twice
	jq -e --slurpfile r "$r" '$r[0] as $r | . as $k |
		.version == {"major": 5, "minor": 3} and (has("schema") | not) and
		(.checkouts | length) == 1 and (.builds | length) == 1 and
		.checkouts[0].comment == $r.system.kernel_release and
		(.checkouts[0].id | startswith("mpctl:")) and
		.builds[0].checkout_id == .checkouts[0].id and
		.builds[0].architecture == $r.system.machine and
		.builds[0].misc.kernel_config == $r.system.kernel_config and
		.builds[0].comment == $r.system.kernel_version and
		(.tests | all(.build_id == $k.builds[0].id and
			.origin == "mpctl" and (.id | startswith("mpctl:")) and
			.start_time == $r.created)) and
		([.tests[].id] | length == (unique | length))' "$k"
	# a test per scenario and one per metric of it, each metric DONE with
	# its median: nanoseconds as seconds, bytes as B, counts bare
	jq -e --slurpfile r "$r" '$r[0] as $r | . as $k |
		(.tests | length) ==
			([$r.scenarios[] | 1 + (.metrics | length)] | add) and
		([$r.scenarios[] | . as $s | .metrics | to_entries[] |
			.key as $m | .value.median as $v |
			($k.tests[] | select(.path == "mpctl.\($s.name).\($m)")) |
			.status == "DONE" and .misc.summary.median == $v and
			if ($m | endswith("_ns")) then
				.number.unit == "s" and .number.prefix == "metric" and
				((.number.value - $v / 1e9) | fabs) <= 1e-9 * ($v / 1e9 | fabs)
			elif ($m | endswith("_bytes")) then
				.number == {"value": $v, "unit": "B", "prefix": "binary"}
			else .number.value == $v end] |
			length > 20 and all) and
		([$r.scenarios[] | . as $s |
			$k.tests[] | select(.path == "mpctl.\($s.name)") |
			.status == ({"ok": "DONE", "skipped": "SKIP"}[$s.status]) and
			(has("number") | not)] | length == ($r.scenarios | length) and all)
	' "$k"
}

@test "kcidb: a skipped scenario is SKIP with its reason; one report twice is the same document, two reports share no test" {
	local d=$BATS_TEST_TMPDIR
	mpctl report -q --input "$FIX/report-base.json" --kcidb "$d/a.json"
	assert_success
	kcidb_validate "$d/a.json"
	assert_success
	jq -e --slurpfile r "$FIX/report-base.json" '
		[$r[0].scenarios[] | select(.status == "skipped")] as $sk |
		($sk | length) >= 1 and
		([$sk[] | . as $s | $k.tests[] |
			select(.path == "mpctl.\($s.name)") |
			.status == "SKIP" and .comment == $s.reason] | length >= 1 and all)
	' --argjson k "$(cat "$d/a.json")" -n
	# the ids name the content: converted again, byte for byte the same
	mpctl report -q --input "$FIX/report-base.json" --kcidb "$d/b.json" -p
	assert_success
	jq -S . "$d/a.json" > "$d/a.s"
	jq -S . "$d/b.json" > "$d/b.s"
	cmp "$d/a.s" "$d/b.s"
	# two boots of one build: one build, tests apart
	mpctl report -q --input "$FIX/report-vm612-1.json" --kcidb "$d/1.json"
	assert_success
	mpctl report -q --input "$FIX/report-vm612-2.json" --kcidb "$d/2.json"
	assert_success
	jq -e -n --slurpfile a "$d/1.json" --slurpfile b "$d/2.json" '
		$a[0].builds[0].id == $b[0].builds[0].id and
		([$a[0].tests[].id] - [$b[0].tests[].id] | length) ==
			($a[0].tests | length)'
	# another build of the same release: another build
	mpctl report -q --input "$FIX/report-vm612-R-base.json" --kcidb "$d/3.json"
	assert_success
	jq -e -n --slurpfile a "$d/1.json" --slurpfile b "$d/3.json" '
		$a[0].builds[0].id != $b[0].builds[0].id'
}

# compare_kcidb STATUS BASE NEW OPTION...: --compare's JSON into
# $d/cmp.json and its KCIDB document into $d/k.json, both exiting with
# STATUS, the document checked: FAIL
# exactly where the comparison says worse, PASS where same or better,
# DONE for info and unsure, a scenario FAIL when one of its metrics is
compare_kcidb() {
	local st=$1 base=$2 new=$3
	shift 3
	"$MPCTL_BIN" report --compare --json "$@" "$base" "$new" \
		> "$d/cmp.json" || [ $? -eq "$st" ]
	mpctl report --compare -q --kcidb "$d/k.json" "$@" "$base" "$new"
	[ "$status" -eq "$st" ]
	kcidb_validate "$d/k.json"
	assert_success
	jq -e -n --slurpfile c "$d/cmp.json" --slurpfile k "$d/k.json" '
		def path: "mpctl.\(.scenario).\(.metric)";
		def status: {"worse": "FAIL", "same": "PASS", "better": "PASS",
			"info": "DONE", "unsure": "DONE"}[.verdict];
		([$k[0].tests[] | select(.status == "FAIL") | .path |
			select(split(".") | length == 3)] | sort) ==
			([$c[0].rows[] | select(.verdict == "worse") | path] | sort) and
		([$c[0].rows[] | . as $row | path as $p |
			$k[0].tests[] | select(.path == $p) |
			.status == ($row | status) and
			.misc.compare.verdict == $row.verdict and
			(.comment | startswith($row.verdict + ": "))] |
			length == ($c[0].rows | length) and all)'
	jq -e '. as $k | [.tests[] | select(.path | split(".") | length == 2) |
		.path as $s | select(.status != "SKIP") |
		.status == (if any($k.tests[];
			(.path | startswith($s + ".")) and .status == "FAIL")
			then "FAIL" else "PASS" end)] | length >= 4 and all' "$d/k.json"
	# the kinds of verdict seen, for the caller
	jq -r '.rows[].verdict' "$d/cmp.json" >> "$d/verdicts"
}

@test "kcidb: --compare's verdicts are the statuses: a regression of a real VM FAIL, valid, exit status the comparison's" {
	d=$BATS_TEST_TMPDIR
	pool_r_base
	# the 6.12 that drops shrinker requests against two pooled boots
	compare_kcidb 1 "$d/base.json" "$FIX/report-vm612-R-dropped.json"
	jq -e '.tests[] | select(.path == "mpctl.kernel-shrinker.chunks_freed") |
		.status == "FAIL" and (.comment | startswith("worse: "))' "$d/k.json"
	# a third real boot: no FAIL, exit 0
	compare_kcidb 0 "$d/base.json" "$FIX/report-vm612-R-control.json"
	jq -e '[.tests[].status] | (index("FAIL") | not) and index("PASS") != null' \
		"$d/k.json"
	# the host's regressed run as BASE: improvements, unsure, info, a worse
	compare_kcidb 1 "$FIX/report-regressed.json" "$FIX/report-base.json" \
		--force --allow-unsure
	# every kind of verdict was among them
	[ "$(sort -u "$d/verdicts" | tr '\n' ' ')" = "better info same unsure worse " ]
}

@test "kcidb: --compare with a scenario and a metric NEW lacks: MISS, written although the gate says 65" {
	local d=$BATS_TEST_TMPDIR
	# NEW without the hog scenario, and without one metric of shrinker
	jq '(.scenarios |= map(select(.name != "hog"))) |
		(.scenarios[] | select(.name == "shrinker")) |=
		(del(.runs[].alloc_throughput_bytes_per_s) |
			del(.metrics.alloc_bytes_per_s))' \
		"$FIX/report-base.json" > "$d/new.json"
	mpctl report --compare -q --kcidb "$d/k.json" "$FIX/report-base.json" \
		"$d/new.json"
	[ "$status" -eq 65 ]
	assert_output --partial "lacks scenarios"
	kcidb_validate "$d/k.json"
	assert_success
	# the scenario with a MISS metric is MISS too: the highest status of
	# its tests, as KCIDB summarizes (MISS above PASS)
	jq -e '([.tests[] | select(.status == "MISS") | .path] | sort) ==
		["mpctl.hog", "mpctl.shrinker", "mpctl.shrinker.alloc_bytes_per_s"]' \
		"$d/k.json"
}

@test "kcidb: the validator rejects a broken document (an id without origin, a bad status, a null, a string number, mpctl's schema member)" {
	local d=$BATS_TEST_TMPDIR i=0 f
	mpctl report -q --input "$FIX/report-vm612-3.json" --kcidb "$d/ok.json"
	assert_success
	kcidb_validate "$d/ok.json"
	assert_success
	for f in '.tests[0].id = "no-origin-here"' \
		'.tests[1].status = "OK"' \
		'.tests[2].comment = null' \
		'(.tests[] | select(has("number")) | .number.value) |= tostring' \
		'. + {schema: {name: "mpctl-kcidb", version: 1}}' \
		'.builds[0].architecture = "x86-64"' \
		'.checkouts[0].patchset_hash = "abc"' \
		'.version.major = 4'; do
		i=$((i + 1))
		jq "$f" "$d/ok.json" > "$d/bad$i.json"
		kcidb_validate "$d/bad$i.json"
		[ "$status" -ne 0 ] || fail "the validator accepted: $f"
	done
}

@test "kcidb: --kcidb-set: origin, the series as patchset_hash, a stock kernel, another system's build; bad values are one line and 64" {
	local d=$BATS_TEST_TMPDIR r=$FIX/report-vm612-1.json h
	h=$("$ROOT/kernel-patch/scripts/series-hash.sh" "$ROOT/kernel-patch/6.12")
	[[ $h =~ ^[0-9a-f]{64}$ ]]
	mpctl report -q --input "$r" --kcidb "$d/p.json" --kcidb-set origin=lab_x \
		--kcidb-set "patchset_hash=$h" --kcidb-set tree_name=stable \
		--kcidb-set config_name=mpctl-6.12 \
		--kcidb-set git_repository_url=https://example.org/linux.git
	assert_success
	kcidb_validate "$d/p.json"
	assert_success
	jq -e --arg h "$h" '.checkouts[0] | .patchset_hash == $h and
		.tree_name == "stable" and .origin == "lab_x" and
		(.id | startswith("lab_x:")) and
		.git_repository_url == "https://example.org/linux.git"' "$d/p.json"
	jq -e '.builds[0].config_name == "mpctl-6.12" and
		([.tests[] | .origin == "lab_x" and (.id | startswith("lab_x:"))] | all)' \
		"$d/p.json"
	# a stock kernel: no patches, another checkout of the same release
	mpctl report -q --input "$r" --kcidb "$d/s.json" --kcidb-set origin=lab_x \
		--kcidb-set patchset_hash=
	assert_success
	kcidb_validate "$d/s.json"
	assert_success
	jq -e -n --slurpfile p "$d/p.json" --slurpfile s "$d/s.json" '
		$s[0].checkouts[0].patchset_hash == "" and
		$s[0].checkouts[0].id != $p[0].checkouts[0].id'
	# tests of a build another system submitted: no checkout, no build
	mpctl report -q --input "$r" --kcidb "$d/b.json" \
		--kcidb-set build_id=maestro:abc123
	assert_success
	kcidb_validate "$d/b.json"
	assert_success
	jq -e '(has("checkouts") or has("builds") | not) and
		(.tests | length > 0 and all(.build_id == "maestro:abc123"))' "$d/b.json"
	mpctl report -q --input "$r" --kcidb "$d/c.json" \
		--kcidb-set checkout_id=maestro:ck1
	assert_success
	jq -e '(has("checkouts") | not) and .builds[0].checkout_id == "maestro:ck1"' \
		"$d/c.json"
	# refused before anything is written, one line each
	for bad in origin=Lab patchset_hash=abc git_commit_hash=123 nope=1 \
		build_id=noorigin git_repository_url=http://x; do
		mpctl report -q --input "$r" --kcidb "$d/x.json" --kcidb-set "$bad"
		[ "$status" -eq 64 ]
		assert_line --index 0 --partial "invalid --kcidb-set '$bad'"
		[ ! -e "$d/x.json" ]
	done
	mpctl report -q --input "$r" --kcidb-set origin=x
	[ "$status" -eq 64 ]
	assert_output --partial -- "--kcidb-set goes with --kcidb"
	# one file for two outputs
	mpctl report -q --input "$r" -o "$d/same.json" --kcidb "$d/same.json"
	[ "$status" -eq 64 ]
	[ ! -e "$d/same.json" ]
}

@test "kcidb: a live run writes --kcidb beside -o, from the one document" {
	requires root jq
	local d=$BATS_TEST_TMPDIR
	mpctl report --duration 1s --repeat 2 -s shrinker -q -o "$d/r.json" \
		--kcidb "$d/k.json"
	[ "$status" -ne 69 ] || skip "no pressure interface"
	assert_success
	kcidb_validate "$d/k.json"
	assert_success
	# the same tests as the conversion of the report written beside it
	mpctl report -q --input "$d/r.json" --kcidb "$d/c.json"
	assert_success
	jq -e -n --slurpfile a "$d/k.json" --slurpfile b "$d/c.json" \
		--slurpfile r "$d/r.json" '
		def rows: [.tests[] | [.path, .status]];
		($a[0] | rows) == ($b[0] | rows) and
		($a[0].checkouts[0].comment == $r[0].system.kernel_release) and
		([$a[0].tests[] | select(.path == "mpctl.shrinker.reclaim_requests") |
			.number.value == $r[0].scenarios[0].metrics.reclaim_requests.median] ==
			[true])'
}

@test "kcidb: contrib/kernelci: the DUT script's test cases are the KCIDB tests; the host script makes the document from the console log" {
	local d=$BATS_TEST_TMPDIR k=$ROOT/contrib/kernelci
	mkdir -p "$d/bin"
	# LAVA's lava-test-case, as a line; mpctl converting a recorded VM
	# report instead of running the suite
	printf '#!/bin/sh\necho "<LAVA_SIGNAL_TESTCASE $*>"\n' >"$d/bin/lava-test-case"
	printf '#!/bin/sh\nexec "%s" "$@" --input "%s"\n' "$MPCTL_BIN" \
		"$FIX/report-vm612-1.json" >"$d/bin/mpctl"
	chmod +x "$d/bin/lava-test-case" "$d/bin/mpctl"
	PATH=$d/bin:$PATH OUT=$d/dut run "$k/mpctl-report-dut.sh" -d 3s
	mp_trace "mpctl-report-dut.sh"
	assert_success
	echo "$output" >"$d/console"
	kcidb_validate "$d/dut/kcidb.json"
	assert_success
	# a case per KCIDB test, its result and measurement, and the run's
	jq -r '.tests[] | "<LAVA_SIGNAL_TESTCASE \(.path) --result " +
		({"DONE": "pass", "SKIP": "skip"}[.status]) +
		(if .number then " --measurement \(.number.value) --units " +
			(.number.unit // .misc.unit // "1") else "" end) + ">"' \
		"$d/dut/kcidb.json" >"$d/want"
	echo "<LAVA_SIGNAL_TESTCASE mpctl-report --result pass>" >>"$d/want"
	grep '^<LAVA_SIGNAL' "$d/console" >"$d/got"
	diff "$d/want" "$d/got"
	# the console as a lab logs it (timestamps before every line); the
	# host's document is the one a conversion of the report gives
	sed 's/^/[  123.456789] /' "$d/console" >"$d/console.log"
	run "$k/kcidb-from-log.sh" -m "$MPCTL_BIN" "$d/console.log" "$d/host"
	mp_trace "kcidb-from-log.sh"
	assert_success
	mpctl report -q --input "$FIX/report-vm612-1.json" --kcidb "$d/direct.json"
	assert_success
	diff <(jq -S . "$d/direct.json") <(jq -S . "$d/host/kcidb.json")
	# with a base: the comparison, the lab's fields
	run "$k/kcidb-from-log.sh" -m "$MPCTL_BIN" -b "$FIX/report-vm612-2.json" \
		"$d/console.log" "$d/cmp" --kcidb-set origin=mylab \
		--kcidb-set build_id=maestro:42 --allow-unsure
	mp_trace "kcidb-from-log.sh -b"
	[ "$status" -le 1 ]
	kcidb_validate "$d/cmp/kcidb.json"
	assert_success
	jq -e '(has("builds") | not) and
		(.tests | all(.build_id == "maestro:42" and .origin == "mylab")) and
		([.tests[].status] | index("PASS") != null)' "$d/cmp/kcidb.json"
	# a log without a report
	echo "Kernel panic" >"$d/empty.log"
	run "$k/kcidb-from-log.sh" -m "$MPCTL_BIN" "$d/empty.log" "$d/none"
	[ "$status" -eq 66 ]
	assert_output --partial "no MPCTL-REPORT lines"
}

@test "kcidb: contrib/kernelci/mpctl-report.yaml is a LAVA test definition that runs the DUT script" {
	/usr/bin/python3 -c 'import yaml' 2>/dev/null || skip "no python3-yaml"
	/usr/bin/python3 - "$ROOT/contrib/kernelci/mpctl-report.yaml" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert d["metadata"]["format"] == "Lava-Test Test Definition 1.0", d["metadata"]
assert d["metadata"]["name"] == "mpctl-report"
steps = "\n".join(d["run"]["steps"])
assert "./contrib/kernelci/mpctl-report-dut.sh" in steps, steps
for p in d["params"]:
    assert "${%s}" % p in steps, p
PY
	[ -x "$ROOT/contrib/kernelci/mpctl-report-dut.sh" ]
}
