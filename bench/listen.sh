#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark mpctl listen (memcg backend, real pressure from stress-ng):
#  - latency from the kernel's eventfd signal to the line on stdout (see
#    listen_latency.c for how the signal is observed), with one stress-ng
#    worker (a core left free) and with one per core (all cores busy)
#  - idle footprint over 5 s, dynamic and static binaries: wake-ups (all
#    threads' context switches), CPU ticks, RSS, PSS and fds
# Writes build/bench/listen.json and bench/RESULTS-listen.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/bench
mkdir -p "$out"
secs=${BENCH_SECONDS:-10}

memcg=$(awk '$0 ~ / - cgroup / { n = split($NF, o, ","); for (i = 1; i <= n; i++) if (o[i] == "memory") { print $5; exit } }' /proc/self/mountinfo)
[ -n "$memcg" ] || { echo "bench/listen.sh: no cgroup v1 memory hierarchy, skipped" >&2; exit 0; }
cc -O2 -Wall -Wextra -Werror -o "$out/listen_latency" bench/listen_latency.c \
	$(pkg-config --cflags --libs jansson) -lpthread
make --no-print-directory -s static >/dev/null 2>&1 || true

cgs=()
pids=()
cleanup() {
	local p c
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	for c in "${cgs[@]}"; do
		[ -d "$c" ] || continue
		while read -r p; do kill -KILL "$p" 2>/dev/null || true; done < "$c/cgroup.procs"
		for _ in $(seq 50); do rmdir "$c" 2>/dev/null && break; sleep 0.1; done
	done
}
trap cleanup EXIT

# latency WORKERS NAME [LISTEN ARGS]: one run of listen_latency beside
# stress-ng --vm WORKERS
latency() {
	local workers=$1 name=$2 cg=$memcg/mpctl-bench-$$-lat$2 lat
	shift 2
	mkdir "$cg"
	cgs+=("$cg")
	echo 64M > "$cg/memory.limit_in_bytes"
	"$out/listen_latency" "$cg" "$secs" "$out/listen-latency-$name.json" \
		"$PWD/build/mpctl" listen -b memcg -c "$cg" -l low --json "$@" > /dev/null &
	lat=$!
	pids+=("$lat")
	sleep 0.5
	bash -c 'echo $$ > "$1/cgroup.procs"; exec stress-ng --vm "$3" --vm-bytes 96M --timeout "$2" -q' \
		hog "$cg" "$((secs + 2))" "$workers" >/dev/null 2>&1 &
	pids+=("$!")
	wait "$lat"
}

# idle BINARY NAME: footprint of an idle listener on a quiet cgroup
idle() {
	local bin=$1 name=$2 cg=$memcg/mpctl-bench-$$-idle-$2 p
	mkdir "$cg"
	cgs+=("$cg")
	"$bin" listen -b memcg -c "$cg" >/dev/null &
	p=$!
	pids+=("$p")
	sleep 0.5
	ticks() { awk '{ print $14 + $15 }' "/proc/$p/stat"; }
	switches() { cat /proc/"$p"/task/*/status | awk '/ctxt_switches/ { s += $2 } END { print s }'; }
	local t0 w0 f0 t1 w1 f1
	t0=$(ticks) w0=$(switches) f0=$(ls "/proc/$p/fd" | wc -l)
	sleep 5
	t1=$(ticks) w1=$(switches) f1=$(ls "/proc/$p/fd" | wc -l)
	jq -n --arg name "$name" --argjson w $((w1 - w0)) --argjson t $((t1 - t0)) \
		--argjson rss "$(awk '/^Rss:/ { print $2 * 1024 }' "/proc/$p/smaps_rollup")" \
		--argjson pss "$(awk '/^Pss:/ { print $2 * 1024 }' "/proc/$p/smaps_rollup")" \
		--argjson anon "$(awk '/^Pss_Anon:/ { print $2 * 1024 }' "/proc/$p/smaps_rollup")" \
		--argjson f0 "$f0" --argjson f1 "$f1" \
		'{ binary: $name, seconds: 5, wakeups: $w, cpu_ticks: $t,
		   rss_bytes: $rss, pss_bytes: $pss, anon_bytes: $anon,
		   fds_start: $f0, fds_end: $f1 }' > "$out/listen-idle-$name.json"
	kill "$p"
}

latency 1 w1
latency 2 w2
latency 2 w2rt --realtime
idle "$PWD/build/mpctl" dynamic
[ -x build/static/mpctl ] && idle "$PWD/build/static/mpctl" static

jq -n --arg kernel "$(uname -r)" --argjson secs "$secs" --argjson cpus "$(nproc)" \
	--slurpfile l1 "$out/listen-latency-w1.json" --slurpfile l2 "$out/listen-latency-w2.json" \
	--slurpfile l3 "$out/listen-latency-w2rt.json" \
	'{ schema: { name: "mpctl-bench-listen", version: 1 },
	   kernel: $kernel, cpus: $cpus, stress_seconds: $secs,
	   latency: [ ($l1[0].latency + { stress_workers: 1 }),
		      ($l2[0].latency + { stress_workers: 2 }),
		      ($l3[0].latency + { stress_workers: 2, realtime: true }) ],
	   idle: [ inputs ] }' "$out"/listen-idle-*.json > "$out/listen.json"

{
	echo "Made by \`bench/listen.sh\` (\`make bench\`) on $(uname -r), $(nproc) CPUs, $(date -u +%Y-%m-%d); memcg backend, 64M cgroup, ${secs} s of stress-ng --vm N --vm-bytes 96M."
	echo
	jq -r '"| stress-ng workers, listener | signals / lines / samples | signal to stdout p50 | p99 | max | mpctl wake-up to stdout p50 | p99 |",
		"|---|---|---|---|---|---|---|",
		(.latency[] | "| \(.stress_workers), \(if .realtime then "--realtime" else "default" end) | \(.kernel_signals) / \(.lines) / \(.samples) | \(.signal_to_stdout_p50_ns / 1000 | floor) us | \(.signal_to_stdout_p99_ns / 1000 | floor) us | \(.signal_to_stdout_max_ns / 1000 | floor) us | \(.wakeup_to_stdout_p50_ns / 1000 | floor) us | \(.wakeup_to_stdout_p99_ns / 1000 | floor) us |"),
		"",
		"| idle listener, 5 s | wake-ups | CPU ticks | RSS | PSS | private anon | fds start, end |",
		"|---|---|---|---|---|---|---|",
		(.idle[] | "| \(.binary) | \(.wakeups) | \(.cpu_ticks) | \(.rss_bytes / 1024) KiB | \(.pss_bytes / 1024) KiB | \(.anon_bytes / 1024) KiB | \(.fds_start), \(.fds_end) |")' \
		"$out/listen.json"
} > bench/RESULTS-listen.md
cat bench/RESULTS-listen.md
