#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# mpctl report: the suite's document, --compare on recorded reports (two
# runs of one kernel, and one with notifications dropped), the schema
# check, and the pictures rendered to PNG.
#
# bats/fixtures/report-*.json were recorded on a stock 6.18 host (emulated
# shrinker over memcg), one after the other:
#   base, same   mpctl report --duration 3s --repeat 3 --json
#   regressed    the same with --stress-arg=--high=off: the emulation's
#                early warning is off, standing in for a kernel that drops
#                notifications (no reclaim request reaches the program)

load helpers

FIX=$ROOT/bats/fixtures

# width and height of a PNG, from its IHDR chunk
png_size() {
	od -An -tu1 -j16 -N8 "$1" | awk '{
		printf "%d %d\n", $1 * 16777216 + $2 * 65536 + $3 * 256 + $4,
			$5 * 16777216 + $6 * 65536 + $7 * 256 + $8 }'
}

# columns_line_up L|R...: stdin is a table, its header line first; column N
# is left-aligned (L: every row has a cell starting where its heading
# starts) or right-aligned (R: ending where its heading ends)
columns_line_up() {
	awk -v spec="$*" '
	NR == 1 {
		n = split(spec, a, " "); rest = $0; off = 0
		for (i = 1; i <= n; i++) {
			match(rest, /[^ ]+/)
			s[i] = off + RSTART; e[i] = off + RSTART + RLENGTH - 1
			off = e[i]; rest = substr(rest, RSTART + RLENGTH)
		}
		next
	}
	{
		for (i = 1; i <= n; i++) {
			if (a[i] == "L") {
				c = substr($0, s[i], 1)
				p = s[i] > 1 ? substr($0, s[i] - 1, 1) : " "
				ok = c != " " && c != "" && p == " "
			} else {
				c = substr($0, e[i], 1); x = substr($0, e[i] + 1, 1)
				ok = c != " " && c != "" && (x == " " || x == "")
			}
			if (!ok) { printf "line %d, column %d: %s\n", NR, i, $0; bad = 1 }
		}
	}
	END { exit bad }'
}

@test "report: --help names the options, --list the scenarios" {
	mpctl report --help
	assert_success
	for o in --json --output --duration --repeat --scenario --compare \
		--threshold --svg --html --input; do
		assert_output --partial -- "$o"
	done
	mpctl report --list
	assert_success
	for s in listen-latency shrinker hog overcommit emulated strategy-none \
		strategy-madv-free strategy-psi strategy-kernel \
		strategy-kernel-lazyfree strategy-kernel-munmap \
		strategy-reclaim-agent; do
		assert_line --regexp "^$s "
	done
}

@test "report --list --json: the scenarios as a JSON document" {
	requires jq
	run --separate-stderr "$MPCTL_BIN" report --list --json
	assert_success
	echo "$output" | jq -e '.schema.name == "mpctl-report-list" and
		(.scenarios | length) >= 12 and
		(.scenarios[] | select(.name == "shrinker") |
			.standard == true and (.description | length > 0)) and
		(.scenarios[] | select(.name == "strategy-psi") |
			.standard == false)'
	[ "$(echo "$output" | wc -l)" -eq 1 ]
	run --separate-stderr "$MPCTL_BIN" report --list --pretty
	assert_success
	echo "$output" | jq -e '.scenarios | length >= 12'
	[ "$(echo "$output" | wc -l)" -gt 1 ]
}

@test "report: usage errors are 64" {
	mpctl report --compare "$FIX/report-base.json"
	[ "$status" -eq 64 ]
	assert_output --partial 'needs BASE.json and NEW.json'
	mpctl report --scenario nope
	[ "$status" -eq 64 ]
	assert_output --partial "unknown scenario 'nope'"
	mpctl report --threshold 10
	[ "$status" -eq 64 ]
	mpctl report --compare a b --threshold -3
	[ "$status" -eq 64 ]
	mpctl report --repeat 0
	[ "$status" -eq 64 ]
	mpctl report --compare a b --svg x.svg
	[ "$status" -eq 64 ]
	# the gate's options go with --compare
	for o in --allow-unsure --force; do
		mpctl report "$o"
		[ "$status" -eq 64 ]
		assert_line --index 0 "mpctl report: --threshold, --alpha, --noise, --allow-unsure and --force go with --compare"
	done
}

@test "report --compare: a report against itself never regresses" {
	# 'regressed' has OOM-killed runs: 2 latencies a side reach no
	# verdict, which --allow-unsure accepts (without it: 65, below)
	for f in base same regressed; do
		mpctl report --compare --allow-unsure "$FIX/report-$f.json" \
			"$FIX/report-$f.json"
		assert_success
		assert_output --partial '0 regression(s)'
		# not even with a threshold of 0
		mpctl report --compare --allow-unsure --threshold 0 \
			"$FIX/report-$f.json" "$FIX/report-$f.json"
		assert_success
	done
}

@test "report --compare: two recorded runs of the same kernel do not regress" {
	mpctl report --compare "$FIX/report-base.json" "$FIX/report-same.json"
	assert_success
	refute_output --partial WORSE
	mpctl report --compare "$FIX/report-same.json" "$FIX/report-base.json"
	assert_success
}

@test "report --compare: a third boot of the patched 6.12 VM against two pooled ones" {
	# recorded by kernel-patch/scripts/compare-kernels.sh -d 3s -r 3 6.12 6.12:
	# the base is two boots pooled, as the script pools them, because a
	# TCG guest's speed changes between boots with the host's load
	jq -e '.system.kernel_config.options.CONFIG_CGROUP_MEMPRESSURE == "y" and
		(.system.backends[0] | .name == "mempressure" and .present)' \
		"$FIX/report-vm612-1.json"
	mpctl report --pool "$FIX/report-vm612-1.json" "$FIX/report-vm612-2.json" \
		--json -o "$BATS_TEST_TMPDIR/pooled.json"
	assert_success
	jq -e '.scenarios[] | select(.name == "shrinker") |
		.metrics.reclaim_requests.n == 6' "$BATS_TEST_TMPDIR/pooled.json"
	# the third boot's emulated scenario had an OOM kill that none of
	# the six pooled runs had: that, and nothing else, is a regression
	mpctl report --compare "$BATS_TEST_TMPDIR/pooled.json" "$FIX/report-vm612-3.json"
	assert_failure 1
	run grep -E 'WORSE$' <<<"$output"
	assert_output --regexp '^emulated +oom_kills +lower +0 +0 .* WORSE$'
	[ "${#lines[@]}" -eq 1 ]
}

@test "report --pool: the boots of one kernel as one report, every run tagged with its boot" {
	local f1=$FIX/report-vm612-1.json f2=$FIX/report-vm612-2.json
	local f3=$FIX/report-vm612-3.json p=$BATS_TEST_TMPDIR/p.json
	run -0 "$MPCTL_BIN" report --pool "$f1" "$f2" "$f3" --json -o "$p"
	jq -e '.boots == 3' "$p"
	# every scenario: the runs of the three boots in boot order, each
	# tagged, and summaries made again from all of them
	for s in $(jq -r '.scenarios[].name' "$f1"); do
		n=$(jq -s --arg s "$s" '[.[].scenarios[] | select(.name == $s) | .runs | length] | add' "$f1" "$f2" "$f3")
		jq -e --arg s "$s" --argjson n "$n" '.scenarios[] | select(.name == $s) |
			(.runs | length) == $n and
			([.runs[].boot] == ([.runs[].boot] | sort)) and
			([.runs[].boot] | unique) == [1, 2, 3]' "$p"
	done
	jq -e '.scenarios[] | select(.name == "shrinker") |
		.metrics.reclaim_requests.n == 9 and
		(.metrics.reclaim_requests.boot_medians | length) == 3' "$p"
	# the runs are the reports' own, bytes and all (2.0 stays 2.0)
	jq -e --slurpfile b "$f2" '.scenarios[0].runs[3] | del(.boot) == $b[0].scenarios[0].runs[0]' "$p"
	# a scenario that failed in boot 2 fails the pool, which says where;
	# one incomplete report makes the pool incomplete
	jq '.complete = false | (.scenarios[] | select(.name == "hog")) |=
		(.status = "failed" | .reason = "mpctl stress exited with status 1")' \
		"$f2" > "$BATS_TEST_TMPDIR/2f.json"
	run -0 "$MPCTL_BIN" report --pool "$f1" "$BATS_TEST_TMPDIR/2f.json" --json
	jq -e '.complete == false and (.scenarios[] | select(.name == "hog") |
		.status == "failed" and .reason == "boot 2: mpctl stress exited with status 1")' <<<"$output"
	# the worst status of any boot, never hidden by an earlier skip;
	# boot 1's reason says its boot as well
	jq '(.scenarios[] | select(.name == "hog")) |=
		(.status = "skipped" | .reason = "needs a swap")' \
		"$f1" > "$BATS_TEST_TMPDIR/1s.json"
	run -0 "$MPCTL_BIN" report --pool "$BATS_TEST_TMPDIR/1s.json" \
		"$BATS_TEST_TMPDIR/2f.json" "$f3" --json
	jq -e '.scenarios[] | select(.name == "hog") | .status == "failed" and
		.reason == "boot 2: mpctl stress exited with status 1"' <<<"$output"
	run -0 "$MPCTL_BIN" report --pool "$BATS_TEST_TMPDIR/2f.json" "$f1" --json
	jq -e '.scenarios[] | select(.name == "hog") | .status == "failed" and
		.reason == "boot 1: mpctl stress exited with status 1"' <<<"$output"
	# every boot "ok": no reason
	run -0 "$MPCTL_BIN" report --pool "$f1" "$f3" --json
	jq -e '[.scenarios[] | .status == "ok" and (has("reason") | not)] | all' <<<"$output"
}

@test "report --pool: what cannot be pooled is one line and 65, a missing report 66" {
	local f1=$FIX/report-vm612-1.json f2=$FIX/report-vm612-2.json
	run -0 "$MPCTL_BIN" report --pool "$f1" "$f2" --json -o "$BATS_TEST_TMPDIR/p.json"
	run -65 "$MPCTL_BIN" report --pool "$BATS_TEST_TMPDIR/p.json" "$f1"
	assert_output "mpctl report: '$BATS_TEST_TMPDIR/p.json' is pooled already: pool the reports of single boots"
	jq 'del(.scenarios[] | select(.name == "hog"))' "$f2" > "$BATS_TEST_TMPDIR/nohog.json"
	run -65 "$MPCTL_BIN" report --pool "$f1" "$BATS_TEST_TMPDIR/nohog.json"
	assert_output "mpctl report: '$BATS_TEST_TMPDIR/nohog.json' has 4 scenarios, '$f1' 5: the reports to pool have the same scenarios"
	jq '(.scenarios[] | select(.name == "hog")).name = "hog2"' "$f2" > "$BATS_TEST_TMPDIR/hog2.json"
	run -65 "$MPCTL_BIN" report --pool "$f1" "$BATS_TEST_TMPDIR/hog2.json"
	assert_output "mpctl report: '$BATS_TEST_TMPDIR/hog2.json' has no scenario 'hog': the reports to pool have the same scenarios"
	jq '.settings.limit_bytes = 1' "$f2" > "$BATS_TEST_TMPDIR/limit.json"
	run -65 "$MPCTL_BIN" report --pool "$f1" "$BATS_TEST_TMPDIR/limit.json"
	# --compare's hint, not --pool's (it has no --force)
	assert_output "mpctl report: the reports did not measure the same thing: limit_bytes 134217728 -> 1"
	jq '.system.kernel_release = "6.1.0"' "$f2" > "$BATS_TEST_TMPDIR/k.json"
	run -65 "$MPCTL_BIN" report --pool "$f1" "$BATS_TEST_TMPDIR/k.json"
	assert_output "mpctl report: '$f1' and '$BATS_TEST_TMPDIR/k.json' ran on other kernels: pool the boots of one kernel"
	run -66 "$MPCTL_BIN" report --pool "$f1" "$BATS_TEST_TMPDIR/none.json"
	assert_output --partial "cannot open '$BATS_TEST_TMPDIR/none.json'"
	run -64 "$MPCTL_BIN" report --pool
	assert_output --partial "mpctl report: --pool needs the reports to pool"
	run -64 "$MPCTL_BIN" report --pool --compare "$f1" "$f2"
	assert_output --partial "mpctl report: --pool takes no --compare, --input or --scenario"
	[ ! -e "$BATS_TEST_TMPDIR/none.json" ]
}

@test "report --compare: dropped notifications are a regression, exit 1" {
	# the "regressed" run was made with --stress-arg=--high=off: told so,
	# --compare refuses it (65) and names the difference
	mpctl report --compare "$FIX/report-base.json" "$FIX/report-regressed.json"
	[ "$status" -eq 65 ]
	assert_output --partial 'did not measure the same thing (--force compares them anyway): stress_args [] -> ["--high=off"]'
	# its OOM-killed runs leave two samples of some metrics: no verdict
	# there, which is said, but a regression is 1 whatever else is
	# unsure (a CI that reruns on 65 must not lose it)
	mpctl report --compare --force "$FIX/report-base.json" "$FIX/report-regressed.json"
	[ "$status" -eq 1 ]
	assert_output --partial "too few runs for a verdict on"
	assert_output --regexp '[1-9][0-9]* regression\(s\), [0-9]+ improvement\(s\), [1-9][0-9]* unsure'
	# and whatever NEW lacks: a scenario gone is said, the regression wins
	jq 'del(.scenarios[] | select(.name == "hog"))' \
		"$FIX/report-regressed.json" > "$BATS_TEST_TMPDIR/nohog.json"
	mpctl report --compare --force "$FIX/report-base.json" "$BATS_TEST_TMPDIR/nohog.json"
	[ "$status" -eq 1 ]
	assert_output --partial "lacks scenarios that ran in"
	mpctl report --compare --force --allow-unsure "$FIX/report-base.json" "$FIX/report-regressed.json"
	[ "$status" -eq 1 ]
	# its first OOM kill: a regression whatever the rank test says
	assert_line --regexp '^shrinker +oom_kills +lower .* WORSE$'
	assert_line "shrinker: an OOM kill in NEW where no BASE run had one is a regression, whatever the test says"
	assert_output --regexp '[1-9][0-9]* regression\(s\)'
	mpctl report --compare --force --allow-unsure --json "$FIX/report-base.json" "$FIX/report-regressed.json"
	[ "$status" -eq 1 ]
	echo "$output" | jq -e '
		.schema.name == "mpctl-report-compare" and .schema.version == 2 and
		.test == "mann-whitney-u" and .alpha == 0.05 and
		.regressions >= 1 and
		(.rows | all(has("scenario") and has("metric") and has("better") and
			has("base") and has("new") and has("delta") and
			has("shift") and has("p_value") and has("p_min") and
			has("alpha") and has("samples") and has("base_boots") and
			has("boot_interval") and has("min_effect_pct") and
			has("min_effect") and has("mde") and has("mde_pct") and
			has("verdict"))) and
		(.rows[] | select(.metric == "oom_kills" and
			.scenario == "shrinker") | .verdict == "worse" and
			.rule == "oom") and
		(.rows[] | select(.metric == "reclaim_requests" and
			.scenario == "shrinker") | .verdict == "info")'
}

@test "report --compare: one OOM kill in one of three runs is a regression" {
	cd "$BATS_TEST_TMPDIR"
	jq '(.scenarios[] | select(.name == "shrinker") | .runs[1].oom_kills) = 1 |
		del(.scenarios[].metrics.oom_kills)' "$FIX/report-base.json" > onekill.json
	mpctl report --compare "$FIX/report-base.json" onekill.json
	assert_failure 1
	assert_line --regexp '^shrinker +oom_kills +lower .* WORSE$'
}

@test "report --compare: a skipped scenario or a dropped metric in NEW is 65 with the names" {
	cd "$BATS_TEST_TMPDIR"
	# stress-ng missing in NEW: the hog scenario skipped
	jq '(.scenarios[] | select(.name == "hog")) |= (.status = "skipped" |
		.reason = "no stress-ng" | .runs = [] | del(.metrics))' \
		"$FIX/report-base.json" > skipped.json
	mpctl report --compare "$FIX/report-base.json" skipped.json
	assert_failure 65
	assert_line "mpctl report: 'skipped.json' lacks scenarios that ran in '$FIX/report-base.json': hog"
	# a metric gone from every run of NEW
	jq 'del(.scenarios[].runs[].alloc_throughput_bytes_per_s) |
		del(.scenarios[].metrics.alloc_bytes_per_s)' "$FIX/report-base.json" > nometric.json
	mpctl report --compare "$FIX/report-base.json" nometric.json
	assert_failure 65
	assert_output --partial "lacks metrics of '$FIX/report-base.json': shrinker/alloc_bytes_per_s, hog/alloc_bytes_per_s"
	run --separate-stderr "$MPCTL_BIN" report --compare --json \
		"$FIX/report-base.json" nometric.json
	assert_failure 65
	echo "$output" | jq -e '.missing_metrics | index("hog/alloc_bytes_per_s") != null'
}

@test "report --compare: a kernel that stopped asking (no requests, so no request latency) is a regression, not missing data" {
	cd "$BATS_TEST_TMPDIR"
	# both sides' metrics computed by this mpctl from their runs
	jq 'del(.scenarios[].metrics)' "$FIX/report-base.json" > base.json
	# what compare-kernels.sh's noaskfirst demo does to the scenario:
	# no request in any run of NEW, so nothing measured per request
	jq '(.scenarios[] | select(.name == "shrinker") | .runs[]) |=
		(.reclaim_requests = 0 | .chunks_freed = 0 | del(.reclaim_latency))' \
		base.json > noask.json
	run --separate-stderr "$MPCTL_BIN" report --compare --json base.json noask.json
	assert_failure 1
	echo "$output" | jq -e '(.missing_metrics | length == 0) and
		([.rows[] | select(.scenario == "shrinker" and .rule == "none")] |
		 (map(.metric) | sort == ["chunks_per_request",
			"request_latency_p50_ns", "request_latency_p99_ns"]) and
		 all(.per == "reclaim_requests" and .new == null) and
		 (map(select(.verdict == "worse")) | map(.metric) ==
			["chunks_per_request"]))'
	mpctl report --compare base.json noask.json
	assert_failure 1
	assert_line "shrinker: chunks_per_request not measured in NEW, which had no reclaim_requests in any run: BASE did what NEW no longer does"
	# the same metrics gone while NEW did make requests: missing data, 65
	jq '(.scenarios[] | select(.name == "shrinker") | .runs[]) |=
		del(.reclaim_latency)' base.json > nolat.json
	mpctl report --compare base.json nolat.json
	assert_failure 65
	assert_output --partial "lacks metrics of 'base.json': shrinker/request_latency_p50_ns, shrinker/request_latency_p99_ns"
}

@test "report --compare: too few runs for a verdict is 65 unless --allow-unsure, even 0 -> 50 OOM kills" {
	cd "$BATS_TEST_TMPDIR"
	jq '.scenarios |= map(.runs |= .[:1]) | del(.scenarios[].metrics)' \
		"$FIX/report-base.json" > one.json
	jq '.scenarios |= map(.runs |= (.[:1] | map(.oom_kills = 50)))
		| del(.scenarios[].metrics)' "$FIX/report-base.json" > one50.json
	mpctl report --compare one.json one.json
	assert_failure 65
	assert_output --partial "too few runs for a verdict on"
	assert_output --partial "--allow-unsure"
	mpctl report --compare --allow-unsure one.json one.json
	assert_success
	# the OOM rule needs no rank test
	mpctl report --compare --allow-unsure one.json one50.json
	assert_failure 1
	assert_line --regexp '^shrinker +oom_kills .* WORSE$'
}

@test "report --compare: the regressions first, one line each in LKP's words, and in the JSON" {
	pool_r_base
	mpctl report --compare "$BATS_TEST_TMPDIR/base.json" \
		"$FIX/report-vm612-R-dropped.json"
	assert_failure 1
	# the headlines, then a blank line, then the table
	assert_line --index 0 --regexp '^-9[0-9]\.[0-9]% regression of kernel-shrinker\.chunks_freed \(6\.12\.118 -> 6\.12\.118\), above a [0-9]+\.[0-9]% minimum effect, p=0\.0[0-9]+$'
	n=$(printf '%s\n' "$output" | sed -n '/^base /q; /regression of\|^new OOM kills/p' | wc -l)
	[ "$n" -ge 1 ]
	mpctl report --compare --json "$BATS_TEST_TMPDIR/base.json" \
		"$FIX/report-vm612-R-dropped.json"
	assert_failure 1
	# one per regression, saying what its row says
	echo "$output" | jq -e '(.headline | length) == .regressions and
		.regressions == '"$n"' and
		(.rows | map(select(.verdict == "worse"))) as $w |
		all(.headline[]; . as $h | $w | any(.scenario == $h.scenario and
			.metric == $h.metric and .delta_pct == $h.delta_pct and
			.p_value == $h.p_value)) and
		(.headline[0] as $h | $h.text |
			startswith("\($h.delta_pct)% regression of kernel-shrinker.chunks_freed"))'
	# none without a regression
	mpctl report --compare --json "$BATS_TEST_TMPDIR/base.json" \
		"$FIX/report-vm612-R-control.json"
	assert_success
	echo "$output" | jq -e '.headline == []'
}

@test "report --compare: beside each verdict, the reclaim counters that moved most" {
	cd "$BATS_TEST_TMPDIR"
	# six runs a side; NEW frees 30% fewer chunks while direct reclaim
	# scans four times as much, in the host and in the cgroup
	mk() {
		jq -n --argjson f "$1" --argjson s "$2" '{
			schema: {name: "mpctl-report", version: 1},
			scenarios: [{name: "kernel-shrinker", status: "ok",
				runs: [range(6) | {chunks_freed: ($f + .),
					vmstat: {pgscan_direct: ($s + .), pswpout: 10,
						oom_kill: 0},
					cgroup_counters: {memory_stat: {pgscan: ($s * 2)},
						memory_events: {}}}]}]}'
	}
	mk 1000 100 > base.json
	mk 700 400 > new.json
	mpctl report --compare --threshold 5 base.json new.json
	assert_failure 1
	assert_line --regexp '^kernel-shrinker +chunks_freed .* WORSE$'
	assert_line --regexp '^ +counters that moved most: cg_pgscan 200 -> 800 \(\+300\.0%\), vmstat_pgscan_direct 102\.5 -> 402\.5 \(\+292\.7%\)$'
	# shown as info rows, never judged
	assert_line --regexp '^kernel-shrinker +vmstat_pgscan_direct .* info$'
	mpctl report --compare --threshold 5 --json base.json new.json
	echo "$output" | jq -e '.regressions == 1 and
		(.rows[] | select(.metric == "chunks_freed") | .counters |
			map(.metric) == ["cg_pgscan", "vmstat_pgscan_direct"]) and
		([.rows[] | select(.metric | test("^(vmstat|cg)_")) | .verdict] |
			unique == ["info"])'
}

@test "report --compare: summaries are the runs': one that disagrees is refused, one without samples is missing" {
	cd "$BATS_TEST_TMPDIR"
	# ten OOM kills in every run of NEW, its summary left saying none
	jq '(.scenarios[] | select(.name == "shrinker") | .runs[].oom_kills) = 10' \
		"$FIX/report-base.json" > lying.json
	mpctl report --compare --allow-unsure "$FIX/report-base.json" lying.json
	assert_failure 65
	assert_output "mpctl report: 'lying.json': scenario 'shrinker': the summary of 'oom_kills' disagrees with its runs (median 0, the runs give 10)"
	# summarized again from its runs, it is the regression it is
	jq 'del(.scenarios[].metrics)' lying.json > told.json
	mpctl report --compare --allow-unsure "$FIX/report-base.json" told.json
	assert_failure 1
	assert_line --regexp '^shrinker +oom_kills .* WORSE$'
	# a metric in NEW's summary with no samples: its row was dropped
	# without a word; the runs have it, and say otherwise
	jq '(.scenarios[] | select(.name == "shrinker") | .metrics.chunks_freed) =
		{median: 700, samples: []}' "$FIX/report-base.json" > nosamples.json
	mpctl report --compare --allow-unsure "$FIX/report-base.json" nosamples.json
	assert_failure 65
	assert_output "mpctl report: 'nosamples.json': scenario 'shrinker': the summary of 'chunks_freed' disagrees with its runs (median 700, the runs give 770)"
	# and in none of its runs either: a metric NEW lacks
	jq '(.scenarios[] | select(.name == "shrinker")) |= (.runs[] |= del(.chunks_freed))' \
		nosamples.json > none.json
	mpctl report --compare --allow-unsure "$FIX/report-base.json" none.json
	assert_failure 65
	assert_output --partial "lacks metrics of '$FIX/report-base.json': shrinker/chunks_freed"
}

@test "report --compare: a scenario without a name, or two of one name, is refused" {
	cd "$BATS_TEST_TMPDIR"
	jq '(.scenarios[] | select(.name == "shrinker")) |= del(.name)' \
		"$FIX/report-base.json" > nameless.json
	mpctl report --compare nameless.json "$FIX/report-base.json"
	assert_failure 65
	assert_output "mpctl report: 'nameless.json': scenario 2 has no name"
	mpctl report --compare "$FIX/report-base.json" nameless.json
	assert_failure 65
	jq '.scenarios[1].name = "hog"' "$FIX/report-base.json" > twice.json
	mpctl report --compare twice.json "$FIX/report-base.json"
	assert_failure 65
	assert_output "mpctl report: 'twice.json': two scenarios are named 'hog'"
}

@test "report --compare: the backend that ran is a parameter (auto chose memcg in one, psi in the other)" {
	cd "$BATS_TEST_TMPDIR"
	jq '(.scenarios[] | select(.name == "hog") | .runs[].backend) = "psi"' \
		"$FIX/report-base.json" > psi.json
	jq -e '[.scenarios[] | select(.name == "hog") | .runs[].parameters.backend] |
		unique == ["auto"]' psi.json
	mpctl report --compare "$FIX/report-base.json" psi.json
	assert_failure 65
	assert_output --partial 'hog: backend "memcg" -> "psi"'
	mpctl report --compare --force --allow-unsure "$FIX/report-base.json" psi.json
	assert_success
}

@test "report --compare --noise: spreads beyond 1000%, unknown metrics and scenarios are refused" {
	cd "$BATS_TEST_TMPDIR"
	profile() {
		jq -n --argjson n "$1" '{schema: {name: "mpctl-noise-profile",
			version: 1}, noise: $n}' > np.json
	}
	profile '{"shrinker": {"chunks_freed": 5}, "kernel-shrinker@lru_gen=n": {"chunks_freed": 5}}'
	mpctl report --compare --allow-unsure --noise np.json \
		"$FIX/report-base.json" "$FIX/report-same.json"
	assert_success
	profile '{"shrinker": {"chunks_freed": 1e9}}'
	mpctl report --compare --noise np.json "$FIX/report-base.json" "$FIX/report-same.json"
	assert_failure 65
	assert_output "mpctl report: 'np.json': noise of shrinker chunks_freed is not a percentage from 0 to 1000"
	profile '{"shrinker": {"chunk_freed": 5}}'
	mpctl report --compare --noise np.json "$FIX/report-base.json" "$FIX/report-same.json"
	assert_failure 65
	assert_output "mpctl report: 'np.json': noise of shrinker: no metric is named 'chunk_freed'"
	profile '{"shrinkr": {"chunks_freed": 5}}'
	mpctl report --compare --noise np.json "$FIX/report-base.json" "$FIX/report-same.json"
	assert_failure 65
	assert_output "mpctl report: 'np.json': noise of 'shrinkr': no such scenario (see --list)"
}

@test "report --compare: reports of another limit or chunk are refused unless --force" {
	cd "$BATS_TEST_TMPDIR"
	jq '.settings.limit_bytes = 268435456' "$FIX/report-base.json" > limit.json
	mpctl report --compare "$FIX/report-base.json" limit.json
	assert_failure 65
	assert_output --partial "limit_bytes 134217728 -> 268435456"
	jq '(.scenarios[] | select(.name == "shrinker") | .runs[].parameters.chunk_bytes) = 2097152' \
		"$FIX/report-base.json" > chunk.json
	mpctl report --compare "$FIX/report-base.json" chunk.json
	assert_failure 65
	assert_output --partial "shrinker: parameters.chunk_size_bytes 1048576 -> 2097152"
	mpctl report --compare --force "$FIX/report-base.json" limit.json
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
}

@test "report --compare: another --free or populate is refused; a report from before them is reuse, populated" {
	cd "$BATS_TEST_TMPDIR"
	# the fixture predates the two keys: stating the defaults changes nothing
	jq '(.scenarios[] | select(.name == "shrinker") | .runs[].parameters) +=
		{free: "reuse", populate: true}' "$FIX/report-base.json" > reuse.json
	mpctl report --compare --allow-unsure "$FIX/report-base.json" reuse.json
	[ "$status" -eq 0 ]
	jq '(.scenarios[] | select(.name == "shrinker") | .runs[].parameters.free) =
		"munmap"' "$FIX/report-base.json" > munmap.json
	mpctl report --compare "$FIX/report-base.json" munmap.json
	assert_failure 65
	assert_output --partial 'shrinker: parameters.free "reuse" -> "munmap"'
	jq '(.scenarios[] | select(.name == "shrinker") | .runs[].parameters.populate) =
		false' "$FIX/report-base.json" > touch.json
	mpctl report --compare "$FIX/report-base.json" touch.json
	assert_failure 65
	assert_output --partial 'shrinker: parameters.populate true -> false'
}

@test "report --compare: runs with --lazyfree are not compared with runs without; a report from before it is without" {
	cd "$BATS_TEST_TMPDIR"
	# the fixture predates the key: false changes nothing, true does
	jq '(.scenarios[] | select(.name == "shrinker") | .runs[].parameters) +=
		{lazyfree: false}' "$FIX/report-base.json" > eager.json
	mpctl report --compare --allow-unsure "$FIX/report-base.json" eager.json
	[ "$status" -eq 0 ]
	jq '(.scenarios[] | select(.name == "shrinker") | .runs[].parameters) +=
		{lazyfree: true}' "$FIX/report-base.json" > lazy.json
	mpctl report --compare "$FIX/report-base.json" lazy.json
	assert_failure 65
	assert_output --partial 'shrinker: parameters.lazyfree false -> true'
	mpctl report --compare "$FIX/report-base.json" lazy.json --force --allow-unsure
	[ "$status" -eq 0 ]
}

@test "report --compare: alloc_latency_p99_ns is judged, p50 and max are info; absent on both sides is no gap" {
	cd "$BATS_TEST_TMPDIR"
	# the fixtures have no alloc_latency: no row and nothing missing
	mpctl report --compare --allow-unsure --json "$FIX/report-base.json" \
		"$FIX/report-base.json"
	assert_success
	echo "$output" | jq -e '([.rows[] | select(.metric | startswith("alloc_latency"))] |
		length == 0) and (.missing_metrics | length == 0)'
	# the stress runs given an allocation latency, summarized again; NEW's
	# p99 ten times BASE's in every run
	jq '(.scenarios[] | select(.name != "listen-latency")) |= del(.metrics) |
		(.scenarios[] | select(.name == "shrinker") | .runs) |=
		[to_entries[] | .value + {alloc_latency: {count: 1000,
			p50_ns: (400000 + .key * 1000),
			p99_ns: (8000000 + .key * 100000),
			max_ns: (20000000 + .key * 100000), mean_ns: 1000000,
			over_500ms: 0}}]' "$FIX/report-base.json" > base.json
	jq '(.scenarios[] | select(.name == "shrinker") | .runs[].alloc_latency.p99_ns) *= 10' \
		base.json > slow.json
	mpctl report --input base.json --json
	assert_success
	echo "$output" | jq -e '.scenarios[] | select(.name == "shrinker") |
		.metrics.alloc_latency_p99_ns.median == 8100000 and
		.metrics.alloc_latency_p50_ns.n == 3 and
		.metrics.alloc_latency_max_ns.n == 3'
	mpctl report --compare --allow-unsure --threshold 10 --json base.json slow.json
	echo "$output" | jq -e '[.rows[] | select(.scenario == "shrinker")] as $r |
		($r[] | select(.metric == "alloc_latency_p99_ns") | .verdict == "worse" and .better == "lower") and
		($r[] | select(.metric == "alloc_latency_p50_ns") | .verdict == "info") and
		($r[] | select(.metric == "alloc_latency_max_ns") | .verdict == "info")'
	assert_failure 1
	# BASE has it, NEW lost it: a missing metric, as for any other
	jq '(.scenarios[] | select(.name == "shrinker") | .runs[]) |= del(.alloc_latency)' \
		base.json > lost.json
	mpctl report --compare --allow-unsure base.json lost.json
	[ "$status" -ne 0 ]
	assert_output --partial "'lost.json' lacks metrics of 'base.json': shrinker/alloc_latency_p50_ns, shrinker/alloc_latency_p99_ns, shrinker/alloc_latency_max_ns"
}

@test "report --compare: requests half as big, twice as many, are no improvement" {
	cd "$BATS_TEST_TMPDIR"
	# the same chunks freed at the same speed per chunk; each request half
	# as big, so twice as many and half as long each
	# the stress scenarios' summaries made again from the runs, both sides
	jq '(.scenarios[] | select(.name != "listen-latency")) |= del(.metrics)' \
		"$FIX/report-base.json" > base.json
	jq '(.scenarios[] | select(.name == "shrinker") | .runs[]) |=
		(.reclaim_requests *= 2 |
		 .reclaim_latency |= with_entries(if (.value | type) == "number"
			and .key != "count" then .value /= 2 else . end))' \
		base.json > halved.json
	# one boot's base keeps a 50% minimum effect; a pooled base has 5%
	mpctl report --compare --threshold 10 --json base.json halved.json
	assert_failure 1
	echo "$output" | jq -e '
		[.rows[] | select(.scenario == "shrinker")] as $r |
		($r[] | select(.metric == "reclaim_requests") | .verdict == "info") and
		($r[] | select(.metric == "chunks_per_request") | .verdict == "worse") and
		($r[] | select(.metric == "request_latency_p50_ns") | .verdict == "info") and
		([$r[] | select(.verdict == "better")] | length == 0)'
}

@test "report --compare: a 6.12 that drops shrinker requests is flagged, a third real run is not" {
	# recorded by "make regression-demo" (compare-kernels.sh -R -C 6.12
	# 6.12), timelines removed: the base is two boots of the patched 6.12
	# pooled, "dropped" a 6.12 built with a test-only patch that drops three
	# shrinker requests out of four, "control" a third boot of the real one
	jq -e '.system.kernel_release == "6.12.118"' "$FIX/report-vm612-R-dropped.json"
	pool_r_base
	jq -e '[.scenarios[] | select(.status == "ok") | .metrics[] |
		.boot_medians | length == 2] | all' "$BATS_TEST_TMPDIR/base.json"
	mpctl report --compare "$BATS_TEST_TMPDIR/base.json" \
		"$FIX/report-vm612-R-dropped.json"
	[ "$status" -eq 1 ]
	# requests are shown, not judged: their number moves with their size
	assert_line --regexp '^kernel-shrinker +reclaim_requests +higher .* info$'
	assert_line --regexp '^kernel-shrinker +chunks_freed +higher .* WORSE$'
	# only the scenario in which the kernel asks: with the early warning
	# the kernel never asks, so the others must not change
	run grep -E 'WORSE$' <<< "$output"
	refute_line --regexp '^(listen-latency|shrinker|hog|overcommit|emulated) '
	mpctl report --compare "$BATS_TEST_TMPDIR/base.json" \
		"$FIX/report-vm612-R-control.json"
	assert_success
	assert_output --partial '0 regression(s)'
}

@test "report --compare --noise: a change within the spread boots of one kernel showed is no verdict; bad profiles are 65" {
	local np=$BATS_TEST_TMPDIR/noise.json
	pool_r_base
	mpctl report --compare --json "$BATS_TEST_TMPDIR/base.json" \
		"$FIX/report-vm612-R-dropped.json"
	[ "$status" -eq 1 ]
	# the drop's change in chunks freed, in percent of the base
	pct=$(echo "$output" | jq '.rows[] | select(.scenario == "kernel-shrinker" and
		.metric == "chunks_freed" and .verdict == "worse") | .delta_pct | fabs')
	[ -n "$pct" ]
	# a profile in which boots of one kernel landed twice that far apart
	jq -n --argjson p "$pct" '{schema: {name: "mpctl-noise-profile", version: 1},
		kernels: {"6.12.118": 10},
		noise: {"kernel-shrinker": {chunks_freed: (2 * $p + 1)}}}' >"$np"
	mpctl report --compare --json --noise "$np" \
		"$BATS_TEST_TMPDIR/base.json" "$FIX/report-vm612-R-dropped.json"
	echo "$output" | jq -e '.rows[] | select(.scenario == "kernel-shrinker" and
		.metric == "chunks_freed") | .verdict == "same" and .noise_profile_pct > 0 and
		.mde_pct >= .noise_profile_pct'
	# rows the profile says nothing of keep their verdicts, and no noise
	echo "$output" | jq -e '[.rows[] | select(.scenario != "kernel-shrinker")] |
		all(.noise_profile_pct == null)'
	# a profile of small spreads changes nothing
	jq '.noise["kernel-shrinker"].chunks_freed = 0.1' "$np" >"$np.small"
	mpctl report --compare --noise "$np.small" \
		"$BATS_TEST_TMPDIR/base.json" "$FIX/report-vm612-R-dropped.json"
	[ "$status" -eq 1 ]
	assert_line --regexp '^kernel-shrinker +chunks_freed +higher .* WORSE$'
	# not a profile: a report, a negative spread, no such file
	mpctl report --compare --noise "$FIX/report-vm612-R-base.json" \
		"$BATS_TEST_TMPDIR/base.json" "$FIX/report-vm612-R-dropped.json"
	[ "$status" -eq 65 ]
	assert_output "mpctl report: '$FIX/report-vm612-R-base.json' is not a noise profile (schema mpctl-noise-profile version 1)"
	jq '.noise.hog.hog_bogo_ops = -1' "$np" >"$np.neg"
	mpctl report --compare --noise "$np.neg" \
		"$BATS_TEST_TMPDIR/base.json" "$FIX/report-vm612-R-dropped.json"
	[ "$status" -eq 65 ]
	assert_output "mpctl report: '$np.neg': noise of hog hog_bogo_ops is not a percentage from 0 to 1000"
	mpctl report --compare --noise "$BATS_TEST_TMPDIR/none.json" \
		"$BATS_TEST_TMPDIR/base.json" "$FIX/report-vm612-R-dropped.json"
	[ "$status" -eq 66 ]
	[ "${#lines[@]}" -eq 1 ]
	# --noise goes with --compare
	mpctl report --noise "$np" -i "$BATS_TEST_TMPDIR/base.json"
	[ "$status" -eq 64 ]
}
@test "report --compare: a threshold above every change passes" {
	mpctl report --compare --force --allow-unsure --threshold 100000 \
		"$FIX/report-base.json" "$FIX/report-regressed.json"
	# min. changes stay: only metrics past both may still trip
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
	mpctl report --compare --force --allow-unsure --threshold 100000 --json \
		"$FIX/report-base.json" "$FIX/report-regressed.json"
	echo "$output" | jq -e '.rows | all(.min_effect_pct == 100000)'
}

@test "report --compare: another schema version or name is a data error (65), a missing file 66" {
	jq '.schema.version = 2' "$FIX/report-base.json" > "$BATS_TEST_TMPDIR/v2.json"
	mpctl report --compare "$FIX/report-base.json" "$BATS_TEST_TMPDIR/v2.json"
	assert_failure 65
	assert_output --partial "has schema version 2, this mpctl reads version 1 only"
	jq '.scenarios[0].runs[0]' "$FIX/report-base.json" > "$BATS_TEST_TMPDIR/run.json"
	mpctl report --compare "$BATS_TEST_TMPDIR/run.json" "$FIX/report-base.json"
	assert_failure 65
	assert_output --regexp "is a '[a-z-]+' document, not 'mpctl-report'"
	echo '{' > "$BATS_TEST_TMPDIR/bad.json"
	mpctl report --compare "$BATS_TEST_TMPDIR/bad.json" "$FIX/report-base.json"
	assert_failure 65
	assert_output --partial "cannot parse"
	echo '{"a": 1}' > "$BATS_TEST_TMPDIR/other.json"
	mpctl report --compare "$FIX/report-base.json" "$BATS_TEST_TMPDIR/other.json"
	assert_failure 65
	assert_output --partial "is not an mpctl document (no schema)"
	jq '.scenarios = {}' "$FIX/report-base.json" > "$BATS_TEST_TMPDIR/noarr.json"
	mpctl report --compare "$FIX/report-base.json" "$BATS_TEST_TMPDIR/noarr.json"
	assert_failure 65
	mpctl report --compare /nonexistent.json "$FIX/report-base.json"
	assert_failure 66
	assert_output "mpctl report: cannot open '/nonexistent.json': No such file or directory"
	mpctl report --compare "$FIX/report-base.json" "$BATS_TEST_TMPDIR"
	assert_failure 66
	assert_output "mpctl report: cannot read '$BATS_TEST_TMPDIR': Is a directory"
}

@test "report --input and --noise: a missing file is 66, a malformed one 65" {
	local d=$BATS_TEST_TMPDIR
	echo '{' > "$d/bad.json"
	mpctl report --input "$d/none.json"
	assert_failure 66
	mpctl report --input "$d/bad.json"
	assert_failure 65
	mpctl report --input "$FIX/report-base.json" --json >/dev/null
	jq '.schema.version = 9' "$FIX/report-base.json" > "$d/v9.json"
	mpctl report --input "$d/v9.json"
	assert_failure 65
	mpctl report --compare --noise "$d/none.json" "$FIX/report-base.json" "$FIX/report-base.json"
	assert_failure 66
	mpctl report --compare --noise "$d/bad.json" "$FIX/report-base.json" "$FIX/report-base.json"
	assert_failure 65
}

# a report of one scenario "s" whose runs have chunks_freed VALUES,
# run i of boot (i / PER) + 1 (PER 0: no boot tags)
synth() {
	local per=$1
	shift
	jq -n --argjson per "$per" --argjson v "[$(IFS=,; echo "$*")]" '{
		schema: {name: "mpctl-report", version: 1},
		scenarios: [{name: "s", status: "ok",
			runs: [$v | to_entries[] | {chunks_freed: .value} +
				(if $per > 0 then {boot: ((.key / $per | floor) + 1)}
				 else {} end)]}]}'
}

@test "report --compare: 20,000 runs a side in bounded memory, as the plain definitions give" {
	# the Hodges-Lehmann shift and the minimum detectable effect select
	# among the nx * ny differences without storing them: against the
	# plain definitions (all stored, sorted) on random samples
	run "$ROOT/build/rank-check" 2000
	assert_success
	cd "$BATS_TEST_TMPDIR"
	big() {
		jq -n --argjson d "$1" '{
			schema: {name: "mpctl-report", version: 1},
			scenarios: [{name: "s", status: "ok",
				runs: [range(20000) |
					{chunks_freed: (700 + (. * 7919 % 101) + $d)}]}]}'
	}
	big 0 > base.json
	big -150 > worse.json
	# every difference stored would be 20000^2 doubles, 3.2 GB: refused
	# by the address-space limit, or minutes of sorting
	run bash -c 'ulimit -v 1000000 && exec "$0" report --compare --json "$@"' \
		"$MPCTL_BIN" --threshold 2 base.json worse.json
	[ "$status" -eq 1 ]
	echo "$output" | jq -e '.rows[0] | .metric == "chunks_freed" and
		.samples == [20000, 20000] and .shift == -150 and
		.verdict == "worse" and (.mde | type == "number")'
}

@test "report --compare: rank test, boot interval, minimum detectable effect" {
	cd "$BATS_TEST_TMPDIR"
	# three boots of three runs; one boot of three runs, 10% fewer
	synth 3 100 101 102 99 100 101 100 102 101 > base.json
	synth 0 90 91 90 > worse.json
	synth 0 101 100 102 > same.json
	mpctl report --compare --json base.json worse.json
	[ "$status" -eq 1 ]
	# 9 against 3 runs, all apart: p = 1 / C(12, 3) = 1/220
	echo "$output" | jq -e '.rows[0] | .verdict == "worse" and
		.p_value == 0.004545 and .p_min == 0.004545 and
		.samples == [9, 3] and .base_boots == 3 and
		.boot_interval > 0 and .min_effect_pct == 2 and
		.mde_pct > 0 and .mde_pct < 10 and .shift == -10'
	mpctl report --compare --json base.json same.json
	assert_success
	echo "$output" | jq -e '.rows[0] | .verdict == "same" and .p_value > 0.05'
	# the boot-to-boot spread: boots of 100, 110 and 120 do not make a
	# new boot at 125 a change, though its runs are all above the base's
	synth 3 100 100 101 110 110 111 120 120 121 > spread.json
	synth 0 125 125 126 > one.json
	mpctl report --compare --json spread.json one.json
	assert_success
	echo "$output" | jq -e '.rows[0] | .verdict == "same" and
		.p_value < 0.01 and .boot_interval > 25 and .mde > 25'
	# a value the base's runs already reached is not a change, even when
	# the boot medians agree (seen in CI: the hog scenario's two modes,
	# one boot of 6.12 all in the lower one); base_range shows the runs
	synth 3 158 148 159 158 148 159 157 160 148 > modes.json
	synth 0 148 148 148 > low.json
	synth 0 140 140 141 > lower.json
	mpctl report --compare --json modes.json low.json
	assert_success
	echo "$output" | jq -e '.rows[0] | .verdict == "same" and
		.base_range == [148, 160] and .mde >= 10'
	mpctl report --compare --json modes.json lower.json
	[ "$status" -eq 1 ]
	echo "$output" | jq -e '.rows[0].verdict == "worse"'
	# 3 against 3 runs: 0.05 at best, unsure at --alpha 0.01
	synth 0 100 101 102 > b3.json
	mpctl report --compare --alpha 0.01 --json b3.json worse.json
	assert_failure 65
	run --separate-stderr "$MPCTL_BIN" report --compare --alpha 0.01 \
		--allow-unsure --json b3.json worse.json
	assert_success
	echo "$output" | jq -e '.unsure == 1 and .rows[0].verdict == "unsure" and
		.rows[0].mde == null'
	mpctl report --compare --alpha 1 b3.json worse.json
	[ "$status" -eq 64 ]
}

@test "report --compare: nothing to compare is refused with 65, unless --allow-empty" {
	cd "$BATS_TEST_TMPDIR"
	jq '.scenarios = []' "$FIX/report-base.json" > none.json
	jq '.scenarios |= map(.status = (if .name == "hog" then "skipped"
		else "failed" end))' "$FIX/report-base.json" > failed.json
	jq '.scenarios |= map(.runs = [] | .metrics = {})' \
		"$FIX/report-base.json" > nometrics.json
	for f in none failed nometrics; do
		mpctl report --compare "$FIX/report-base.json" "$f.json"
		[ "$status" -eq 65 ]
		refute_output --partial 'regression(s)'
		mpctl report --compare --json "$f.json" "$FIX/report-base.json"
		[ "$status" -eq 65 ]
		[ -z "$(jq -c . <<< "$output" 2>/dev/null)" ] || [[ $output != *'"rows"'* ]]
	done
	mpctl report --compare "$FIX/report-base.json" none.json
	assert_output --partial "'none.json' has no scenarios"
	mpctl report --compare "$FIX/report-base.json" failed.json
	assert_output --regexp "scenario '[a-z-]+' failed"
	mpctl report --compare "$FIX/report-base.json" nometrics.json
	assert_output --partial "has no metrics"
	# told so, it compares (nothing in common: no regression)
	mpctl report --compare --allow-empty "$FIX/report-base.json" none.json
	assert_success
	assert_output --partial '0 regression(s)'
	mpctl report --compare --allow-empty --json nometrics.json "$FIX/report-base.json"
	assert_success
	echo "$output" | jq -e '.rows == []'
}

@test "report --compare: an incomplete report, a failed or a missing scenario is refused with 65" {
	cd "$BATS_TEST_TMPDIR"
	jq '.complete = false' "$FIX/report-base.json" > incomplete.json
	jq '.scenarios[0].status = "failed"' "$FIX/report-base.json" > onefailed.json
	jq '.scenarios[1].status = "interrupted"' "$FIX/report-base.json" > cut.json
	jq 'del(.scenarios[1])' "$FIX/report-base.json" > missing.json
	for f in incomplete onefailed cut missing; do
		mpctl report --compare "$FIX/report-base.json" "$f.json"
		[ "$status" -eq 65 ] || fail "$f: status $status"
	done
	mpctl report --compare "$FIX/report-base.json" incomplete.json
	assert_output --partial "is incomplete"
	mpctl report --compare "$FIX/report-base.json" missing.json
	assert_output --partial "lacks scenarios"
	# the same document compares when told so
	mpctl report --compare --allow-empty "$FIX/report-base.json" missing.json
	assert_success
	# a skipped scenario of NEW is not a failure (unprivileged, no PSI...)
	mpctl report --compare "$FIX/report-base.json" "$FIX/report-same.json"
	[ "$status" -ne 65 ]
}

@test "report --input: tables from a recorded report" {
	mpctl report --input "$FIX/report-base.json"
	assert_success
	assert_line --regexp '^kernel +[0-9]'
	assert_line --regexp '^scenario shrinker: '
	assert_output --regexp 'metric +median +min +max +spread'
	assert_output --regexp 'reclaim_requests +[0-9]'
}

@test "report --input: the columns of every table line up, however long a metric's name" {
	mpctl report --input "$FIX/report-vm612-R-base.json"
	assert_success
	# longer than the 18 columns the metric names once had
	assert_output --partial "request_latency_p50_ns"
	for sc in listen-latency shrinker hog kernel-shrinker; do
		printf '%s\n' "$output" | sed -n "/^scenario $sc:/,/^\$/p" |
			grep '^  ' | columns_line_up L R R R R
	done
	# the system's labels too
	printf '%s\n' "$output" | sed -n '2,6p' | awk '
		{ match($0, /^[a-z]+ +/); if (p && RLENGTH != p) exit 1; p = RLENGTH }'
}

@test "report --compare: the columns line up, however long a scenario's or a metric's name" {
	pool_r_base
	mpctl report --compare "$BATS_TEST_TMPDIR/base.json" \
		"$FIX/report-vm612-R-dropped.json"
	assert_failure 1
	assert_output --regexp 'kernel-shrinker +request_latency_p50_ns '
	printf '%s\n' "$output" | sed -n '/^scenario  *metric /,/^(medians/p' |
		grep -v '^(medians\|^  *counters that moved most' |
		columns_line_up L L L R R R R R R L
}

# strategies.json: report-base.json's shrinker scenario as strategy-psi,
# and with "two", its hog scenario as strategy-madv-free beside it
strategy_fixture() {
	jq --arg two "${1:-}" '.scenarios |= ([.[] | select(.name == "shrinker") |
		.name = "strategy-psi"] + if $two == "" then [] else
		[.[] | select(.name == "hog") | .name = "strategy-madv-free"] end)' \
		"$FIX/report-base.json" > "$BATS_TEST_TMPDIR/strategies.json"
}

@test "report: one strategy is the best of nothing: no star; of two, the better is starred" {
	strategy_fixture
	mpctl report --input "$BATS_TEST_TMPDIR/strategies.json"
	assert_success
	assert_line --regexp '^  psi +[0-9]'
	run grep -c '\*' < <(printf '%s\n' "$output" | sed -n '/^strategies /,/^$/p' | grep '^  ')
	assert_output 0
	strategy_fixture two
	mpctl report --input "$BATS_TEST_TMPDIR/strategies.json"
	assert_success
	assert_line --regexp '^  (psi|madv-free) .*\*'
	printf '%s\n' "$output" | sed -n '/^strategies /,/^$/p' | grep '^  ' |
		sed 's/psi some/psi_some/; s/psi full/psi_full/; s/usage avg/usage_avg/; s/alloc p99/alloc_p99/' |
		columns_line_up L R R R R R R R R R
}

@test "report --html: numbers in the units the text gives them, not %g" {
	mpctl report --input "$FIX/report-vm612-R-base.json" --html "$BATS_TEST_TMPDIR/r.html"
	assert_success
	run grep -c '<td[^>]*>[-0-9.]*e[-+][0-9]*</td>' "$BATS_TEST_TMPDIR/r.html"
	assert_output 0
	# the text's cells, as the text prints them
	mpctl report --input "$FIX/report-vm612-R-base.json"
	med=$(printf '%s\n' "$output" | sed -n '/^scenario shrinker:/,/^$/p' |
		awk '$1 == "alloc_bytes_per_s" { print $2, $3 }')
	[ -n "$med" ]
	grep -q "<td>alloc_bytes_per_s</td><td[^>]*>$med</td>" "$BATS_TEST_TMPDIR/r.html" ||
		grep -q "alloc_bytes_per_s</td><td[^>]*>$med<" "$BATS_TEST_TMPDIR/r.html"
}

@test "report --compare --markdown: the comparison as a markdown table, into a file or stdout" {
	pool_r_base
	mpctl report -q --compare --markdown "$BATS_TEST_TMPDIR/c.md" \
		"$BATS_TEST_TMPDIR/base.json" "$FIX/report-vm612-R-dropped.json"
	assert_failure 1
	assert_output ""
	md=$BATS_TEST_TMPDIR/c.md
	grep -q '^| scenario  *| metric  *| better | *base | *new |' "$md"
	grep -Eq '^\| -+ \| -+ \| -+ \| -+: \|' "$md"
	# every line of the table as wide as the header
	[ "$(grep '^|' "$md" | awk '{ print length($0) }' | sort -u | wc -l)" -eq 1 ]
	# one line per row of the JSON, the header and its rule
	mpctl report --compare --json "$BATS_TEST_TMPDIR/base.json" \
		"$FIX/report-vm612-R-dropped.json"
	rows=$(echo "$output" | jq '.rows | length')
	counters=$(echo "$output" | jq '[.rows[] | select((.counters // []) | length > 0)] | length')
	[ "$(grep -c '^|' "$md")" -eq $((rows + counters + 2)) ]
	grep -q '^| kernel-shrinker  *| chunks_freed .* | WORSE  *|$' "$md"
	grep -q '^- -9[0-9.]*% regression of kernel-shrinker.chunks_freed' "$md"
	grep -q '^[0-9]* regression(s), 0 improvement(s), 0 unsure$' "$md"
	# "-" is stdout, the text table then not printed
	mpctl report --compare --markdown - "$BATS_TEST_TMPDIR/base.json" \
		"$FIX/report-vm612-R-dropped.json"
	assert_failure 1
	diff -u "$md" <(printf '%s\n' "$output")
	# stdout holds one of them, not the markdown and the metrics mixed
	mpctl report --compare --markdown - --metrics - \
		"$BATS_TEST_TMPDIR/base.json" "$FIX/report-vm612-R-dropped.json"
	assert_failure 64
	assert_output "mpctl report: --metrics - and --markdown - both write to stdout: give one of them a file"
}

@test "report --compare --markdown: the harness README's comparison table is the tool's output" {
	pool_r_base
	mpctl report --compare --markdown - "$BATS_TEST_TMPDIR/base.json" \
		"$FIX/report-vm612-R-dropped.json"
	assert_failure 1
	diff -u <(sed -n '/^<!-- mpctl report --compare --markdown: begin -->$/,/^<!-- mpctl report --compare --markdown: end -->$/p' \
			"$ROOT/kernel-patch/README-harness.md" | sed '1d;$d') \
		<(printf '%s\n' "$output" | grep -E '^\| (scenario|-+|kernel-shrinker) ')
}

@test "report --markdown: the report's tables as markdown" {
	mpctl report --input "$FIX/report-base.json" --markdown "$BATS_TEST_TMPDIR/r.md"
	assert_success
	grep -q '^### scenario shrinker: ' "$BATS_TEST_TMPDIR/r.md"
	grep -q '^| metric  *| *median | *min | *max | *spread | *n |$' "$BATS_TEST_TMPDIR/r.md"
	grep -q '^| alloc_bytes_per_s  *| .*MiB/s |' "$BATS_TEST_TMPDIR/r.md"
}

@test "report --svg: the timelines render to a non-trivial PNG" {
	command -v rsvg-convert >/dev/null || skip "no rsvg-convert"
	mpctl report --input "$FIX/report-base.json" --svg "$BATS_TEST_TMPDIR/r.svg"
	assert_success
	n=$(jq '[.scenarios[]] | length' "$FIX/report-base.json")
	[ "$(grep -c '<g class="scenario"' "$BATS_TEST_TMPDIR/r.svg")" -eq "$n" ]
	grep -q '<polyline' "$BATS_TEST_TMPDIR/r.svg"
	grep -q 'class="request"' "$BATS_TEST_TMPDIR/r.svg"
	run rsvg-convert -o "$BATS_TEST_TMPDIR/r.png" "$BATS_TEST_TMPDIR/r.svg"
	assert_success
	read -r w h < <(png_size "$BATS_TEST_TMPDIR/r.png")
	echo "png ${w}x${h}" >&2
	[ "$w" -ge 900 ]
	[ "$h" -ge 400 ]
	# lines, bars and text: far more than a blank page compresses to
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/r.png")" -gt 20000 ]
}

# svg_panels FILE: per scenario panel of the SVG, one line each of
# "panel N", then "plot Y H" (a plot's frame), "legend Y H COLOUR" (a
# legend's 10x10 swatch), "use COLOUR" (a colour something other than a
# legend is drawn in), "usage-end Y" (the last point of the usage line,
# drawn in #1f77b4), "tick-memory LABEL" (an axis label in MiB) and
# "limit LABEL"; by the drawing's shapes and colours, not its classes
svg_panels() {
	awk '
	/<g class="scenario"/ { print "panel " ++n }
	function attr(name,   m) {
		if (match($0, " " name "=\"[^\"]*\"")) return substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 4)
		return ""
	}
	function text(   t) { t = $0; sub(/^.*">/, "", t); sub(/<.*/, "", t); return t }
	/<rect/ && attr("fill") == "#fafafa" { print "plot", attr("y"), attr("height"); next }
	/<rect/ && attr("width") == "10" && attr("height") == "10" { print "legend", attr("y"), attr("height"), attr("fill"); next }
	/<(polyline|polygon|rect|line)/ {
		if (attr("fill") ~ /^#/) print "use", attr("fill")
		if (attr("stroke") ~ /^#/) print "use", attr("stroke")
	}
	/<polyline/ && attr("stroke") == "#1f77b4" { k = split(attr("points"), p, /[ ,]+/); while (k > 0 && p[k] == "") k--; print "usage-end", p[k] }
	/<text/ && text() ~ /^[0-9.]+ MiB$/ { print "tick-memory", text() }
	/<text/ && text() ~ /^limit / { print "limit", text() }
	' "$1"
}

@test "report --svg: the limit with its value, round memory ticks, legends off the plots and only of colours drawn, no teardown slope" {
	mpctl report --input "$FIX/report-base.json" --svg "$BATS_TEST_TMPDIR/r.svg"
	assert_success
	xmllint --noout "$BATS_TEST_TMPDIR/r.svg"
	svg_panels "$BATS_TEST_TMPDIR/r.svg" > "$BATS_TEST_TMPDIR/p"
	cat "$BATS_TEST_TMPDIR/p" >&2
	# the four scenarios with a timeline (emulated has none)
	[ "$(grep -c '^limit limit 128.0 MiB$' "$BATS_TEST_TMPDIR/p")" -eq 4 ]
	awk '
	$1 == "panel" { if (plots && ticks < 3) { print "panel " n ": " ticks " memory ticks"; bad = 1 }; n = $2; ticks = plots = 0 }
	$1 == "tick-memory" { ticks++ }
	$1 == "plot" { py[++np] = $2; ph[np] = $3; plots++ }
	$1 == "legend" { ly[++nl] = $2; lh[nl] = $3 }
	END {
		if (plots && ticks < 3) { print "last panel: " ticks " memory ticks"; bad = 1 }
		for (i = 1; i <= nl; i++) for (j = 1; j <= np; j++)
			if (ly[i] < py[j] + ph[j] && ly[i] + lh[i] > py[j]) {
				print "legend at " ly[i] " on the plot at " py[j]; bad = 1 }
		exit bad
	}' "$BATS_TEST_TMPDIR/p"
	# every colour of a legend is drawn in its panel
	awk '
	$1 == "panel" { check(); delete used; delete leg; n = $2 }
	$1 == "use" { used[$2] = 1 }
	$1 == "legend" { leg[$4] = 1 }
	function check(   c) { for (c in leg) if (!(c in used)) { print "panel " n ": " c " in the legend only"; bad = 1 } }
	END { check(); exit bad }' "$BATS_TEST_TMPDIR/p"
	# the usage line ends where the run ended, not at 0 after the teardown
	awk '
	$1 == "plot" && !m { m = 1; bottom = $2 + $3 }
	$1 == "panel" { m = 0 }
	$1 == "usage-end" && $2 > bottom - 5 { print "usage ends at " $2 ", the bottom is " bottom; bad = 1 }
	END { exit bad }' "$BATS_TEST_TMPDIR/p"
}

@test "report --svg: every run drawn, a band from min to max around the median" {
	# the third run of shrinker uses twice the memory of the others
	jq '.scenarios |= [.[] | select(.name == "shrinker") |
		.runs[2].timeline |= map(.usage_bytes *= 2)]' \
		"$FIX/report-base.json" > "$BATS_TEST_TMPDIR/r.json"
	mpctl report --input "$BATS_TEST_TMPDIR/r.json" --svg "$BATS_TEST_TMPDIR/r.svg"
	assert_success
	svg_panels "$BATS_TEST_TMPDIR/r.svg" > "$BATS_TEST_TMPDIR/p"
	cat "$BATS_TEST_TMPDIR/p" >&2
	max=$(jq '[.scenarios[0].runs[].timeline[].usage_bytes] | max / 1048576' "$BATS_TEST_TMPDIR/r.json")
	top=$(awk '$1 == "tick-memory" { sub(/ MiB/, "", $0); v = $2 } END { print v }' "$BATS_TEST_TMPDIR/p")
	echo "max $max MiB, axis top $top" >&2
	awk -v m="$max" -v t="$top" 'BEGIN { exit !(t + 0 >= m + 0) }'
	[ "$(grep -c 'class="band' "$BATS_TEST_TMPDIR/r.svg")" -ge 2 ]
	grep -q '3 runs' "$BATS_TEST_TMPDIR/r.svg"
}

@test "report --html: a page with the tables and the picture" {
	mpctl report --input "$FIX/report-base.json" --html "$BATS_TEST_TMPDIR/r.html"
	assert_success
	grep -q '<!DOCTYPE html>' "$BATS_TEST_TMPDIR/r.html"
	grep -q '<table>' "$BATS_TEST_TMPDIR/r.html"
	grep -q '<svg ' "$BATS_TEST_TMPDIR/r.html"
}

@test "report: --output into a missing directory fails, 1" {
	mpctl report --input "$FIX/report-base.json" -o /nonexistent/dir/r.json
	[ "$status" -eq 1 ]
	assert_output --partial "cannot create '/nonexistent/dir/r.json"
}

@test "report: a short live run writes one document, schema checked with jq" {
	requires root jq
	mpctl report --duration 1s --repeat 2 -s shrinker -s listen-latency \
		--json -o "$BATS_TEST_TMPDIR/r.json" --svg "$BATS_TEST_TMPDIR/r.svg"
	[ "$status" -ne 69 ] || skip "no pressure interface"
	assert_success
	jq -e --arg v "$("$MPCTL_BIN" --version | awk 'NR == 1 { print $2 }')" '
		.schema == {"name": "mpctl-report", "version": 1} and
		.mpctl_version == $v and .complete == true and
		(has("interrupted_by") | not) and
		(.system.kernel_release | type == "string") and
		(.system.kernel_config.options | type == "object") and
		(.system.mem_total_bytes > 0) and
		(.system.swap_total_bytes | type == "number") and
		(.system.cgroup_mode | IN("v1", "v2", "hybrid")) and
		(.system.backends | map(.name) == ["mempressure", "memcg", "psi"]) and
		(.system.backends | all(.present | type == "boolean")) and
		.settings.repeat == 2 and .settings.duration_ns == 1000000000 and
		([.scenarios[].name] == ["listen-latency", "shrinker"]) and
		(.scenarios[] | select(.name == "shrinker") |
			.status == "ok" and (.runs | length) == 2 and
			(.runs | all(.schema.name == "mpctl-stress")) and
			(.metrics.reclaim_requests | .n == 2 and
				(.median | type == "number") and
				(.samples | length) == 2)) and
		(.scenarios[] | select(.name == "listen-latency") |
			.status == "ok" and
			(.runs | all(.schema.name == "mpctl-report-listen")))
	' "$BATS_TEST_TMPDIR/r.json"
	# no cgroup of the run is left behind
	! ls -d /sys/fs/cgroup/*/mpctl-report-* /sys/fs/cgroup/mpctl-report-* 2>/dev/null
	# two runs a side reach no verdict: accepted when told so
	mpctl report --compare --allow-unsure "$BATS_TEST_TMPDIR/r.json" \
		"$BATS_TEST_TMPDIR/r.json"
	assert_success
	if command -v rsvg-convert >/dev/null; then
		rsvg-convert -o "$BATS_TEST_TMPDIR/r.png" "$BATS_TEST_TMPDIR/r.svg"
	fi
}

@test "report: one file for two outputs is refused before anything is written" {
	local d=$BATS_TEST_TMPDIR
	cd "$d"
	echo old >x.json
	ln -s x.json lnk
	for pair in "-o x.json --svg ./x.json" "--svg lnk --html x.json" \
		"-o new.json --html $d/new.json" "-o - --svg -"; do
		mpctl report --input "$FIX/report-base.json" $pair
		assert_failure 64
		assert_line --index 0 --partial "are one file: each output needs its own"
	done
	[ "$(cat x.json)" = old ] && [ ! -e new.json ]
}

@test "report and stress: a dangling -o into a missing directory fails before the run" {
	local d=$BATS_TEST_TMPDIR
	ln -s /nonexistent/dir/f "$d/dl"
	mpctl report --input "$FIX/report-base.json" -o "$d/dl"
	assert_failure 1
	assert_output "mpctl report: cannot create '$d/dl': No such file or directory"
	# stress refuses at once, before a 10-minute run
	run timeout 20 "$MPCTL_BIN" stress --duration 10m -o "$d/dl"
	assert_failure 1
	assert_output "mpctl stress: cannot create '$d/dl': No such file or directory"
	# a dangling link into a directory that exists is created, as by >
	ln -s new "$d/dl2"
	mpctl report --input "$FIX/report-base.json" -o "$d/dl2"
	assert_success
	[ -L "$d/dl2" ] && jq -e '.schema.name == "mpctl-report"' "$d/new"
}

@test "report: -o refuses another user's symlink in a sticky world-writable directory" {
	local d=$BATS_TEST_TMPDIR
	mkdir -m 0700 "$d/private" && mkdir -m 1777 "$d/tmp"
	echo secret >"$d/private/f" && chmod 640 "$d/private/f"
	ln -s "$d/private/f" "$d/tmp/lnk"
	chown -h nobody "$d/tmp/lnk"
	for o in -o --svg --html; do
		mpctl report --input "$FIX/report-base.json" "$o" "$d/tmp/lnk"
		assert_failure 77
		assert_output --partial "refusing to follow '$d/tmp/lnk'"
	done
	[ "$(cat "$d/private/f")" = secret ]
	[ "$(stat -c %a "$d/private/f")" = 640 ]
	# a link of our own there is followed, as the kernel would
	ln -s "$d/private/f" "$d/tmp/mine"
	mpctl report --input "$FIX/report-base.json" -o "$d/tmp/mine"
	assert_success
	jq -e '.schema.name == "mpctl-report"' "$d/private/f"
	# so is another user's link in a directory that is neither
	mkdir -m 0755 "$d/plain"
	ln -s "$d/private/f" "$d/plain/lnk" && chown -h nobody "$d/plain/lnk"
	mpctl report --input "$FIX/report-base.json" -o "$d/plain/lnk"
	assert_success
	[ -L "$d/plain/lnk" ]
	[ -z "$(ls -A "$d/tmp" "$d/private" | grep '^\.')" ]
}

@test "report: the strategies as scenarios, one table, kernel ones skipped with the reason here" {
	requires root memcg jq
	local r=$BATS_TEST_TMPDIR/s.json
	mpctl report --duration 5s --repeat 2 -s strategy-none \
		-s strategy-madv-free -s strategy-psi -s strategy-kernel \
		-s strategy-kernel-munmap -o "$r"
	assert_success
	# each strategy run lasts at most 1 s, whatever --duration says
	jq -e '[.scenarios[].runs[].parameters.duration_ns] | all(. == 1000000000)' "$r"
	# none is OOM-killed (no swap), madv-free and psi survive and miss;
	# a kill after the 1 s, while the run stops, is its teardown's (and
	# on a loaded machine a run may not fill the limit in 1 s: seen with
	# a load of 10, before and after teardown kills were told apart)
	jq -e '.scenarios[] | select(.name == "strategy-none") |
		.status == "ok" and
		any(.runs[]; .oom_kills + .teardown_oom_kills >= 1)' "$r"
	jq -e '[.scenarios[] | select(.name == "strategy-madv-free" or
		.name == "strategy-psi")] | length == 2 and all(.status == "ok" and
		.metrics.oom_kills.max == 0 and .metrics.cache_misses.min > 0 and
		.metrics.cache_hit_ratio.max < 1)' "$r"
	assert_line --regexp '^strategies \(medians'
	assert_line --regexp '^  psi +\*0 '
	# the row's OOM kills are the median of the runs' (0.5 when one of
	# the two was killed in its teardown); the kill is checked above
	assert_line --regexp '^  none +[0-9.]+ '
	if awk '$1 == "mempressure" && $4 == 1 { f = 1 } END { exit !f }' \
		/proc/cgroups; then
		return 0
	fi
	assert_line --regexp "^  kernel +skipped: needs the kernel's shrinker"
	assert_line --regexp "^  kernel-munmap +skipped: needs the kernel's shrinker"
}

@test "report: strategy-reclaim-agent skipped with the reason where memory is on cgroup v1" {
	requires root memcg jq
	[ -d /sys/fs/cgroup/memory ] || skip "the memory controller is on cgroup v2"
	local r=$BATS_TEST_TMPDIR/a.json
	mpctl report --repeat 1 -s strategy-reclaim-agent -s strategy-psi \
		-o "$r"
	assert_success
	jq -e '.scenarios[] | select(.name == "strategy-reclaim-agent") |
		.status == "skipped" and (.runs | length) == 0 and
		(.reason | test("memory.reclaim.*cgroup v1"))' "$r"
	assert_line --regexp '^  reclaim-agent +skipped: needs memory.reclaim'
}

@test "report: -o, --svg and --html never replace a device node or a symlink" {
	local d=$BATS_TEST_TMPDIR
	mknod "$d/null" c 1 3
	ln -s null "$d/lnk"
	mpctl report --input "$FIX/report-base.json" -o "$d/null" \
		--svg "$d/lnk" --html "$d/lnk"
	assert_success
	[ -c "$d/null" ]
	[ -L "$d/lnk" ] && [ "$(readlink "$d/lnk")" = null ]
	# a symlink to a regular file: the file is replaced, the link stays
	echo old >"$d/real"
	chmod 640 "$d/real"
	ln -s real "$d/toreal"
	mpctl report --input "$FIX/report-base.json" -o "$d/toreal"
	assert_success
	[ -L "$d/toreal" ]
	jq -e '.schema.name == "mpctl-report"' "$d/real"
	[ "$(stat -c %a "$d/real")" = 640 ]
	# a fifo is written into
	mkfifo "$d/fifo"
	cat "$d/fifo" >"$d/fifo.out" &
	mpctl report --input "$FIX/report-base.json" -o "$d/fifo"
	assert_success
	wait
	[ -p "$d/fifo" ]
	jq -e '.schema.name == "mpctl-report"' "$d/fifo.out"
	# no temporary file is left
	[ -z "$(ls -A "$d" | grep '^\.')" ]
}

@test "report: a failure before the end leaves an existing file untouched" {
	local d=$BATS_TEST_TMPDIR
	echo data >"$d/f"
	mpctl report --input "$d/missing.json" -o "$d/f" --svg "$d/g"
	assert_failure 66
	[ ! -e "$d/g" ]
	[ "$(cat "$d/f")" = data ]
	[ -z "$(ls -A "$d" | grep '^\.')" ]
	mpctl report --input "$FIX/report-base.json" -o "$d"
	[ "$status" -eq 1 ]
	assert_output --partial "cannot write '$d'"
	mpctl report --input "$FIX/report-base.json" -o ''
	[ "$status" -eq 64 ]
}

@test "report --input: short kernel_config keys are printed, not over-read" {
	jq '.system.kernel_config.options = {"A": "y", "CONFIG_": "m",
		"CONFIG_PSI": "y", "N": 1}' "$FIX/report-base.json" \
		>"$BATS_TEST_TMPDIR/short.json"
	mpctl report --input "$BATS_TEST_TMPDIR/short.json" \
		--svg "$BATS_TEST_TMPDIR/s.svg" --html "$BATS_TEST_TMPDIR/s.html"
	assert_success
	assert_line --regexp '^config +A=y CONFIG_=m PSI=y N=\?$'
}

@test "report: SIGTERM/SIGINT stop the children, remove the cgroups, write what there is" {
	requires root memcg jq
	local d=$BATS_TEST_TMPDIR pid rc sig cg
	for sig in TERM INT; do
		rc=0
		# an odd duration names this test's children
		"$MPCTL_BIN" report --duration 37s --repeat 2 -s shrinker \
			-s listen-latency -o "$d/r.json" >"$d/out" 2>"$d/err" &
		pid=$!
		MP_PIDS+=("$pid")
		sleep 3
		kill -$sig "$pid"
		wait_exit "$pid" 20 || rc=$?
		cat "$d/err" >&2
		if [ $sig = TERM ]; then [ "$rc" -eq 143 ]; else [ "$rc" -eq 130 ]; fi
		grep -q "interrupted by SIG$sig: the report is incomplete" "$d/err"
		jq -e --arg s $sig '.complete == false and .interrupted_by == $s and
			(.scenarios | length) == 1 and
			.scenarios[0].status == "interrupted" and
			(.scenarios[0].runs | length) >= 1' "$d/r.json"
		sleep 1
		! pgrep -f 'mpctl (stress|listen) --json --duration 37000ms'
		! ls -d /sys/fs/cgroup/*/mpctl-report-$pid-* 2>/dev/null | grep .
		cg=$(jq -r '.scenarios[0].runs[0].cgroup' "$d/r.json")
		[ ! -d "$(memcg_root)$cg" ]
	done
}

@test "report: a report in which nothing ran exits 65, unless --allow-empty" {
	requires root
	! mp_have_controller mempressure || skip "a patched kernel runs kernel-shrinker"
	mpctl report -s kernel-shrinker -d 1s -r 1 --json
	assert_failure 65
	assert_line --partial "no scenario ran (every one was skipped): nothing measured (--allow-empty accepts it)"
	run --separate-stderr "$MPCTL_BIN" report -s kernel-shrinker -d 1s -r 1 \
		--json --allow-empty
	assert_success
	echo "$output" | jq -e '.scenarios[0].status == "skipped"'
}

@test "report: -q prints nothing but errors and still writes -o; -o follows -p" {
	requires jq
	local f=$BATS_TEST_TMPDIR/q.json
	mpctl report --input "$FIX/report-base.json" -q -o "$f"
	assert_success
	assert_output ""
	[ "$(wc -l <"$f")" -eq 1 ]
	mpctl report --input "$FIX/report-base.json" -p -o "$f"
	assert_success
	assert_output ""
	[ "$(wc -l <"$f")" -gt 10 ]
	mpctl report -q --compare --allow-unsure "$FIX/report-base.json" "$FIX/report-same.json"
	assert_output ""
	mpctl report -q --compare --allow-unsure --force "$FIX/report-base.json" "$FIX/report-regressed.json"
	assert_failure 1
	assert_output ""
}

@test "report: kernel-shrinker-max, -late, -noswap and -stopped in the suite; skipped with the reason without the kernel's shrinker" {
	requires root jq
	mpctl report --list
	assert_success
	for s in kernel-shrinker-max kernel-shrinker-late kernel-shrinker-noswap \
		kernel-shrinker-stopped; do
		assert_line --regexp "^$s +mpctl stress --no-assist"
	done
	assert_line --regexp '^kernel-shrinker-max .*--no-throttle'
	assert_line --regexp '^kernel-shrinker-late .*--answer-delay 50ms'
	assert_line --regexp '^kernel-shrinker-stopped .*--stop-answering 25% --cotenant'
	! mp_have_controller mempressure || skip "a patched kernel runs them"
	local r=$BATS_TEST_TMPDIR/k.json
	mpctl report -d 1s -r 1 -s kernel-shrinker-max -s kernel-shrinker-late \
		-s kernel-shrinker-noswap -s kernel-shrinker-stopped \
		--allow-empty -o "$r"
	assert_success
	jq -e '[.scenarios[] | select(.name | startswith("kernel-shrinker-"))] |
		length == 4 and all(.status == "skipped" and (.runs | length) == 0
		and .reason == "needs the kernel\u0027s shrinker (a patched kernel)")' "$r"
	assert_line --regexp '^scenario kernel-shrinker-late: .*\(0 runs, skipped\)$'
	assert_line "  needs the kernel's shrinker (a patched kernel)"
	# the standard suite (make check's comparison): all four, and no
	# strategy
	mpctl report -d 1s -r 1 -o "$r"
	[ "$status" -ne 69 ] || skip "no pressure interface"
	assert_success
	jq -e '.settings.scenarios as $s | ($s | index("kernel-shrinker-max")) and
		($s | index("kernel-shrinker-late")) and
		($s | index("kernel-shrinker-noswap")) and
		($s | index("kernel-shrinker-stopped")) and
		($s | map(select(startswith("strategy-"))) | length == 0)' "$r"
}

@test "stress --answer-delay: every request answered that late; bad values are one line and 64" {
	requires root memcg jq
	run --separate-stderr "$MPCTL_BIN" stress --json -d 2s -L 128M \
		--answer-delay 20ms
	[ "$status" -ne 69 ] || skip "no pressure interface"
	assert_success
	echo "$output" | jq -e '.parameters.answer_delay_ns == 20000000 and
		.reclaim_requests > 0 and .reclaim_latency.count > 0 and
		.reclaim_latency.mean_ns >= 20000000 and
		.reclaim_latency.p50_ns >= 19000000'
	# without it: 0, in the parameters all the same
	run --separate-stderr "$MPCTL_BIN" stress --json -d 1s -L 128M
	assert_success
	echo "$output" | jq -e '.parameters.answer_delay_ns == 0'
	local bad
	for bad in 0 -1ms 11s soon; do
		mpctl stress --answer-delay "$bad" -d 1s
		[ "$status" -eq 64 ]
		assert_line --index 0 --regexp "^mpctl stress: invalid --answer-delay '$bad': "
	done
	mpctl stress --answer-delay 1ms --strategy psi -d 1s
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: --answer-delay and --strategy exclude each other: the delay is the stress engine's, the cache answers at once"
}


@test "noise-profile.sh: boots' spread per scenario and metric, read by --noise; bad input is one line and 1, -o never replaces a symlink" {
	local np=$ROOT/kernel-patch/scripts/noise-profile.sh d=$BATS_TEST_TMPDIR/boots
	mkdir -p "$d"
	# three recorded boots of 6.12, named as compare-kernels.sh names them
	for i in 1 2 3; do
		cp "$FIX/report-vm612-$i.json" "$d/report-6.12-b-$i.json"
	done
	run "$np" "$d"
	assert_success
	echo "$output" >"$BATS_TEST_TMPDIR/p.json"
	jq -e '.schema == {name: "mpctl-noise-profile", version: 1} and
		.kernels == {"6.12.118": 3}' "$BATS_TEST_TMPDIR/p.json"
	# each spread is (max - min) / median of the three boots' medians
	want=$(jq -s '[.[] | .scenarios[] | select(.name == "shrinker") |
		.metrics.chunks_freed.median] | sort | ((.[2] - .[0]) / .[1] * 1000 | round) / 10' \
		"$d"/report-6.12-b-*.json)
	jq -e --argjson w "$want" '.noise.shrinker.chunks_freed == $w' "$BATS_TEST_TMPDIR/p.json"
	# the boots were recorded by an older mpctl, whose metric
	# alloc_throughput is alloc_bytes_per_s now: a name --compare does
	# not know is refused, not left without a word
	mpctl report --compare --allow-unsure --noise "$BATS_TEST_TMPDIR/p.json" \
		"$FIX/report-vm612-1.json" "$FIX/report-vm612-2.json"
	assert_failure 65
	assert_output --regexp "noise of [a-z-]+: no metric is named 'alloc_throughput'"
	# the metrics this mpctl compares: the profile is read
	run --separate-stderr "$MPCTL_BIN" report --compare --allow-unsure --json \
		"$FIX/report-vm612-1.json" "$FIX/report-vm612-2.json"
	jq '[.rows[].metric] | unique' <<<"$output" >"$BATS_TEST_TMPDIR/known.json"
	jq --slurpfile k "$BATS_TEST_TMPDIR/known.json" '.noise |= map_values(
		with_entries(select(.key as $m | $k[0] | index($m))))' \
		"$BATS_TEST_TMPDIR/p.json" >"$BATS_TEST_TMPDIR/p2.json"
	mpctl report --compare --allow-unsure --noise "$BATS_TEST_TMPDIR/p2.json" \
		"$FIX/report-vm612-1.json" "$FIX/report-vm612-2.json"
	[ "$status" -le 1 ]
	# no boot report; not a directory
	run "$np" "$BATS_TEST_TMPDIR"
	assert_failure 1
	assert_output "noise-profile: '$BATS_TEST_TMPDIR': no boot report (report-<kver>-b-1.json, ...)"
	run "$np" "$BATS_TEST_TMPDIR/none"
	assert_failure 1
	assert_output "noise-profile: '$BATS_TEST_TMPDIR/none': not a directory"
	# -o: a symlink stays, and so does what it points to
	echo keep >"$BATS_TEST_TMPDIR/target"
	ln -s "$BATS_TEST_TMPDIR/target" "$BATS_TEST_TMPDIR/link"
	run "$np" -o "$BATS_TEST_TMPDIR/link" "$d"
	assert_failure 1
	assert_output "noise-profile: -o '$BATS_TEST_TMPDIR/link': not a regular file, left as it is"
	[ -L "$BATS_TEST_TMPDIR/link" ] && [ "$(cat "$BATS_TEST_TMPDIR/target")" = keep ]
	run "$np" -o "$BATS_TEST_TMPDIR/out.json" "$d"
	assert_success
	cmp "$BATS_TEST_TMPDIR/out.json" "$BATS_TEST_TMPDIR/p.json"
	[ -z "$(find "$BATS_TEST_TMPDIR" -name '.noise-profile.*')" ]
	run "$np"
	[ "$status" -eq 64 ]
}

@test "qemu-cmd.sh: VMTEST_SEED starts the det guest's clock at 2026-01-01 plus the seed; a bad seed is one line" {
	run bash -c 'source "$1"; VMTEST_MODE=det VMTEST_SEED=101 mp_qemu_setup &&
		printf "%s\n" "${mp_qemu_args[@]}" "$mp_qemu_desc"' _ \
		"$ROOT/kernel-patch/scripts/qemu-cmd.sh"
	assert_success
	assert_line "base=2026-01-01T00:01:41,clock=vm"
	assert_line "det icount shift=2 smp=1 seed=101"
	# without a seed, the host's time, as before
	run bash -c 'source "$1"; VMTEST_MODE=det mp_qemu_setup &&
		printf "%s\n" "${mp_qemu_args[@]}"' _ "$ROOT/kernel-patch/scripts/qemu-cmd.sh"
	assert_line "clock=vm"
	run bash -c 'source "$1"; VMTEST_MODE=det VMTEST_SEED=x1 mp_qemu_setup' _ \
		"$ROOT/kernel-patch/scripts/qemu-cmd.sh"
	assert_failure 1
	assert_output "qemu-cmd: VMTEST_SEED='x1': 0..9999"
}
@test "compare-kernels: -L without -g is one line and 2, before anything is built or booted" {
	local o=$BATS_TEST_TMPDIR/out
	run "$ROOT/kernel-patch/scripts/compare-kernels.sh" -L kernel-shrinker \
		-o "$o" 6.12 6.12
	assert_failure 2
	assert_output "compare-kernels: -L needs -g: the scenarios run again with MGLRU the other way"
	[ ! -e "$o" ]
}

@test "compare-kernels: a bad -d, -r, -s, -L, -t or -a is one line and 2, before anything is built or booted" {
	local o=$BATS_TEST_TMPDIR/out
	run "$ROOT/kernel-patch/scripts/compare-kernels.sh" -d 3x -o "$o" 6.1 6.12
	assert_failure 2
	assert_output "compare-kernels: -d, -r, -s or -L: mpctl report: invalid --duration '3x': not a duration (e.g. 500ms, 30s, 1m30s, 1d)"
	run "$ROOT/kernel-patch/scripts/compare-kernels.sh" -r 0 -o "$o" 6.1 6.12
	assert_failure 2
	assert_output "compare-kernels: -d, -r, -s or -L: mpctl report: invalid --repeat '0': must be 1 to 100"
	run "$ROOT/kernel-patch/scripts/compare-kernels.sh" -s kernel-shrinkr -o "$o" 6.1 6.12
	assert_failure 2
	assert_output "compare-kernels: -d, -r, -s or -L: mpctl report: unknown scenario 'kernel-shrinkr' (see --list)"
	run "$ROOT/kernel-patch/scripts/compare-kernels.sh" -g y -L kernel-shrinkr -o "$o" 6.1 6.12
	assert_failure 2
	assert_output "compare-kernels: -d, -r, -s or -L: mpctl report: unknown scenario 'kernel-shrinkr' (see --list)"
	run "$ROOT/kernel-patch/scripts/compare-kernels.sh" -t five -o "$o" 6.1 6.12
	assert_failure 2
	assert_output --partial "compare-kernels: -t or -a: mpctl report: invalid --threshold 'five'"
	run "$ROOT/kernel-patch/scripts/compare-kernels.sh" -a 1 -o "$o" 6.1 6.12
	assert_failure 2
	assert_output "compare-kernels: -t or -a: mpctl report: invalid --alpha '1': must be above 0 and below 1"
	[ ! -e "$o" ]
}

@test "compare-kernels: -e with plain TCG or beyond 9500, -Z not a profile: one line and 2, nothing written" {
	local o=$BATS_TEST_TMPDIR/out
	run "$ROOT/kernel-patch/scripts/compare-kernels.sh" -M tcg -e 5 -o "$o" 6.1 6.12
	assert_failure 2
	assert_output "compare-kernels: -e needs -M det: in plain TCG a boot's timings follow the host, which no seed reproduces"
	run "$ROOT/kernel-patch/scripts/compare-kernels.sh" -e 9501 -o "$o" 6.1 6.12
	assert_failure 2
	assert_output "compare-kernels: -e '9501': at most 9500 (a boot's seed is N plus up to 499, at most 9999)"
	run "$ROOT/kernel-patch/scripts/compare-kernels.sh" -Z "$FIX/report-base.json" -o "$o" 6.1 6.12
	assert_failure 2
	assert_output "compare-kernels: -Z '$FIX/report-base.json': not a noise profile (noise-profile.sh)"
	[ ! -e "$o" ]
}

@test "compare-kernels: -E with one NEW boot or with -D is one line and 2, nothing written" {
	local o=$BATS_TEST_TMPDIR/out
	run "$ROOT/kernel-patch/scripts/compare-kernels.sh" -E 1 -n 1 -o "$o" 6.1 6.12
	assert_failure 2
	assert_output "compare-kernels: -E needs -n 2 or more: a control of NEW is compared with NEW's pooled boots"
	run "$ROOT/kernel-patch/scripts/compare-kernels.sh" -E 1 -D all -o "$o" 6.12 6.12
	assert_failure 2
	assert_output "compare-kernels: -E and -D exclude each other: -D boots the demos instead of NEW"
	[ ! -e "$o" ]
}

@test "report: a skipped scenario says 'skipped: WHY' when reached, never 'running'" {
	requires root
	! mp_have_controller mempressure || skip "a patched kernel runs kernel-shrinker"
	mpctl report -s kernel-shrinker -d 1s -r 1 --allow-empty \
		-o "$BATS_TEST_TMPDIR/k.json"
	assert_success
	assert_line "mpctl report: scenario 'kernel-shrinker': skipped: no kernel shrinker: the same as 'shrinker' here"
	refute_line --partial "running scenario 'kernel-shrinker'"
}

@test "report --metrics: per scenario its status, runs and counters; --compare its verdicts" {
	local d=$BATS_TEST_TMPDIR fmt
	requires jq
	for fmt in prometheus openmetrics; do
		mpctl report --input "$FIX/report-base.json" -q \
			--metrics "$d/r.$fmt" --metrics-format $fmt
		assert_success
		check_metrics "$d/r.$fmt" $fmt
		mpctl report -q --compare --allow-unsure --force \
			"$FIX/report-base.json" "$FIX/report-regressed.json" \
			--metrics "$d/c.$fmt" --metrics-format $fmt
		assert_failure 1
		check_metrics "$d/c.$fmt" $fmt
	done
	grep -qx 'mpctl_report_scenario_status{scenario="shrinker",status="ok"} 1' "$d/r.prometheus"
	grep -qx "mpctl_report_runs{scenario=\"shrinker\"} $(jq '.scenarios[] | select(.name == "shrinker") | .runs | length' "$FIX/report-base.json")" "$d/r.prometheus"
	want=$(jq '[.scenarios[] | select(.name == "shrinker") | .runs[].oom_kills] | add' "$FIX/report-base.json")
	grep -qx "mpctl_report_oom_kills_total{scenario=\"shrinker\"} $want" "$d/r.prometheus"
	grep -qx "mpctl_compare_regressions $(mpctl_json_compare .regressions)" "$d/c.prometheus"
	grep -qx "mpctl_compare_improvements $(mpctl_json_compare .improvements)" "$d/c.prometheus"
	grep -qx "mpctl_compare_rows{verdict=\"worse\"} $(mpctl_json_compare '[.rows[] | select(.verdict == "worse")] | length')" "$d/c.prometheus"
	# '-' is stdout, in place of the tables
	run --separate-stderr "$MPCTL_BIN" report --input "$FIX/report-base.json" --metrics -
	assert_success
	printf '%s\n' "$output" >"$d/r.out"
	check_metrics "$d/r.out"
	mpctl report --input "$FIX/report-base.json" --json --metrics -
	assert_failure 64
}

# mpctl_json_compare FILTER: FILTER on the JSON comparison of the fixtures
mpctl_json_compare() {
	"$MPCTL_BIN" report --compare --allow-unsure --force --json \
		"$FIX/report-base.json" "$FIX/report-regressed.json" 2>/dev/null |
		jq "$1"
}
