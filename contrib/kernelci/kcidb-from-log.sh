#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kcidb-from-log.sh - on a lab's host: cut the report that
#                     mpctl-report-dut.sh (or compare-kernels.sh) wrote into
#                     a test machine's console log, and make it a KCIDB
#                     document for kcidb-submit
#
# usage: kcidb-from-log.sh [-b BASE.json] [-m MPCTL] LOG OUTDIR
#                          [MPCTL REPORT OPTIONS...]
#
#   LOG      the console log (LAVA's, TuxRun's, a serial log): the lines
#            "... MPCTL-REPORT <base64>" of the first report in it, prefixed
#            by anything (a timestamp, "# ", LAVA's YAML), are decoded
#   OUTDIR   gets report.json and kcidb.json
#   -b BASE  compare BASE.json (e.g. the stock kernel's report, or last
#            release's) with it: the verdicts become the tests' statuses
#   -m FILE  the mpctl to run (default: mpctl on $PATH)
#   OPTIONS  passed to mpctl report: --kcidb-set origin=..., build_id=...,
#            patchset_hash=..., and with -b --allow-unsure, --noise, ...
#
# Then, with the lab's KCIDB credentials:
#   kcidb-submit -p PROJECT -t TOPIC < OUTDIR/kcidb.json
#
# The document is checked with /usr/bin/jsonschema against the schema in
# the tree (schema/kcidb/) when both are there. Exit status: that of
# mpctl report (with -b: of the comparison, 1 a regression), 66 when the
# log holds no report.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
schema=$here/../../schema/kcidb/schema-v5.3.json
mpctl=mpctl
base=

usage() { sed -n '7,/^set -eu/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 64; }
while getopts b:m:h opt; do
	case $opt in
	b) base=$OPTARG ;;
	m) mpctl=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
log=$1 out=$2
shift 2
[ -r "$log" ] || { echo "kcidb-from-log: cannot read '$log'" >&2; exit 66; }
mkdir -p "$out"

# the first report: its lines up to the first END
awk '/MPCTL-REPORT-END/ { exit }
     match($0, /MPCTL-REPORT [A-Za-z0-9+\/=]+[[:space:]]*$/) {
	s = substr($0, RSTART + 13); sub(/[[:space:]]+$/, "", s); print s }' \
	"$log" | base64 -d >"$out/report.json" 2>/dev/null || true
if [ ! -s "$out/report.json" ]; then
	echo "kcidb-from-log: no MPCTL-REPORT lines in '$log'" >&2
	exit 66
fi

rc=0
if [ -n "$base" ]; then
	"$mpctl" report -q --compare "$@" --kcidb "$out/kcidb.json" \
		"$base" "$out/report.json" || rc=$?
else
	"$mpctl" report -q --input "$out/report.json" "$@" \
		--kcidb "$out/kcidb.json" || rc=$?
fi
[ -s "$out/kcidb.json" ] || exit "$rc"
if [ -x /usr/bin/jsonschema ] && [ -r "$schema" ]; then
	/usr/bin/jsonschema -i "$out/kcidb.json" "$schema" || {
		echo "kcidb-from-log: '$out/kcidb.json' is not KCIDB 5.3" >&2
		exit 1
	}
fi
exit "$rc"
