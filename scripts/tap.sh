# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# TAP bookkeeping for scripts/check.sh (sourced; bats/check.bats tests it).
#
# tap_count FILE...  sets tap_passed, tap_failed, tap_skipped over the
#     files. A file's plans ("1..N", one per suite it holds) promise N
#     results: results missing from a plan (a suite killed half-way) are
#     failures, one each, and said on stderr. "ok ... # skip" is skipped;
#     unnumbered results ("not ok - ...") count, outside any plan.
# tap_failures FILE...  prints every failed result again with the lines
#     of diagnostics that follow it (at most 8), and every plan's missing
#     results, so that the end of a long, truncated log still says what
#     failed.
# tap_status FILE STATUS NAME  appends "not ok - NAME exited with status
#     STATUS" to FILE when the runner failed (STATUS != 0): a runner that
#     dies or fails without a "not ok" line must not pass.

# tap_plan FILE: sets plan (results its plans promise) and results (the
# numbered ones that came; "not ok - ..." lines, tap_status's and a VM
# run's, are beyond any plan)
tap_plan() {
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$1" |
		awk '{ t += $1 } END { print t + 0 }')
	results=$(grep -Ec '^(not )?ok [0-9]' "$1") || :
}

tap_count() {
	local f plan results p s n missing
	tap_passed=0 tap_failed=0 tap_skipped=0
	for f; do
		# grep -c says 0 with status 1: not an error here (set -e)
		p=$(grep -E '^ok ' "$f" | grep -vc '# skip') || :
		s=$(grep -Ec '^ok .*# skip' "$f") || :
		n=$(grep -Ec '^not ok ' "$f") || :
		tap_plan "$f"
		missing=0
		if [ "$plan" -gt "$results" ]; then
			missing=$((plan - results))
			echo "$f: $results of $plan planned results, $missing missing" >&2
		fi
		tap_passed=$((tap_passed + p))
		tap_skipped=$((tap_skipped + s))
		tap_failed=$((tap_failed + n + missing))
	done
}

tap_failures() {
	local f plan results

	for f; do
		awk -v f="${f##*/}" '
			/^not ok / { print f ": " $0; d = 8; next }
			d > 0 && /^#/ { print "    " $0; d--; next }
			{ d = 0 }' "$f"
		tap_plan "$f"
		[ "$plan" -le "$results" ] ||
			echo "${f##*/}: $((plan - results)) of $plan planned results never came"
	done
}

tap_status() {
	[ "$2" = 0 ] || echo "not ok - $3 exited with status $2" >>"$1"
}

tap_empty_dir() {
	local left

	left=$(find "$2" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null |
		sort | head -n 5 | tr '\n' ' ')
	if [ -z "$left" ]; then
		echo "ok - $3 left no temp file" >>"$1"
	else
		echo "not ok - $3 left temp files behind in $2: ${left% }" >>"$1"
	fi
}
