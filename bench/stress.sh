#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stress benchmark: mpctl stress with the shrinker, stress-ng --vm at the
# same footprint, and the machine's own reference rates, in one run at one
# cgroup limit. Writes build/bench/stress.json and bench/RESULTS-stress.md.
#
#   bench/stress.sh [--duration 20s] [--limit 256M] [--threads 4]
#
# Needs root, a cgroup v1 memory hierarchy (or cgroup2 with the memory
# controller), jq and stress-ng. Creates cgroups only under its own
# unique name and removes them.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
O=$ROOT/build/bench
MPCTL=$ROOT/build/mpctl
DURATION=20s
LIMIT=256M
THREADS=4
CHUNK=1M
while [ $# -gt 0 ]; do
	case $1 in
	--duration) DURATION=$2; shift 2 ;;
	--limit) LIMIT=$2; shift 2 ;;
	--threads) THREADS=$2; shift 2 ;;
	*) echo "usage: $0 [--duration T] [--limit SIZE] [--threads N]" >&2; exit 64 ;;
	esac
done
CMDLINE="bench/stress.sh --duration $DURATION --limit $LIMIT --threads $THREADS"

for t in jq stress-ng; do
	command -v $t >/dev/null || { echo "stress.sh: needs $t" >&2; exit 69; }
done
[ "$(id -u)" = 0 ] || { echo "stress.sh: needs root" >&2; exit 77; }
[ -x "$MPCTL" ] || { echo "stress.sh: build first (make)" >&2; exit 1; }
mkdir -p "$O"

# the helper, against common/'s objects
objs=()
for f in mp_chunks mp_stats mp_json mp_parse; do
	objs+=("$ROOT/build/obj/common/$f.o")
done
JANSSON_CFLAGS=$(pkg-config --cflags jansson 2>/dev/null || true)
JANSSON_LIBS=$(pkg-config --libs jansson 2>/dev/null || echo -ljansson)
# shellcheck disable=SC2086
${CC:-cc} -O2 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE \
	-I"$ROOT/common" $JANSSON_CFLAGS -o "$O/stress_bench" \
	"$ROOT/bench/stress_bench.c" "${objs[@]}" $JANSSON_LIBS -lpthread -lm
B=$O/stress_bench

secs() { # duration to whole seconds
	local d=$1
	case $d in
	*ms) echo $(( (${d%ms} + 999) / 1000 )) ;;
	*s) echo "${d%s}" ;;
	*m) echo $(( ${d%m} * 60 )) ;;
	*) echo "$d" ;;
	esac
}
to_bytes() {
	local v=$1
	case $v in
	*G) echo $(( ${v%G} << 30 )) ;;
	*M) echo $(( ${v%M} << 20 )) ;;
	*K) echo $(( ${v%K} << 10 )) ;;
	*) echo "$v" ;;
	esac
}
LIMIT_BYTES=$(to_bytes "$LIMIT")
SECS=$(secs "$DURATION")

memcg_root() {
	awk '$0 ~ / - cgroup / { n = split($NF, o, ","); \
		for (i = 1; i <= n; i++) if (o[i] == "memory") { print $5; exit } }' \
		/proc/self/mountinfo
}
MEMCG=$(memcg_root)
[ -n "$MEMCG" ] || { echo "stress.sh: needs a cgroup v1 memory hierarchy" >&2; exit 69; }
CG=$MEMCG/mpctl-bench-$$-$RANDOM
cleanup() {
	local i p
	[ -d "$CG" ] || return 0
	for i in $(seq 50); do
		rmdir "$CG" 2>/dev/null && return 0
		while read -r p; do kill -KILL "$p" 2>/dev/null || true; done < "$CG/cgroup.procs"
		sleep 0.1
	done
}
trap cleanup EXIT

echo "stress.sh: reference rates" >&2
"$B" alloc "$CHUNK" 2 > "$O/alloc.json"
"$B" alloc "$CHUNK" 2 fault > "$O/alloc-fault.json"
"$B" memset 1 > "$O/memset.json"
"$B" free "$CHUNK" 200 > "$O/free.json"
"$B" free-busy "$CHUNK" 200 "$THREADS" > "$O/free-busy.json"

echo "stress.sh: mpctl stress, $DURATION at $LIMIT" >&2
"$MPCTL" stress --chunk "$CHUNK" --threads "$THREADS" --duration "$DURATION" \
	--limit "$LIMIT" --json > "$O/mpctl.json"

echo "stress.sh: stress-ng --vm $THREADS --vm-bytes $((2 * LIMIT_BYTES >> 20))M for ${SECS}s at $LIMIT" >&2
mkdir "$CG"
echo "$LIMIT_BYTES" > "$CG/memory.limit_in_bytes"
[ ! -e "$CG/memory.memsw.limit_in_bytes" ] ||
	echo "$LIMIT_BYTES" > "$CG/memory.memsw.limit_in_bytes" 2>/dev/null || true
bash -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' sh "$CG" \
	stress-ng --vm "$THREADS" --vm-bytes "$((2 * LIMIT_BYTES >> 20))M" \
	--timeout "$SECS" --metrics-brief --yaml "$O/stress-ng.yaml" \
	>/dev/null 2>&1 || true
SNG_KILLS=$(awk '$1 == "oom_kill" { print $2 }' "$CG/memory.oom_control")
SNG_PEAK=$(cat "$CG/memory.max_usage_in_bytes")
SNG_OPS=$(awk '/bogo-ops:/ { s += $2 } END { print s + 0 }' "$O/stress-ng.yaml" 2>/dev/null || echo 0)
cleanup

echo "stress.sh: reclaim scaling, k = 64 out of n" >&2
: > "$O/scale.jsonl"
for n in 1000 10000 100000 1000000; do
	"$B" scale "$n" 64 >> "$O/scale.jsonl"
done

jq -n --slurpfile alloc0 "$O/alloc.json" --slurpfile fault "$O/alloc-fault.json" \
	--slurpfile mem "$O/memset.json" \
	--slurpfile free "$O/free.json" --slurpfile m "$O/mpctl.json" \
	--slurpfile fbusy "$O/free-busy.json" \
	--slurpfile scale <(jq -s . "$O/scale.jsonl") \
	--arg cmd "$CMDLINE" --arg kernel "$(uname -r)" \
	--arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	--arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
	--argjson sng_kills "$SNG_KILLS" --argjson sng_peak "$SNG_PEAK" \
	--argjson sng_ops "$SNG_OPS" --argjson limit "$LIMIT_BYTES" \
	--argjson threads "$THREADS" --arg dur "$DURATION" '
  # the best of the two ways of getting fresh pages is the reference
  ([$alloc0[0], $fault[0]] | max_by(.bytes_per_s)) as $best |
  { bytes_per_s: $best.bytes_per_s, method: $best.method } as $ref |
  [$ref] as $alloc |
{
  schema: { name: "mpctl-bench-stress", version: 1 },
  command: $cmd, date: $date, kernel_release: $kernel, loadavg: $load,
  limit_bytes: $limit, threads: $threads, duration: $dur,
  reference: {
    fresh_alloc_bytes_per_s: $alloc[0].bytes_per_s,
    fresh_alloc_method: $alloc[0].method,
    fresh_alloc_populate_bytes_per_s: $alloc0[0].bytes_per_s,
    fresh_alloc_fault_bytes_per_s: $fault[0].bytes_per_s,
    memset_bytes_per_s: $mem[0].bytes_per_s,
    munmap_chunk_ns: $free[0].munmap_p50_ns,
    dontneed_chunk_ns: $free[0].dontneed_p50_ns,
    munmap_chunk_busy_ns: $fbusy[0].munmap_p50_ns
  },
  mpctl: {
    backend: $m[0].backend, shrinker: $m[0].shrinker,
    exit_reason: $m[0].exit_reason,
    oom_kills: $m[0].oom_kills,
    alloc_throughput_bytes_per_s: $m[0].alloc_throughput_bytes_per_s,
    alloc_vs_fresh: ($m[0].alloc_throughput_bytes_per_s / $alloc[0].bytes_per_s),
    alloc_vs_memset: ($m[0].alloc_throughput_bytes_per_s / $mem[0].bytes_per_s),
    reclaim_latency_per_chunk_p50_ns: $m[0].reclaim_latency_per_chunk.p50_ns,
    reclaim_latency_per_chunk_p99_ns: $m[0].reclaim_latency_per_chunk.p99_ns,
    reclaim_vs_munmap: ($m[0].reclaim_latency_per_chunk.p50_ns / $free[0].munmap_p50_ns),
    reclaim_vs_munmap_busy: ($m[0].reclaim_latency_per_chunk.p50_ns / $fbusy[0].munmap_p50_ns),
    reclaim_latency_p50_ns: $m[0].reclaim_latency.p50_ns,
    reclaim_latency_p99_ns: $m[0].reclaim_latency.p99_ns,
    reclaim_latency_max_ns: $m[0].reclaim_latency.max_ns,
    chunks_freed: $m[0].chunks_freed, reclaim_requests: $m[0].reclaim_requests,
    peak_usage_bytes: $m[0].peak_usage_bytes,
    peak_vs_limit: ($m[0].peak_usage_bytes / $m[0].limit_bytes),
    swap_growth_bytes: $m[0].swap_growth_bytes
  },
  stress_ng: {
    args: "--vm \($threads) --vm-bytes \(2 * $limit / 1048576 | floor)M",
    oom_kills: $sng_kills, bogo_ops: $sng_ops,
    peak_usage_bytes: $sng_peak, peak_vs_limit: ($sng_peak / $limit)
  },
  scale: $scale[0]
}' > "$O/stress.json"

# the markdown table for the README
jq -r '
def mib: . / 1048576 | floor | tostring + " MiB";
def mbs: . / 1000000 | floor | tostring + " MB/s";
def us: . / 1000 | (. * 10 | floor) / 10 | tostring + " us";
def pct: . * 1000 | floor | . / 10 | tostring + " %";
"### Stress benchmark",
"",
"`\(.command)` (`make bench`), \(.date), kernel \(.kernel_release), load average \(.loadavg);",
"limit \(.limit_bytes | mib), \(.threads) allocator threads / workers, \(.duration) each, 1 MiB chunks.",
"",
"| | mpctl stress (\(.mpctl.shrinker) shrinker, \(.mpctl.backend)) | stress-ng \(.stress_ng.args) |",
"|---|---|---|",
"| OOM kills | \(.mpctl.oom_kills) | \(.stress_ng.oom_kills) |",
"| peak usage / limit | \(.mpctl.peak_usage_bytes | mib) (\(.mpctl.peak_vs_limit | pct)) | \(.stress_ng.peak_usage_bytes | mib) (\(.stress_ng.peak_vs_limit | pct)) |",
"| work done | \(.mpctl.chunks_freed) chunks freed on \(.mpctl.reclaim_requests) requests | \(.stress_ng.bogo_ops) bogo-ops |",
"| allocation throughput | \(.mpctl.alloc_throughput_bytes_per_s | mbs) = \(.mpctl.alloc_vs_fresh | pct) of the fresh-chunk rate (best of the two below), \(.mpctl.alloc_vs_memset | pct) of memset | |",
"| swap growth | \(.mpctl.swap_growth_bytes | mib) | |",
"",
"| reference (same run, one thread) | |",
"|---|---|",
"| fresh-chunk allocation: mmap, MADV_POPULATE_WRITE, write every page | \(.reference.fresh_alloc_populate_bytes_per_s | mbs) |",
"| fresh-chunk allocation: mmap, a page fault per page | \(.reference.fresh_alloc_fault_bytes_per_s | mbs) |",
"| memset bandwidth | \(.reference.memset_bytes_per_s | mbs) |",
"| munmap of one populated chunk (p50) | \(.reference.munmap_chunk_ns | us) |",
"| MADV_DONTNEED of one populated chunk (p50) | \(.reference.dontneed_chunk_ns | us) |",
"| munmap of one chunk while \(.threads) threads allocate, as the engine frees (p50) | \(.reference.munmap_chunk_busy_ns | us) |",
"",
"| reclaim response (read request to chunks freed) | |",
"|---|---|",
"| per chunk p50 / p99 | \(.mpctl.reclaim_latency_per_chunk_p50_ns | us) / \(.mpctl.reclaim_latency_per_chunk_p99_ns | us) = \(.mpctl.reclaim_vs_munmap * 100 | floor / 100)x munmap alone, \(.mpctl.reclaim_vs_munmap_busy * 100 | floor / 100)x munmap among allocators |",
"| per request p50 / p99 / max | \(.mpctl.reclaim_latency_p50_ns | us) / \(.mpctl.reclaim_latency_p99_ns | us) / \(.mpctl.reclaim_latency_max_ns | us) |",
"",
"| freeing k = 64 of n chunks | upstream loop (slots scanned) | mp_chunks |",
"|---|---|---|",
(.scale[] | "| n = \(.n) | \(.upstream_ns | us) (\(.upstream_slots_scanned)) | \(.ours_ns | us) |"),
"",
"Targets: 0 OOM kills with the shrinker; peak within the limit; reclaim per chunk within 1.5x munmap; allocation throughput at least 50 % of the fresh-chunk rate; k-of-n time flat in n."
' "$O/stress.json" > "$ROOT/bench/RESULTS-stress.md"
cat "$ROOT/bench/RESULTS-stress.md"
echo "stress.sh: wrote $O/stress.json and bench/RESULTS-stress.md" >&2
