#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-kernel-shrinker.sh - the kernel's shrinker alone, measured in the VM
#
# usage: bench-kernel-shrinker.sh [-r RUNS] [-g y|n] [-p none|voluntary|full]
#                                 [-b "bench-v2 bench-v1"] [-T LABEL] KVER [DEBUG]
#
# Boots the patched KVER (make vmtest's kernel and initramfs) once per
# layout (cgroup v2, cgroup v1) and runs bats/vm-bench there: RUNS times
# (default 10) "mpctl stress --no-assist -b mempressure --chunk 1M
# --threads 4 --overcommit 2 --duration 10s --limit 128M", without swap and
# with the zram swap. -g sets MGLRU on or off for the runs, -p the
# preemption model (preempt= on the kernel command line).
#
# Every run becomes a line of build/bench/kernel-shrinker-KVER-FLAVOUR-TAG.jsonl;
# the summary per layout and mode (runs, runs with an OOM kill, OOM kills,
# worst swap growth and peak usage against the limit, requests, latency,
# first reclaim to first request) is printed and written next to it as
# .json. TAG names the settings, e.g. "lrugen-y.preempt-full", with
# ".det" in the deterministic mode (VMTEST_MODE=det) and ".LABEL" with -T
# (say, which kernel VMTEST_IMAGE booted). "first reclaim to first
# request" is negative when the kernel asked before it reclaimed.
# Each run also measures how long the host took the guest's vCPUs
# (bats/vm/vcpu-gap.c, "host gap"): an allocation of 500 ms or more
# counts as the guest's own stall only beyond that gap.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

runs=10 lru_gen= preempt= boots="bench-v2 bench-v1" label=
usage() {
	echo "usage: ${0##*/} [-r RUNS] [-g y|n] [-p none|voluntary|full] [-b BOOTS] [-T LABEL] KVER [DEBUG]" >&2
	exit 64
}
while getopts r:g:p:b:T: o; do
	case $o in
	r) runs=$OPTARG ;;
	g) lru_gen=$OPTARG ;;
	p) preempt=$OPTARG ;;
	b) boots=$OPTARG ;;
	T) label=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] && [ $# -le 2 ] || usage
kver=$1 debug=${2:-0}
case $runs in ''|*[!0-9]*|0) usage ;; esac
case $lru_gen in ''|y|n) ;; *) usage ;; esac
case $preempt in ''|none|voluntary|full) ;; *) usage ;; esac
case $label in *[!A-Za-z0-9_-]*) usage ;; esac
flavour=plain
[ "$debug" = 1 ] && flavour=debug

append="mpctl.runs=$runs mpctl.timeout=$((runs * 60 + 120))"
tag=lrugen-${lru_gen:-default}.preempt-${preempt:-default}
[ "${VMTEST_MODE:-}" != det ] || tag+=.det
[ -z "$label" ] || tag+=.$label
[ -z "$lru_gen" ] || append+=" mpctl.lru_gen=$lru_gen"
[ -z "$preempt" ] || append+=" preempt=$preempt"

out=$top/build/bench
mkdir -p "$out"
jsonl=$out/kernel-shrinker-$kver-$flavour-$tag.jsonl
log=$out/kernel-shrinker-$kver-$flavour-$tag.log

echo "bench-kernel-shrinker $kver/$flavour $tag: $runs runs per layout and mode, log in '$log'" >&2
rc=0
VMTEST_BOOTS=$boots VMTEST_APPEND="$append" \
	VMTEST_TIMEOUT=$(( (runs * 60 + 300) * 4 )) \
	make -C "$top" --no-print-directory vmtest KVER="$kver" DEBUG="$debug" \
	>"$log" 2>&1 || rc=$?
: >"$jsonl"
for b in $boots; do
	f=$top/build/vm-$kver/tap-$flavour-$b.raw
	[ -f "$f" ] && sed -n 's/^# BENCH //p' "$f" >>"$jsonl"
done
[ -s "$jsonl" ] || { tail -n 20 "$log" >&2; echo "bench-kernel-shrinker: no runs recorded" >&2; exit 1; }

jq -s '
	group_by(.layout + "/" + .mode) | map({
		kernel: .[0].kernel, layout: .[0].layout, mode: .[0].mode,
		lru_gen: .[0].lru_gen, preempt: .[0].preempt,
		runs: length,
		runs_with_oom_kill: map(select(.oom_kills > 0 or .exit_reason != "duration")) | length,
		oom_kills: map(.oom_kills) | add,
		max_swap_growth_pct_of_limit: (map(.swap_growth_bytes * 100 / .limit_bytes) | max),
		max_peak_pct_of_limit: (map(.peak_usage_bytes * 100 / .limit_bytes) | max),
		mean_reclaim_requests: (map(.reclaim_requests) | add / length),
		mean_chunks_freed: (map(.chunks_freed) | add / length),
		median_latency_p50_us: (map(.latency_p50_ns // empty) | sort | if length > 0 then .[length / 2 | floor] / 1000 else null end),
		max_alloc_p99_ms: (map(.alloc_p99_ns // empty) | max | if . then . / 1000000 else null end),
		max_alloc_ms: (map(.alloc_max_ns // empty) | max | if . then . / 1000000 else null end),
		allocs_over_500ms: (map(.allocs_over_500ms // 0) | add),
		max_host_gap_ms: (map(.host_gap_ns // empty) | max | if . then . / 1000000 else null end),
		runs_stalled_beyond_gap: (map(select(.stall_beyond_gap == true)) | length),
		max_latency_p99_us: (map(.latency_p99_ns // empty) | max | if . then . / 1000 else null end),
		median_first_reclaim_to_request_ms: (map(select(.first_reclaim_ms and .first_request_ms) |
			.first_request_ms - .first_reclaim_ms) | sort | if length > 0 then .[length / 2 | floor] else null end)
	})' "$jsonl" >"${jsonl%.jsonl}.json"

jq -r '.[] | "\(.kernel) \(.layout) \(.mode) lru_gen=\(.lru_gen) preempt=\(.preempt): runs \(.runs), runs with an OOM kill \(.runs_with_oom_kill) (\(.oom_kills) kills), swap growth max \(.max_swap_growth_pct_of_limit * 100 | round / 100)% of the limit, peak max \(.max_peak_pct_of_limit * 10 | round / 10)%, requests \(.mean_reclaim_requests | floor), chunks freed \(.mean_chunks_freed | floor), latency p50 \(.median_latency_p50_us) us p99 max \(.max_latency_p99_us) us, first reclaim to first request \(.median_first_reclaim_to_request_ms) ms (timeline, 100 ms steps), alloc p99 max \(.max_alloc_p99_ms) ms, alloc max \(.max_alloc_ms) ms, allocs >= 500 ms \(.allocs_over_500ms), host gap max \(.max_host_gap_ms) ms, runs with an allocation 500 ms beyond the host gap \(.runs_stalled_beyond_gap)"' \
	"${jsonl%.jsonl}.json"
[ "$rc" = 0 ] || echo "bench-kernel-shrinker: the VM run failed ($rc), see '$log'" >&2
exit "$rc"
