# SPDX-License-Identifier: GPL-2.0
# The shrinker benchmarks inside the VM (boot groups bench-v2, bench-v1
# and bench-v2pure, see kernel-patch/scripts/bench-kernel-shrinker.sh):
# mpctl stress RUNS times, one summary line per run on the TAP as
# "# BENCH {json}".  Kernel parameters: mpctl.runs=N (default 10),
# mpctl.lru_gen=y|n (MGLRU on or off for the runs), preempt= as usual.

load ../vm/helpers

# cmdline_arg NAME DEFAULT: the value of NAME= on the kernel command line
cmdline_arg() {
	local a
	for a in $(cat /proc/cmdline); do
		case $a in "$1="*) echo "${a#*=}"; return ;; esac
	done
	echo "$2"
}

bench_arg() {
	cmdline_arg "mpctl.$1" "$2"
}

# bench_setup [WHAT...]: requires WHAT (default: the kernel's shrinker)
bench_setup() {
	local lg
	requires vm root memory mpctl "${@:-mempressure}"
	lg=$(bench_arg lru_gen "")
	if [ -n "$lg" ]; then
		[ -w /sys/kernel/mm/lru_gen/enabled ] ||
			fail "mpctl.lru_gen=$lg but no /sys/kernel/mm/lru_gen/enabled"
		echo "$lg" >/sys/kernel/mm/lru_gen/enabled
	fi
}

# bench_stress [--gap] LAYOUT MODE [ARGS...]: RUNS stress runs with ARGS, a
# BENCH line each.  --gap: vcpu-gap beside each run (host_gap_ns,
# stall_beyond_gap), for the rows whose allocation stalls are judged
# against the host's gap.  Only there: a FIFO thread waking 200 times a
# second on every vCPU keeps the vCPUs from idling, and with two VMs side
# by side it made the program's answers (madvise(), one TLB shootdown per
# range, waiting for the other vCPU) take 0.3 to 0.9 s, so that the
# memory.max-only rows were OOM-killed in every run with it and in none
# without it (2026-12-05, both kernels; not RT throttling: the same with
# sched_rt_runtime_us -1).
bench_stress() {
	local layout mode runs i doc lg preempt gap=null probe=0
	if [ "$1" = --gap ]; then
		probe=1
		shift
	fi
	layout=$1 mode=$2
	shift 2
	runs=$(bench_arg runs 10)
	lg=$(cat /sys/kernel/mm/lru_gen/enabled 2>/dev/null || echo none)
	preempt=$(cmdline_arg preempt default)
	for i in $(seq "$runs"); do
		doc=$BATS_TEST_TMPDIR/run-$i.json
		[ $probe = 0 ] || gap_start
		mpctl stress --chunk 1M --threads 4 \
			--overcommit 2 --duration 10s --limit 128M --json "$@" \
			>"$doc" 2>"$BATS_TEST_TMPDIR/err" || true
		[ $probe = 0 ] || gap_stop
		jq -e .schema "$doc" >/dev/null 2>&1 ||
			fail "run $i left no stress document: $(cat "$BATS_TEST_TMPDIR/err")"
		jq -c --arg layout "$layout" --arg mode "$mode" --argjson run "$i" \
			--argjson gap "$gap" \
			--arg lru_gen "$lg" --arg preempt "$preempt" --arg kernel "$(uname -r)" '
			(.memory_high_bytes // .limit_bytes) as $reclaim_at |
			([.timeline[] | select(.usage_bytes >= $reclaim_at - 4 * 1048576) | .t_ns / 1000000 | floor] | first) as $t_reclaim |
			([.timeline[] | select(.requests > 0) | .t_ns / 1000000 | floor] | first) as $t_request |
			{kernel: $kernel, layout: $layout, mode: $mode, run: $run,
			 lru_gen: $lru_gen, preempt: $preempt,
			 exit_reason, oom_kills, reclaim_requests, chunks_freed,
			 chunks_allocated, peak_usage_bytes, limit_bytes,
			 memory_high_bytes, swap_growth_bytes,
			 latency_p50_ns: .reclaim_latency.p50_ns,
			 latency_p99_ns: .reclaim_latency.p99_ns,
			 free: .parameters.free, populate: .parameters.populate,
			 alloc_p99_ns: .alloc_latency.p99_ns,
			 alloc_max_ns: .alloc_latency.max_ns,
			 allocs_over_500ms: .alloc_latency.over_500ms,
			 host_gap_ns: $gap,
			 stall_beyond_gap: (if $gap == null then null else .alloc_latency.max_ns >= 500000000 + $gap end),
			 first_reclaim_ms: $t_reclaim, first_request_ms: $t_request}' \
			"$doc" | sed 's/^/# BENCH /' >&3
	done
}

# bench_thp_always: transparent huge pages on every anonymous mapping for
# the runs (bench_teardown restores it)
bench_thp_always() {
	local f=/sys/kernel/mm/transparent_hugepage/enabled
	[ -w "$f" ] || skip "no THP (CONFIG_TRANSPARENT_HUGEPAGE)"
	BENCH_THP_WAS=$(sed 's/.*\[\(.*\)\].*/\1/' "$f")
	echo always >"$f"
}

bench_teardown() {
	[ -z "${BENCH_THP_WAS:-}" ] ||
		echo "$BENCH_THP_WAS" >/sys/kernel/mm/transparent_hugepage/enabled
}
