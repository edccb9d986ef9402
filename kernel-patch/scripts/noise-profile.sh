#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# noise-profile.sh - how far apart boots of one kernel land, per scenario
#                    and metric: the noise profile "mpctl report --compare
#                    --noise" reads
#
# usage: noise-profile.sh [-o FILE] DIR...
#
#   DIR     a compare-kernels.sh output directory: every boot's report
#           (report-<kver>-<b|control|n|ncontrol>-<i>.json; the pooled and
#           -L intermediate files are left out). Boots of one kernel
#           release are taken together; give one DIR per kernel, each
#           with boots of distinct seeds (compare-kernels.sh's -b, -c and
#           -n boots all take their own)
#   -o FILE write the profile to FILE (default: stdout)
#
# For each kernel, scenario and metric, the boot medians (the median of a
# boot's runs) are taken, and their spread: (max - min) / median, in
# percent. The profile keeps, per scenario and metric, the largest spread
# over the kernels: a difference between two boots that stays within it
# is what boots of one kernel already showed. A metric whose median is 0
# has no spread in percent and is left out (its metric's minimum change
# applies). Exit status: 0, 1 when a directory has no boot report, a
# report cannot be read or -o is not a regular file (left as it is), 64
# usage.
#
# The document ("mpctl-noise-profile" version 1):
#   {"schema": {"name": "mpctl-noise-profile", "version": 1},
#    "kernels": {"<kernel_release>": <boots>, ...},
#    "noise": {"<scenario>": {"<metric>": <spread %>, ...}, ...}}
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

out=
while getopts o:h opt; do
	case $opt in
	o) out=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage

files=()
for d in "$@"; do
	[ -d "$d" ] || die "'$d': not a directory"
	n=0
	for f in "$d"/report-*.json; do
		case ${f##*/} in
		*-pooled.json | *-pooled.raw.json | *.lru.json | *.merged.json) continue ;;
		*-b-[0-9]*.json | *-control-[0-9]*.json | *-n-[0-9]*.json | *-ncontrol-[0-9]*.json) ;;
		*) continue ;;
		esac
		[ -f "$f" ] || continue
		files+=("$f")
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || die "'$d': no boot report (report-<kver>-b-1.json, ...)"
done

doc=$(jq -n '
	[inputs] as $d |
	[$d[] | (.system.kernel_release // "unknown") as $k |
	 .scenarios[] | select((.status // "ok") == "ok") | .name as $s |
	 (.metrics // {}) | to_entries[] |
	 select(.value.median != null) |
	 {k: $k, s: $s, m: .key, v: .value.median}] |
	{kernels: ($d | group_by(.system.kernel_release // "unknown") |
		map({key: (.[0].system.kernel_release // "unknown"),
		     value: length}) | from_entries),
	 noise: (group_by([.k, .s, .m]) |
		map((map(.v) | sort) as $o | ($o[(($o | length) / 2) | floor]) as $med |
		    select($med != 0 and ($o | length) >= 2) |
		    {s: .[0].s, m: .[0].m,
		     p: (((($o[-1] - $o[0]) / ($med | fabs)) * 1000 | round) / 10)}) |
		group_by([.s, .m]) | map({s: .[0].s, m: .[0].m, p: (map(.p) | max)}) |
		group_by(.s) | map({key: .[0].s,
			value: (map({key: .m, value: .p}) | from_entries)}) |
		from_entries)} |
	{schema: {name: "mpctl-noise-profile", version: 1}} + .' "${files[@]}") ||
	die "cannot read the reports"
[ -n "$out" ] || { printf '%s\n' "$doc"; exit 0; }
# -o: a regular file or a new name, never a symlink or a device node; the
# profile goes to a temporary file beside it first, so that a failure
# leaves what was there
if [ -L "$out" ] || { [ -e "$out" ] && [ ! -f "$out" ]; }; then
	die "-o '$out': not a regular file, left as it is"
fi
tmp=$(mktemp "$(dirname "$out")/.noise-profile.XXXXXX") ||
	die "-o '$out': cannot write beside it"
if ! printf '%s\n' "$doc" >"$tmp" || ! mv -f "$tmp" "$out"; then
	rm -f "$tmp"
	die "-o '$out': cannot write it"
fi
