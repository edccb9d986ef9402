#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The JSON schema: the keys in schema/mpctl.keys against real output, key
# for key, both ways (as docs.bats checks the options): every key a
# command emits is listed, every key listed without '?' is emitted.

load helpers
load shrinker

KEYS=$ROOT/schema/mpctl.keys

# check_doc FILE: every JSON document in FILE (one a line or one in all)
# against the section of its schema name and version
check_doc() {
	local file=$1 doc name ver section
	jq -c . "$file" >"$BATS_TEST_TMPDIR/docs" || return 1
	while read -r doc; do
		name=$(jq -r .schema.name <<<"$doc")
		ver=$(jq -r .schema.version <<<"$doc")
		section=$(awk -v want="[$name $ver]" '
			/^\[/ { cur = $0; next }
			/^#/ || !NF { next }
			cur == want { print }' "$KEYS")
		[ -n "$section" ] || {
			echo "no section [$name $ver] in $KEYS" >&2
			return 1
		}
		jq -r '[paths | map(if type == "number" then "[]" else . end) |
			join(".")] | unique[]' <<<"$doc" >"$BATS_TEST_TMPDIR/keys"
		awk -v name="$name" '
			FNR == NR {
				opt = sub(/\?$/, "")
				re = $0
				gsub(/\./, "\\.", re)
				gsub(/\[\]/, "\\[\\]", re)
				gsub(/\*/, "[^.]+", re)
				n++; rx[n] = "^" re "$"; want[n] = $0; optional[n] = opt
				next
			}
			{
				for (i = 1; i <= n; i++)
					if ($0 ~ rx[i]) { seen[i] = 1; break }
				if (i > n) { print name ": key not in the schema: " $0; bad = 1 }
			}
			END {
				for (i = 1; i <= n; i++)
					if (!optional[i] && !seen[i]) {
						print name ": key listed but not emitted: " want[i]
						bad = 1
					}
				exit bad
			}' <(echo "$section") "$BATS_TEST_TMPDIR/keys" >&2 || return 1
	done <"$BATS_TEST_TMPDIR/docs"
}

# the documents inside a report, split out by schema: the report without
# its runs, each run, and the stress document inside a listen run
split_report() {
	local r=$1
	jq -c '.scenarios[].runs |= map({})' "$r"
	jq -c '.scenarios[].runs[] | if .stress then .stress = {} else . end' "$r"
	jq -c '.scenarios[].runs[] | select(.stress) | .stress' "$r"
}

@test "schema: every section is well-formed, names and versions match the code" {
	run grep -E '^\[' "$KEYS"
	assert_output "$(printf '%s\n' '[mpctl-listen 1]' '[mpctl-register 1]' \
		'[mpctl-add 1]' '[mpctl-stress 2]' '[mpctl-report 1]' \
		'[mpctl-report-listen 1]' '[mpctl-report-compare 2]' \
		'[mpctl-info 1]' '[mpctl-report-list 1]')"
	# no key twice in a section
	run awk '/^\[/ { s = $0 } /^[a-z]/ { k = s " " $0; sub(/\?$/, "", k); if (c[k]++) print k }' "$KEYS"
	assert_output ""
}

@test "schema: info --json, here and on recorded machines" {
	requires jq
	local t
	mpctl info --json
	assert_success
	echo "$output" >"$BATS_TEST_TMPDIR/i.json"
	check_doc "$BATS_TEST_TMPDIR/i.json"
	for t in hybrid-container v2-systemd patched-v2 bare; do
		mpctl info --json --sysroot "$ROOT/bats/fixtures/sysroot/$t"
		assert_success
		echo "$output" >"$BATS_TEST_TMPDIR/i-$t.json"
		check_doc "$BATS_TEST_TMPDIR/i-$t.json"
	done
}

@test "schema: report --list --json" {
	requires jq
	run --separate-stderr "$MPCTL_BIN" report --list --json
	assert_success
	echo "$output" >"$BATS_TEST_TMPDIR/list.json"
	check_doc "$BATS_TEST_TMPDIR/list.json"
}

@test "schema: report --compare" {
	requires jq
	run --separate-stderr "$MPCTL_BIN" report --compare --force \
		--allow-unsure --json "$ROOT/bats/fixtures/report-base.json" \
		"$ROOT/bats/fixtures/report-regressed.json"
	echo "$output" >"$BATS_TEST_TMPDIR/cmp.json"
	check_doc "$BATS_TEST_TMPDIR/cmp.json"
}

@test "schema: stress --json, with and without --hog, --cotenant, --stop-answering" {
	requires root memcg jq stress-ng
	mpctl stress --json --duration 1s --threads 1
	echo "$output" >"$BATS_TEST_TMPDIR/s.json"
	check_doc "$BATS_TEST_TMPDIR/s.json"
	# the program stops answering beside a hog: an OOM kill (status 1,
	# "the engine was killed" on stderr) is an outcome the document
	# records, not a reason for it to lack a field
	run --separate-stderr "$MPCTL_BIN" stress --json --duration 2s \
		--threads 1 --limit 64M --hog "--vm 1 --vm-bytes 8m" \
		--cotenant --stop-answering 1s
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
	echo "$output" >"$BATS_TEST_TMPDIR/h.json"
	jq -e '.hog.args and .cotenant.ops and .stopped_answering_ns' \
		"$BATS_TEST_TMPDIR/h.json"
	check_doc "$BATS_TEST_TMPDIR/h.json"
}

@test "schema: a live report, its runs and its listen run" {
	requires root memcg jq stress-ng
	"$MPCTL_BIN" report --duration 1s --repeat 1 -s shrinker \
		-s listen-latency -s emulated --json >"$BATS_TEST_TMPDIR/r.json" ||
		[ $? -eq 1 ]
	split_report "$BATS_TEST_TMPDIR/r.json" >"$BATS_TEST_TMPDIR/parts"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/parts")" -ge 4 ]
	check_doc "$BATS_TEST_TMPDIR/parts"
	# the same report as two boots of one kernel (report --pool): boots,
	# each run's boot, the summaries' boot medians
	"$MPCTL_BIN" report --pool "$BATS_TEST_TMPDIR/r.json" \
		"$BATS_TEST_TMPDIR/r.json" --json -o "$BATS_TEST_TMPDIR/p.json"
	jq -e '.boots == 2 and ([.scenarios[].runs[].boot] | unique) == [1, 2]
		and any(.scenarios[].metrics[]; .boot_medians)' "$BATS_TEST_TMPDIR/p.json"
	split_report "$BATS_TEST_TMPDIR/p.json" >"$BATS_TEST_TMPDIR/pparts"
	check_doc "$BATS_TEST_TMPDIR/pparts"
}

@test "schema: listen, register and add under real pressure" {
	requires root memcg jq
	shrinker_cg schema 64M
	mpctl_bg listen -b memcg -c "$(memcg_root)/$SCG" -n 1 -t 25s -v --json
	local lpid=$MP_BG_PID lout=$MP_BG_OUT
	mpctl_bg register --chunk 1M --cgroup "$SCG" -b memcg --chunks 200 \
		--keep --count 1 --timeout 25s --json -v
	spawn_in "${SCG_DIRS[@]}" -- sh -c "$(fill_cmd 300)"
	wait_exit "$MP_BG_PID" 30
	wait_exit "$lpid" 30
	check_doc "$MP_BG_OUT"
	check_doc "$lout"
	mpctl register --chunk 256K --cgroup "$SCG" -b memcg --join -- bash -c "
		\"$MPCTL_BIN\" add 400 || exit 8
		$(fill_cmd) &
		\"$MPCTL_BIN\" add --wait --json --timeout 20s
		wait"
	assert_success
	echo "$output" >"$BATS_TEST_TMPDIR/add.json"
	check_doc "$BATS_TEST_TMPDIR/add.json"
}
