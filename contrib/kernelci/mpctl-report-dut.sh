#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mpctl-report-dut.sh - run "mpctl report" in a lab's test machine (LAVA's
#                       lava-test-shell, TuxRun's commands) and leave its
#                       results where the lab collects them
#
# usage: mpctl-report-dut.sh [MPCTL REPORT OPTIONS...]
#
# Runs "mpctl report -q OPTIONS -o $OUT/report.json --kcidb $OUT/kcidb.json"
# as root, then:
#  - one test case per KCIDB test: "lava-test-case PATH --result R
#    [--measurement V --units U]" where the shell has lava-test-case (LAVA),
#    else a line "MPCTL-CASE PATH R [V U]" (TuxRun, a plain console);
#    PASS and DONE are pass, FAIL fail, SKIP skip, ERROR and MISS unknown;
#    one more case, "mpctl-report", passes when mpctl exits 0;
#  - the report into the console log, base64 between
#    "MPCTL-REPORT-BEGIN rc=N" and "MPCTL-REPORT-END", each line
#    "MPCTL-REPORT <base64>" (the format of compare-kernels.sh), from which
#    kcidb-from-log.sh makes the KCIDB document on the lab's host, with the
#    ids of the lab's build.
#
# Needs mpctl ($MPCTL, default "mpctl" on $PATH), base64, and jq for the
# per-test cases (without jq: only "mpctl-report"). Exit status: mpctl's.
set -u

MPCTL=${MPCTL:-mpctl}
OUT=${OUT:-/tmp/mpctl-kcidb}

case_() {
	if command -v lava-test-case >/dev/null 2>&1; then
		if [ $# -gt 2 ]; then
			lava-test-case "$1" --result "$2" --measurement "$3" \
				--units "$4"
		else
			lava-test-case "$1" --result "$2"
		fi
	else
		echo "MPCTL-CASE $*"
	fi
}

mkdir -p "$OUT" || exit 1
rc=0
"$MPCTL" report -q "$@" -o "$OUT/report.json" --kcidb "$OUT/kcidb.json" ||
	rc=$?

if [ -s "$OUT/kcidb.json" ] && command -v jq >/dev/null 2>&1; then
	jq -r '.tests[] | [.path,
		({"PASS": "pass", "DONE": "pass", "FAIL": "fail",
		  "SKIP": "skip"}[.status] // "unknown"),
		(.number.value // empty),
		(if .number then .number.unit // .misc.unit // "1" else empty end)] |
		join(" ")' "$OUT/kcidb.json" |
	while read -r path result value unit; do
		if [ -n "${value:-}" ]; then
			case_ "$path" "$result" "$value" "$unit"
		else
			case_ "$path" "$result"
		fi
	done
fi
if [ "$rc" = 0 ]; then
	case_ mpctl-report pass
else
	case_ mpctl-report fail
fi

if [ -s "$OUT/report.json" ]; then
	echo "MPCTL-REPORT-BEGIN rc=$rc"
	base64 -w 76 "$OUT/report.json" | sed 's/^/MPCTL-REPORT /'
	echo "MPCTL-REPORT-END"
fi
exit "$rc"
