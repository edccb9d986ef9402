#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Where a run's threads wait (boot group trace, by hand; make check never
# boots it). A diagnosis aid, not a benchmark: bats/vm/thread-sample.c
# samples the run's threads every 2 ms, and each run prints one
# "# TRACE {summary}" line and a "# SPAN" line for every stretch of 200 ms
# or more that a thread spent off the CPU at one kernel stack (but in
# poll() or nanosleep(), the program's own idle loops). Kernel
# parameters: mpctl.trace=maxonly (memory.max alone, no swap) or munmap
# (the munmap() program, THP always; the default), mpctl.runs=N (default
# 3), mpctl.gap=1 (vcpu-gap beside each run), mpctl.lru_gen=y|n,
# preempt= as usual. See kernel-patch/README-harness.md.

load bench

setup() {
	bench_setup
	mp_v2_enable memory
	mp_v2_enable mempressure
}

teardown() {
	bench_teardown
}

# trace_run TAG ARGS...: one sampled run of mpctl stress with ARGS
trace_run() {
	local tag=$1 doc=$BATS_TEST_TMPDIR/$1.json ws=$BATS_TEST_TMPDIR/$1.ws
	local pid ts cg= i
	shift
	mpctl stress --chunk 1M --overcommit 2 --duration 10s --limit 128M \
		--json --no-assist -b mempressure "$@" >"$doc" \
		2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	# the run's own cgroup, once it exists (the only mpctl-stress-* one)
	for i in $(seq 300); do
		cg=$(ls -d "$MP_V2"/mpctl-stress-* 2>/dev/null | head -n 1)
		[ -n "$cg" ] && [ -e "$cg/cgroup.procs" ] && break
		sleep 0.01
	done
	[ -n "$cg" ] || fail "$tag: no mpctl-stress cgroup appeared"
	thread-sample "$cg" 12 >"$ws" &
	ts=$!
	MP_PIDS+=("$ts")
	wait "$pid" || true
	kill "$ts" 2>/dev/null || true
	wait "$ts" 2>/dev/null || true
	jq -e .schema "$doc" >/dev/null 2>&1 ||
		fail "$tag left no stress document: $(cat "$BATS_TEST_TMPDIR/err")"
	[ -s "$ws" ] || fail "$tag: thread-sample wrote nothing"
	echo "# TRACE $tag $(jq -c '{oom_kills, exit_reason, reclaim_requests,
		peak_usage_bytes, answer_p99_ns: .reclaim_latency.p99_ns,
		alloc: .alloc_latency}' "$doc")" >&3
	# a span: the same state, frames and CPU time, sample after sample
	awk -v tag="$tag" '{
		for (i = 3; i <= NF; i++) {
			n = split($i, f, ":")
			if (n < 5)
				continue
			key = f[2] ":" f[4] ":" f[5]
			if (key == cur[f[1]])
				continue
			# the idle loops of the program (poll, nanosleep) are no wait
			if (cur[f[1]] != "" && $1 - since[f[1]] >= 200 &&
			    cur[f[1]] !~ /do_sys_poll|hrtimer_nanosleep/)
				printf "# SPAN %s tid %s %d ms from %d ms: %s\n",
					tag, f[1], $1 - since[f[1]], since[f[1]],
					cur[f[1]]
			cur[f[1]] = key
			since[f[1]] = $1
		}
	}' "$ws" | head -n 40 >&3
}

@test "trace: where the threads of a run wait" {
	local what runs i probe args
	what=$(bench_arg trace munmap)
	runs=$(bench_arg runs 3)
	probe=$(bench_arg gap 0)
	case $what in
	maxonly) args=(--threads 4 --no-throttle) ;;
	munmap)
		bench_thp_always
		args=(--threads 3 --free munmap)
		;;
	*) fail "mpctl.trace=$what: maxonly or munmap" ;;
	esac
	for i in $(seq "$runs"); do
		[ "$probe" = 0 ] || gap_start
		trace_run "$what-$i" "${args[@]}"
		if [ "$probe" != 0 ]; then
			gap_stop
			echo "# TRACE $what-$i host gap ${gap} ns" >&3
		fi
	done
}
