#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# mpctl stress: real pressure in a transient cgroup, its JSON, bad input.

load helpers

# the run's transient cgroup, from the JSON, must be gone
assert_cgroup_gone() {
	local json=$1 path root
	path=$(jq -r .cgroup "$json")
	[ "$(jq -r .transient_cgroup "$json")" = true ] || return 0
	root=$(memcg_root)
	[ -n "$root" ] || root=$(v2_root)
	[ ! -d "$root$path" ] || {
		echo "cgroup left behind: $root$path" >&2
		return 1
	}
}

# memcg NAME LIMIT: make_memcg in this shell (a $(...) subshell would lose
# the record teardown removes it by), the directory in $dir
memcg() {
	make_memcg "$1" "$2" >/dev/null
	dir=$(memcg_root)/$MP_RUN_ID-$1
}

# run_mpt ARGS...: run build/mempressure_test ARGS inside the memcg $dir
run_mpt() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	run bash -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' \
		sh "$dir" "$ROOT/build/mempressure_test" "$@"
}

# the OOM kills in the v1 memcg $dir
memcg_oom_kills() {
	awk '$1 == "oom_kill" { print $2 }' "$dir/memory.oom_control"
}

# names of transient stress cgroups present now
stress_cgroups() {
	local root
	root=$(memcg_root)
	[ -n "$root" ] || root=$(v2_root)
	ls "$root" | grep '^mpctl-stress-' | sort || true
}

@test "stress: done-when run, 20 s at 256M with 4 threads, no OOM kill" {
	requires root memcg jq
	local out=$BATS_TEST_TMPDIR/run.json
	run -0 --separate-stderr "$MPCTL_BIN" stress --chunk 1M --threads 4 \
		--duration 20s --limit 256M --json
	echo "$output" > "$out"
	jq -e '.schema.name == "mpctl-stress" and .schema.version == 2' "$out"
	jq -e '.oom_kills == 0' "$out"
	jq -e '.exit_reason == "duration"' "$out"
	jq -e '.limit_bytes == 268435456' "$out"
	jq -e '.peak_usage_bytes > 0 and .peak_usage_bytes <= .limit_bytes' "$out"
	jq -e '.chunks_freed > 0 and .reclaim_requests > 0' "$out"
	jq -e '.chunks_requested == .chunks_freed + .chunks_readded + .chunks_short' "$out"
	jq -e '.chunks_allocated * 1048576 == .bytes_allocated' "$out"
	jq -e '.reclaim_latency.count > 0 and .reclaim_latency.p50_ns <= .reclaim_latency.p99_ns and .reclaim_latency.p99_ns <= .reclaim_latency.max_ns' "$out"
	jq -e '.alloc_throughput_bytes_per_s > 0' "$out"
	# every chunk allocated was timed: quantiles in order, slow ones a part
	jq -e '.alloc_latency.count == .chunks_allocated and
		.alloc_latency.p50_ns > 0 and
		.alloc_latency.p50_ns <= .alloc_latency.p99_ns and
		.alloc_latency.p99_ns <= .alloc_latency.max_ns and
		.alloc_latency.over_500ms <= .alloc_latency.count' "$out"
	jq -e '.parameters.free == "reuse" and .parameters.populate == true' "$out"
	# sampled every 100 ms over the whole run, in order (the count is not
	# asserted exactly: a busy host delays the sampler)
	jq -e '(.timeline | length) >= 20 and .timeline[-1].t_ns >= 19000000000 and
		([.timeline[].t_ns] | . == sort)' "$out"
	jq -e '[.timeline[].usage_bytes] | max <= 268435456' "$out"
	jq -e '.parameters.threads == 4 and .parameters.chunk_size_bytes == 1048576' "$out"
	jq -e '.kernel_release | length > 0' "$out"
	assert_cgroup_gone "$out"
}

@test "stress: readable summary, no progress line when stdout is not a TTY" {
	requires root memcg
	# the summary is printed whatever the run's end (an engine the OOM
	# killer took ends it with 1, which the done-when test is about)
	mpctl stress --duration 3s --limit 256M --threads 2
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
	assert_output --partial "OOM kills"
	assert_output --partial "peak usage"
	refute_output --partial $'\r'
	refute_output --partial $'\033'
}

@test "stress: progress line on a TTY" {
	requires root memcg
	command -v script >/dev/null || skip "no script(1)"
	run script -qec "$MPCTL_BIN stress --duration 2s --limit 256M --threads 1" /dev/null
	assert_success
	assert_output --partial "held"
	assert_output --partial "usage"
	assert_output --partial "OOM kills"
}

@test "stress: the progress line fits a 40-column terminal; none with TERM=dumb" {
	requires root memcg
	command -v script >/dev/null || skip "no script(1)"
	run script -qec "stty cols 40; TERM=xterm $MPCTL_BIN stress --duration 2s --limit 256M --threads 1 >/dev/null" /dev/null
	assert_success
	assert_output --partial "held"
	# every rewrite of the line ("\r\033[K...") is at most 39 columns
	tr '\r' '\n' <<<"$output" | sed -n 's/^\x1b\[K//p' | awk 'length > 39 { bad = 1 } END { exit bad }'
	run script -qec "TERM=dumb $MPCTL_BIN stress --duration 1s --limit 256M --threads 1 >/dev/null" /dev/null
	assert_success
	refute_output --partial "held"
	refute_output --partial $'\033'
}

@test "stress: -j -o FILE | true still writes FILE (the closed pipe is stdout's failure)" {
	requires root memcg jq
	local out=$BATS_TEST_TMPDIR/out.json
	run bash -c "'$MPCTL_BIN' stress --duration 1s --limit 256M --threads 1 -j -o '$out' | true"
	jq -e '.schema.name == "mpctl-stress"' "$out"
}

@test "stress: -o FIFO without a reader ends on SIGTERM, the fifo kept" {
	requires root memcg
	local f=$BATS_TEST_TMPDIR/fifo
	mkfifo "$f"
	"$MPCTL_BIN" stress --duration 1s --limit 256M --threads 1 -o "$f" \
		>"$BATS_TEST_TMPDIR/log" 2>&1 &
	local pid=$! i
	MP_PIDS+=("$pid")
	# the run is over once the summary is out; then it waits for a reader
	for ((i = 0; i < 300; i++)); do
		grep -q "OOM kills" "$BATS_TEST_TMPDIR/log" && break
		sleep 0.1
	done
	kill -TERM "$pid"
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	! kill -0 "$pid" 2>/dev/null
	run wait "$pid"
	assert_failure 1
	grep -q "no reader on '$f': interrupted by a signal" "$BATS_TEST_TMPDIR/log"
	[ -p "$f" ]
}

@test "stress: --output writes the JSON document beside the summary" {
	requires root memcg jq
	local out=$BATS_TEST_TMPDIR/out.json
	mpctl stress --duration 2s --limit 256M --threads 2 --output "$out"
	assert_success
	assert_output --partial "allocated"
	jq -e '.oom_kills == 0 and (.timeline | length) > 5' "$out"
	assert_cgroup_gone "$out"
}

# bats/fixtures/stress-*.json and their summaries stress-*.txt were
# recorded together (-o FILE, stdout) on a 6.18 host, v1 memcg, emulated
# shrinker, by the mpctl that printed the summary from its struct:
#   psi       -d 1s -L 64M --strategy psi
#   lazyfree  -d 1s -L 64M --lazyfree --no-populate
#   oom       -d 1s -L 64M --strategy none --free free (no shrinker,
#             the engine OOM-killed)
#   hog       -d 2s -L 128M -H "--vm 1 --vm-bytes 16M"
@test "stress --input: recorded documents give their recorded summaries" {
	local f
	for f in psi lazyfree oom hog; do
		mpctl stress --input "$ROOT/bats/fixtures/stress-$f.json"
		assert_success
		diff -u "$ROOT/bats/fixtures/stress-$f.txt" <(echo "$output")
	done
}

@test "stress: the summary is the document's (--input of -o prints it again)" {
	requires root memcg jq
	local out=$BATS_TEST_TMPDIR/out.json
	# the cache's line too; an OOM-killed run (1) still has its summary
	run --separate-stderr "$MPCTL_BIN" stress --duration 1s --threads 2 \
		--limit 128M --strategy psi --output "$out"
	[ "$status" -le 1 ]
	local summary=$output
	[[ $summary == *"  cache         psi: "* ]]
	assert_cgroup_gone "$out"
	mpctl stress --input "$out"
	assert_success
	diff -u <(echo "$summary") <(echo "$output")
}

@test "stress --input: another document is a data error (65), none 66" {
	mpctl stress --input "$ROOT/bats/fixtures/report-base.json"
	assert_failure 65
	assert_output --partial "is not an mpctl-stress document of version 2"
	echo '{' > "$BATS_TEST_TMPDIR/bad.json"
	mpctl stress --input "$BATS_TEST_TMPDIR/bad.json"
	assert_failure 65
	mpctl stress --input "$BATS_TEST_TMPDIR/none.json"
	assert_failure 66
}

@test "stress: SIGINT ends the run early with the summary and JSON" {
	requires root memcg jq
	local out=$BATS_TEST_TMPDIR/int.json
	"$MPCTL_BIN" stress --duration 60s --limit 256M --json >"$out" 2>&1 &
	local pid=$!
	MP_PIDS+=("$pid")
	sleep 2
	kill -INT "$pid"
	local rc=0
	wait_exit "$pid" 15 || rc=$?
	[ "$rc" -eq 0 ]
	jq -e '.exit_reason == "interrupted"' "$out"
	jq -e '.duration_ns < 30000000000 and .chunks_allocated > 0' "$out"
	assert_cgroup_gone "$out"
}

@test "stress: bad input gets one clear line and status 64, nothing left behind" {
	requires root memcg
	local before after
	before=$(stress_cgroups)
	mpctl stress --chunk 0
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: invalid --chunk '0': must not be zero"
	mpctl stress --chunk 512M --limit 256M
	[ "$status" -eq 64 ]
	assert_line --index 0 --partial "is larger than the limit"
	mpctl stress --threads 0
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: invalid --threads '0': must be 1 to 1024"
	mpctl stress --threads 100000
	[ "$status" -eq 64 ]
	assert_line --index 0 --partial "must be 1 to 1024"
	mpctl stress --limit 12Q
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: invalid --limit '12Q': not a size (e.g. 4096, 64K, 1.5G, 50%)"
	mpctl stress --chunk 1.5.M
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: invalid --chunk '1.5.M': not a size (e.g. 4096, 64K, 1.5G)"
	mpctl stress --duration 5x
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: invalid --duration '5x': not a duration (e.g. 500ms, 30s, 1m30s, 1d)"
	mpctl stress --duration 0
	[ "$status" -eq 64 ]
	mpctl stress --limit 100T
	[ "$status" -eq 64 ]
	assert_line --index 0 --partial "larger than the memory available"
	mpctl stress --overcommit -1
	[ "$status" -eq 64 ]
	mpctl stress --until-freed 0
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: invalid --until-freed '0': must be at least 1"
	mpctl stress --hog ""
	[ "$status" -eq 64 ]
	mpctl stress extra
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: unexpected argument 'extra'"
	# --free and --no-populate: one line and the hint to --help
	mpctl stress --free bogus
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: unknown free mode 'bogus': reuse, munmap or free"
	[ "${#lines[@]}" -eq 2 ]
	mpctl stress --free
	[ "$status" -eq 64 ]
	mpctl stress --no-populate=yes
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: option '--no-populate' doesn't allow an argument"
	[ "${#lines[@]}" -eq 2 ]
	mpctl stress --free free --strategy madv-free
	[ "$status" -eq 64 ]
	assert_line --index 0 --partial "--free free and strategy 'madv-free' exclude each other"
	[ "${#lines[@]}" -eq 2 ]
	# --lazyfree: not with malloc()'s chunks nor with the cache workload
	mpctl stress --lazyfree --free free
	[ "$status" -eq 64 ]
	assert_line --index 0 --partial "--lazyfree and --free free exclude each other"
	[ "${#lines[@]}" -eq 2 ]
	mpctl stress --lazyfree --strategy madv-free
	[ "$status" -eq 64 ]
	assert_line --index 0 --partial "--lazyfree and --strategy exclude each other"
	[ "${#lines[@]}" -eq 2 ]
	mpctl stress --lazyfree=yes
	[ "$status" -eq 64 ]
	after=$(stress_cgroups)
	[ "$before" = "$after" ]
}

@test "stress: a missing cgroup, a non-cgroup, an unwritable output are refused" {
	requires root memcg
	local before
	before=$(stress_cgroups)
	mpctl stress --cgroup /nonexistent-$MP_RUN_ID --duration 1s
	[ "$status" -eq 1 ]
	assert_line --index 0 --partial "cannot open cgroup"
	mpctl stress --cgroup "$BATS_TEST_TMPDIR" --duration 1s
	[ "$status" -eq 1 ]
	assert_line --index 0 --partial "not a cgroup"
	mpctl stress --output "$BATS_TEST_TMPDIR/no/such/dir.json" --duration 1s
	[ "$status" -eq 1 ]
	assert_line --index 0 --partial "cannot create"
	[ "$before" = "$(stress_cgroups)" ]
}

@test "stress: an unwritable cgroup is refused with 77" {
	requires root memcg
	local dir
	memcg ro 64M
	# a non-root user cannot write cgroup.procs
	command -v setpriv >/dev/null || skip "no setpriv"
	run setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$MPCTL_BIN" stress --cgroup "$dir" --limit 32M --duration 1s
	echo "$output" >&2
	[ "$status" -eq 77 ]
	[[ "${lines[0]}" == *"cannot write to cgroup"* ]]
}

@test "stress: --cgroup runs in an existing cgroup and leaves it in place" {
	requires root memcg jq
	local dir out=$BATS_TEST_TMPDIR/own.json
	memcg own 512M
	# whether the emulation kept up on this machine is the done-when
	# test's subject; this one is about the cgroup: used, then left
	run --separate-stderr "$MPCTL_BIN" stress --cgroup "$dir" \
		--until-freed 1 --duration 2m --threads 2 --json
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
	echo "$output" > "$out"
	jq -e '.transient_cgroup == false and .limit_bytes == 536870912' "$out"
	jq -e '.chunks_freed > 0' "$out"
	[ -d "$dir" ]
}

@test "stress: --hog runs stress-ng in the cgroup and reports it apart" {
	requires root memcg jq stress-ng
	local out=$BATS_TEST_TMPDIR/hog.json
	run -0 --separate-stderr "$MPCTL_BIN" stress --duration 4s \
		--hog "--vm 1 --vm-bytes 192M" --json
	echo "$output" > "$out"
	jq -e '.hog.args == "--vm 1 --vm-bytes 192M"' "$out"
	jq -e '.hog.argv[0:4] == ["stress-ng", "--vm", "1", "--vm-bytes"]' "$out"
	jq -e '(.hog.oom_kills | type) == "number"' "$out"
	jq -e '(.hog.bogo_ops | type) == "number"' "$out"
	jq -e '.oom_kills == 0' "$out"
	assert_cgroup_gone "$out"
}

@test "stress --hog: no shell between: \$(...) is an argument, the JSON says what ran" {
	requires root memcg jq stress-ng
	local out=$BATS_TEST_TMPDIR/hog.json ran=$BATS_TEST_TMPDIR/ran
	# stress-ng refuses the method; a shell would have run touch
	run --separate-stderr "$MPCTL_BIN" stress --duration 1s --json \
		--hog "--vm 1 --vm-bytes 8M --vm-method '\$(touch $ran)'"
	echo "$output" > "$out"
	[ ! -e "$ran" ]
	jq -e --arg m "\$(touch $ran)" \
		'.hog.argv[0:7] == ["stress-ng", "--vm", "1", "--vm-bytes",
				    "8M", "--vm-method", $m]' "$out"
	jq -e '.hog.argv[7:9] == ["--timeout", "1"]' "$out"
	jq -e '.hog.exit_status != 0' "$out"
	assert_cgroup_gone "$out"
}

@test "stress --hog: an unclosed quote is a usage error" {
	requires root stress-ng
	mpctl stress --duration 1s --hog "--vm 1 --vm-method 'x"
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: invalid arguments for --hog '--vm 1 --vm-method 'x': a quote is not closed"
}

@test "stress: the mempressure backend on a stock kernel is absent (69)" {
	requires root
	if awk '$1 == "mempressure" && $4 == 1 { f = 1 } END { exit !f }' \
		/proc/cgroups; then
		skip "patched kernel: see the next test"
	fi
	local before
	before=$(stress_cgroups)
	mpctl stress --backend mempressure --duration 1s
	[ "$status" -eq 69 ]
	assert_line --index 0 --partial "mempressure"
	[ "$before" = "$(stress_cgroups)" ]
}

@test "stress: kernel shrinker (patched kernel)" {
	requires root mempressure jq
	local out=$BATS_TEST_TMPDIR/kernel.json
	run -0 --separate-stderr "$MPCTL_BIN" stress --backend mempressure \
		--chunk 1M --threads 4 --duration 5s --limit 256M --json
	echo "$output" > "$out"
	jq -e '.backend == "mempressure" and (.shrinker | startswith("kernel"))' "$out"
	jq -e '.oom_kills == 0 and .chunks_freed > 0' "$out"
	jq -e '.peak_usage_bytes <= .limit_bytes' "$out"
}

# strace_run LOG ARGS...: mpctl stress ARGS under strace, the engine's
# munmap() and madvise() calls in LOG (a file a thread while tracing, so
# that no call is split in two); the run ends once 20 chunks were freed
# on request, however slow the machine or strace makes it
strace_run() {
	local log=$1
	shift
	rm -f "$log" "$log".*
	run -0 --separate-stderr strace -ff -qq -o "$log" \
		-e trace=munmap,madvise "$MPCTL_BIN" stress --limit 64M \
		--threads 2 --until-freed 20 --duration 2m --json "$@"
	cat "$log".* >"$log"
	jq -e '.exit_reason == "freed" and .chunks_freed >= 20 and
		.oom_kills == 0' <<<"$output"
}

# count_calls LOG ERE: successful calls in LOG matching ERE
count_calls() {
	grep -E "$2" "$1" | grep -c ' = 0$' || true
}

@test "stress --free munmap: chunks are mapped one by one, populated, and munmap()ed on request" {
	requires root memcg jq prog:strace
	local log=$BATS_TEST_TMPDIR/strace json freed alloc n
	strace -o /dev/null true 2>/dev/null || skip "strace cannot trace here"
	# the ordinary way: a 1 MiB munmap() for every chunk freed, and
	# a MADV_POPULATE_WRITE (23) for every chunk allocated
	strace_run "$log" --free munmap
	json=$output
	jq -e '.parameters.free == "munmap" and .parameters.populate == true and
		.alloc_latency.count == .chunks_allocated and
		.alloc_latency.p50_ns <= .alloc_latency.p99_ns and
		.alloc_latency.p99_ns <= .alloc_latency.max_ns' <<<"$json"
	freed=$(jq .chunks_freed <<<"$json")
	alloc=$(jq .chunks_allocated <<<"$json")
	n=$(count_calls "$log" 'munmap\(0x[0-9a-f]+, 1048576\)')
	[ "$n" -ge "$freed" ]
	n=$(count_calls "$log" 'madvise\(0x[0-9a-f]+, 1048576, (MADV_POPULATE_WRITE|0x17|23)')
	[ "$n" -ge "$alloc" ]
	# no chunk's pages given back with MADV_DONTNEED (glibc gives an
	# exiting thread's stack back so: not a whole number of chunks)
	n=$(awk -F'[(, ]+' '$1 == "madvise" && /MADV_DONTNEED/ &&
		$3 % 1048576 == 0' "$log" | wc -l)
	[ "$n" -eq 0 ]

	# the control run: no populate, the writes fault the pages in
	strace_run "$log" --free munmap --no-populate
	jq -e '.parameters.populate == false and .chunks_allocated > 0 and
		.alloc_latency.count == .chunks_allocated' <<<"$output"
	n=$(count_calls "$log" 'MADV_POPULATE_WRITE|0x17')
	[ "$n" -eq 0 ]
	n=$(count_calls "$log" 'munmap\(0x[0-9a-f]+, 1048576\)')
	[ "$n" -ge "$(jq .chunks_freed <<<"$output")" ]

	# the default reuses its reservation: no chunk is unmapped on
	# request, its pages go back with MADV_DONTNEED
	strace_run "$log"
	jq -e '.parameters.free == "reuse"' <<<"$output"
	n=$(count_calls "$log" 'munmap\(0x[0-9a-f]+, 1048576\)')
	[ "$n" -eq 0 ]
	n=$(awk -F'[(, ]+' '$1 == "madvise" && /MADV_DONTNEED/ &&
		$3 % 1048576 == 0' "$log" | wc -l)
	[ "$n" -ge 1 ]
}

@test "stress --lazyfree: every chunk is MADV_FREE once written (strace), chunks_lost in the JSON" {
	requires root memcg jq prog:strace
	local log=$BATS_TEST_TMPDIR/strace json n m
	strace -o /dev/null true 2>/dev/null || skip "strace cannot trace here"
	for m in reuse munmap; do
		strace_run "$log" --lazyfree --free "$m"
		json=$output
		jq -e --arg m "$m" '.parameters.lazyfree == true and
			.parameters.free == $m and
			(.chunks_lost | type) == "number" and .chunks_lost >= 0 and
			.chunks_lost <= .chunks_allocated' <<<"$json"
		# MADV_FREE is 8
		n=$(count_calls "$log" 'madvise\(0x[0-9a-f]+, 1048576, (MADV_FREE|8)\)')
		[ "$n" -ge "$(jq .chunks_allocated <<<"$json")" ] ||
			fail "$m: $n MADV_FREE calls for $(jq .chunks_allocated <<<"$json") chunks"
	done
	# without it: no chunk MADV_FREE, none lost
	strace_run "$log"
	jq -e '.parameters.lazyfree == false and .chunks_lost == 0' <<<"$output"
	n=$(count_calls "$log" 'MADV_FREE')
	[ "$n" -eq 0 ]
}

@test "stress --lazyfree: reclaim drops what a late shrinker was not asked for, no OOM kill" {
	requires root memcg jq
	# the program stops answering at once and the allocators are not
	# throttled: they go past the limit whatever the machine's speed,
	# and only reclaim taking MADV_FREE chunks (no swap in the transient
	# cgroup) keeps the engine alive; the control, the same run without
	# --lazyfree, must be OOM-killed, or this test proves nothing
	run -0 --separate-stderr "$MPCTL_BIN" stress --lazyfree --high off \
		--no-throttle --limit 64M --threads 4 --duration 3s \
		--stop-answering 1ms --json
	jq -e '.oom_kills == 0 and .exit_reason == "duration" and
		.chunks_lost > 0 and .chunks_lost <= .chunks_allocated' <<<"$output" ||
		fail "stress document: $output"
	run --separate-stderr "$MPCTL_BIN" stress --high off --no-throttle \
		--limit 64M --threads 4 --duration 3s --stop-answering 1ms --json
	[ "$status" -ne 0 ] || fail "the control was not OOM-killed: $output"
	jq -e '.oom_kills > 0 and .chunks_lost == 0' <<<"$output" ||
		fail "control document: $output"
	# the summary says it too
	mpctl stress --lazyfree --limit 64M --threads 2 --duration 1s
	assert_success
	assert_line --regexp '^  lost +[0-9]+ chunks found dropped by reclaim \(MADV_FREE\)$'
	mpctl stress --limit 64M --threads 2 --duration 500ms
	assert_success
	refute_line --regexp '^  lost '
}

@test "stress --free free: malloc()ed chunks, freed on request, timed" {
	requires root memcg jq
	run -0 --separate-stderr "$MPCTL_BIN" stress --limit 64M --threads 2 \
		--until-freed 20 --duration 2m --free free --json
	jq -e '.exit_reason == "freed" and .parameters.free == "free" and
		.chunks_freed >= 20 and .oom_kills == 0' <<<"$output"
	jq -e '.alloc_latency.count == .chunks_allocated and
		.alloc_latency.p50_ns <= .alloc_latency.p99_ns and
		.alloc_latency.p99_ns <= .alloc_latency.max_ns' <<<"$output"
}

@test "stress --strategy none: a cache that never gives memory back is OOM-killed" {
	requires root memcg jq
	# no swap in the transient cgroup: the kernel can only kill; the
	# run ends with the kill, whatever the machine's speed
	run -1 --separate-stderr "$MPCTL_BIN" stress --strategy none \
		--miss-cost 1us --limit 64M --duration 2m --json
	jq -e '.strategy == "none" and .shrinker == "none"' <<< "$output"
	jq -e '.oom_kills >= 1 or .swap_growth_bytes > 0' <<< "$output"
	jq -e '.cache.misses > 0 and .cache.lost == 0' <<< "$output"
}

@test "stress --strategy madv-free: dropped chunks are found and re-created under a limit only" {
	requires root memcg jq
	run -0 --separate-stderr "$MPCTL_BIN" stress --strategy madv-free \
		--miss-cost 1us --limit 64M --duration 8s --json
	jq -e '.oom_kills == 0 and .cache.lost > 0' <<< "$output"
	jq -e '.cache.hit_ratio < 1 and .cache.misses > .cache.slots' <<< "$output"
	# the cache fits: the kernel drops nothing, every miss is a first fill
	run -0 --separate-stderr "$MPCTL_BIN" stress --strategy madv-free \
		--miss-cost 1us --limit 256M --overcommit 0.5 --duration 2s --json
	jq -e '.oom_kills == 0 and .cache.lost == 0' <<< "$output"
	jq -e '.cache.misses <= .cache.slots and .cache.reads > .cache.misses' <<< "$output"
}

@test "stress --strategy psi: the emulated shrinker's requests drop chunks, no OOM kill" {
	requires root memcg jq
	# two readers paying the default miss cost at 128M: the emulator
	# keeps up at any speed (4 readers re-creating chunks in 1 us at 64M
	# outran it once, OOM-killed, on a host running two suites at once)
	run -0 --separate-stderr "$MPCTL_BIN" stress --strategy psi \
		--threads 2 --limit 128M --until-freed 8 --duration 2m --json
	jq -e '.shrinker == "emulated" and .exit_reason == "freed"' <<< "$output"
	jq -e '.oom_kills == 0 and .chunks_freed >= 8' <<< "$output"
	jq -e '.cache.hit_ratio < 1 and .cache.misses > 0' <<< "$output"
	jq -e '.memory_pressure == null or (.memory_pressure.some_us | type) == "number"' <<< "$output"
}

@test "stress --strategy reclaim-agent: needs memory.reclaim (69 with the reason) or holds the usage by writing it" {
	requires root memcg jq
	local v2=/sys/fs/cgroup
	[ -d /sys/fs/cgroup/memory ] && v2=
	if [ -z "$v2" ]; then
		mpctl stress --strategy reclaim-agent --limit 64M --duration 1s
		[ "$status" -eq 69 ]
		assert_line --index 0 --partial "strategy 'reclaim-agent' needs memory.reclaim (cgroup v2, Linux 5.19+)"
		assert_line --index 0 --partial "its memory controller is on cgroup v1"
		return 0
	fi
	# cgroup v2 (the VM's boot): the agent writes, nothing is OOM-killed
	run -0 --separate-stderr "$MPCTL_BIN" stress --strategy reclaim-agent \
		--limit 64M --duration 2s --json
	jq -e '.strategy == "reclaim-agent" and .oom_kills == 0 and
		.cache.memory_reclaim_writes > 0 and
		.cache.memory_reclaim_bytes > 0' <<< "$output"
}

@test "stress --strategy: kernel strategies need the kernel's shrinker (69), bad names 64" {
	requires root
	if awk '$1 == "mempressure" && $4 == 1 { f = 1 } END { exit !f }' \
		/proc/cgroups; then
		skip "patched kernel"
	fi
	local s
	for s in kernel kernel-lazyfree; do
		mpctl stress --strategy "$s" --duration 1s
		[ "$status" -eq 69 ]
		assert_line --index 0 --partial "strategy '$s' needs the kernel's shrinker"
	done
	mpctl stress --strategy lru
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: unknown strategy 'lru'"
	mpctl stress --strategy none --miss-cost 5x
	[ "$status" -eq 64 ]
	mpctl stress --strategy none --seed -1
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: invalid --seed '-1': must be at least 0"
}

@test "stress: --help names every option" {
	mpctl stress --help
	assert_success
	local o
	for o in --chunk --threads --duration --limit --overcommit --backend \
		--cgroup --hog --json --output --target --high --lazyfree; do
		assert_output --partial -- "$o"
	done
}

@test "mempressure_test: the fixed RFC test frees on request without OOM" {
	requires root memcg
	local dir bin=$ROOT/build/mempressure_test
	[ -x "$bin" ] || skip "build/mempressure_test not built"
	# headroom for an idle machine's allocation rate (the small-limit
	# race of the emulator is a known open problem, not this test's topic)
	memcg mpt 512M
	run_mpt --threads 2 --duration 3s
	echo "$output" >&2
	[ "$status" -eq 0 ]
	assert_output --partial "emulated shrinker (memcg)"
	assert_line --regexp '^TOTAL: allocated [0-9]+ chunks, reclaimed [1-9][0-9]* chunks'
	assert_output --partial "short 0"
	[ "$(memcg_oom_kills)" = 0 ]
}

@test "mempressure_test --lazyfree: chunks MADV_FREE, the lost ones counted at the end" {
	requires root memcg
	local dir bin=$ROOT/build/mempressure_test
	[ -x "$bin" ] || skip "build/mempressure_test not built"
	memcg mptlazy 512M
	run_mpt --threads 2 --duration 2s --lazyfree
	echo "$output" >&2
	[ "$status" -eq 0 ]
	assert_line --regexp '^TOTAL: allocated [1-9][0-9]* chunks'
	assert_line --regexp '^lost [0-9]+ chunks \(MADV_FREE, dropped by reclaim\)$'
	[ "$(memcg_oom_kills)" = 0 ]
	# without it, no such line
	run_mpt --threads 1 --duration 500ms
	[ "$status" -eq 0 ]
	refute_line --regexp '^lost '
	run "$bin" --lazyfree=yes
	[ "$status" -eq 64 ]
}

@test "mempressure_test: SIGINT ends it with the totals, bad options give 64" {
	requires root memcg
	local dir bin=$ROOT/build/mempressure_test out=$BATS_TEST_TMPDIR/mpt.out
	[ -x "$bin" ] || skip "build/mempressure_test not built"
	memcg mptint 64M
	# 16 chunks stay below the limit: no OOM kill before the signal, at
	# any speed (at twice the limit a busy host's emulator fell behind
	# and the test was OOM-killed in 1.5 s, in a fresh-clone make check)
	bash -c 'echo $$ > "$1/cgroup.procs"; exec "$2" --threads 1 --max-chunks 16' \
		sh "$dir" "$bin" > "$out" 2>&1 &
	local pid=$! rc=0
	MP_PIDS+=("$pid")
	sleep 1.5
	kill -INT "$pid"
	wait_exit "$pid" 10 || rc=$?
	[ "$rc" -eq 0 ]
	grep -q '^TOTAL: allocated' "$out"
	run "$bin" --threads 0
	[ "$status" -eq 64 ]
	run "$bin" --bogus
	[ "$status" -eq 64 ]
}

@test "stress: emulation by sampling alone (--high off, as on cgroup2)" {
	requires root memcg jq
	local out=$BATS_TEST_TMPDIR/noth.json
	# sampling every 100 ms lets a fast engine overshoot by 100 MB or more
	# between samples: a limit with room for that. The run ends once a
	# chunk came back, at any speed (a 3 s run failed once on a busy
	# host, in a make check)
	run -0 --separate-stderr "$MPCTL_BIN" stress --high off --until-freed 1 \
		--duration 2m --limit 1G --json
	echo "$output" > "$out"
	jq -e '.events.thresholds == 0 and .events.samples > 5' "$out"
	jq -e '.emulation_policy.high == null' "$out"
	jq -e '.oom_kills == 0 and .exit_reason == "freed" and
		.chunks_freed > 0' "$out" || fail "stress document: $(cat "$out")"
}

@test "stress: emulation over PSI for a v1 memcg" {
	requires root memcg psi jq
	local out=$BATS_TEST_TMPDIR/psi.json
	run -0 --separate-stderr "$MPCTL_BIN" stress --backend psi \
		--until-freed 1 --duration 2m --json
	echo "$output" > "$out"
	jq -e '.backend == "psi" and .shrinker == "emulated"' "$out"
	jq -e '.oom_kills == 0 and .chunks_freed > 0' "$out"
	assert_cgroup_gone "$out"
}

# the transient cgroup of the run of pid $1: mpctl-stress-<pid>-<pid namespace>
run_cg() {
	echo "$(memcg_root)/mpctl-stress-$1-$(stat -L -c %i /proc/self/ns/pid)"
}

@test "stress: a run killed with SIGKILL leaves a cgroup the next run removes" {
	requires root memcg
	local cg pid i
	"$MPCTL_BIN" stress --duration 60s --limit 256M --threads 1 >/dev/null 2>&1 &
	pid=$!
	MP_PIDS+=("$pid")
	cg=$(run_cg "$pid")
	for i in $(seq 50); do
		[ -d "$cg" ] && break
		sleep 0.1
	done
	sleep 1
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	[ -d "$cg" ]
	# the engine dies with its parent
	for i in $(seq 50); do
		[ -z "$(cat "$cg/cgroup.procs")" ] && break
		sleep 0.1
	done
	mpctl stress --duration 1s --limit 256M --threads 1
	assert_success
	[ ! -d "$cg" ]
}

@test "stress, report: a bad --parent is refused, nothing left behind" {
	requires root memcg
	local before
	before=$(stress_cgroups)
	mpctl stress --parent "/nonexistent-$MP_RUN_ID" --duration 1s
	assert_failure 1
	assert_line --index 0 --partial "cannot open cgroup '/nonexistent-$MP_RUN_ID'"
	mpctl stress --parent "" --duration 1s
	assert_failure 64
	mpctl stress --parent / --cgroup / --duration 1s
	assert_failure 64
	assert_line --index 0 --partial "exclude each other"
	mpctl report --parent "/nonexistent-$MP_RUN_ID" -s shrinker -d 1s -r 1
	assert_failure 1
	assert_line --index 0 --partial "cannot open cgroup"
	[ "$before" = "$(stress_cgroups)" ]
}

@test "stress: a --parent limited below --limit is refused, nothing left behind" {
	requires root memcg
	local p before
	p=$(make_memcg low-parent 64M)
	before=$(ls "$p")
	mpctl stress --parent "$p" --limit 256M --duration 1s --threads 1
	assert_failure 1
	assert_line --index 0 --regexp "cannot give .* a limit of 268435456 bytes: cgroup '/$MP_RUN_ID-low-parent' is limited to 67108864 bytes"
	[ "$before" = "$(ls "$p")" ]
}

@test "stress: a stale cgroup of another pid namespace is never removed" {
	requires root memcg
	local other
	# pid 1 of namespace 1: another container's name, its process unseen
	other="$(memcg_root)/mpctl-stress-$BASHPID$RANDOM-1"
	mkdir "$other"
	MP_CGROUPS+=("$other")
	mpctl stress --duration 1s --limit 256M --threads 1
	assert_success
	[ -d "$other" ]
}

@test "stress: --until-freed ends the run once that many chunks came back" {
	requires root memcg jq
	# a cap far above the time any machine needs: the run must end on
	# the chunks, not on the clock
	run -0 --separate-stderr "$MPCTL_BIN" stress --until-freed 3 \
		--duration 10m --limit 64M --threads 2 --json
	jq -e '.exit_reason == "freed" and .parameters.until_freed == 3' <<< "$output"
	jq -e '.chunks_freed >= 3 and .oom_kills == 0' <<< "$output"
	jq -e '.duration_ns < 600000000000' <<< "$output"
	run -0 --separate-stderr "$MPCTL_BIN" stress --duration 500ms \
		--limit 64M --json
	jq -e '.parameters.until_freed == null' <<< "$output"
}

@test "stress: --swap is recorded in the parameters, no swap by default" {
	requires root memcg jq
	run -0 --separate-stderr "$MPCTL_BIN" stress --swap --duration 1s \
		--limit 256M --json
	jq -e '.parameters.swap == true and .oom_kills == 0' <<< "$output"
	run -0 --separate-stderr "$MPCTL_BIN" stress --duration 1s \
		--limit 256M --json
	jq -e '.parameters.swap == false' <<< "$output"
	run "$MPCTL_BIN" stress --swap=yes
	[ "$status" -eq 64 ]
}

@test "stress: --no-early-warning is --no-assist: parameters.assist false, either way" {
	requires root memcg jq
	run -0 --separate-stderr "$MPCTL_BIN" stress --duration 1s \
		--limit 256M --json
	jq -e '.parameters.assist == true' <<< "$output"
	local o
	for o in --no-assist --no-early-warning; do
		run -0 --separate-stderr "$MPCTL_BIN" stress "$o" --duration 1s \
			--limit 256M --json
		jq -e '.parameters.assist == false and .oom_kills == 0' \
			<<< "$output"
	done
	run "$MPCTL_BIN" stress --no-early-warning=yes
	[ "$status" -eq 64 ]
	mpctl stress --help
	assert_output --partial -- "--no-assist, --no-early-warning"
}

@test "stress: an early failure leaves --output's file and device node alone" {
	local d=$BATS_TEST_TMPDIR
	echo data >"$d/f"
	mknod "$d/null" c 1 3
	mpctl stress --cgroup /nonexistent-$MP_RUN_ID --duration 1s --output "$d/f"
	[ "$status" -eq 1 ]
	[ "$(cat "$d/f")" = data ]
	mpctl stress --cgroup /nonexistent-$MP_RUN_ID --duration 1s --output "$d/null"
	[ "$status" -eq 1 ]
	[ -c "$d/null" ]
	[ -z "$(ls -A "$d" | grep '^\.')" ]
}

@test "stress: a cgroup name that is not UTF-8 is escaped in the JSON, not lost" {
	requires root memcg jq
	local dir
	memcg $'bad\xff\\' 256M
	mpctl stress --json --cgroup "$dir" --duration 1s --threads 1
	[ "$status" -le 1 ]	# 1: OOM-killed on a busy machine
	echo "$output" | jq -e --arg p "/$MP_RUN_ID-bad\\xff\\\\" '
		.cgroup == $p and (.parameters.cgroup | endswith($p))'
}

@test "stress, mempressure_test: a chunk that is not a page multiple is a usage error" {
	local bin
	mpctl stress --chunk 6000
	[ "$status" -eq 64 ]
	assert_line --index 0 --partial "invalid --chunk '6000': not a multiple of the page size"
	mpctl stress --chunk 1001K
	[ "$status" -eq 64 ]
	bin=$(dirname "$MPCTL_BIN")/mempressure_test
	[ -x "$bin" ] || skip "no $bin"
	run "$bin" --chunk 6000 --duration 1s
	[ "$status" -eq 64 ]
	[[ "${lines[0]}" == *"a multiple of the page size"* ]]
}

@test "stress: the smallest limit, and a chunk above --cgroup's own limit, are usage errors" {
	requires root memcg
	local dir
	mpctl stress --limit 4M
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: invalid --limit '4M': below 16.0 MiB"
	memcg small 32M
	mpctl stress --cgroup "$dir" --chunk 64M --duration 1s
	[ "$status" -eq 64 ]
	assert_line --index 0 --partial "is larger than the limit 33554432 of cgroup"
}

@test "stress --json on a TTY: progress on stderr, one document on stdout" {
	requires root memcg jq
	command -v script >/dev/null || skip "no script(1)"
	# 1: the engine was OOM-killed on a busy machine, still a document
	run script -qec "$MPCTL_BIN stress --json --duration 2s --limit 256M --threads 1 2>$BATS_TEST_TMPDIR/err" /dev/null
	[ "$status" -le 1 ]
	refute_output --partial $'\033'
	echo "$output" | tr -d '\r' | jq -e '.schema.name == "mpctl-stress"'
	# stderr on the TTY: the progress is there, stdout has the document
	run script -qec "$MPCTL_BIN stress --json --duration 2s --limit 256M --threads 1 >$BATS_TEST_TMPDIR/out" /dev/null
	[ "$status" -le 1 ]
	assert_output --partial "held"
	jq -e '.schema.name == "mpctl-stress"' "$BATS_TEST_TMPDIR/out"
}

@test "stress: with stdout closed, --output gets one document" {
	requires root memcg jq
	local f=$BATS_TEST_TMPDIR/one.json
	run bash -c "'$MPCTL_BIN' stress --json --duration 1s --threads 1 --output '$f' >&-"
	[ "$status" -le 1 ]	# 1: OOM-killed on a busy machine
	[ "$(jq -s length "$f")" -eq 1 ]
}

@test "stress: a write error is reported once" {
	requires root memcg
	[ -w /dev/full ] || skip "no /dev/full"
	run bash -c "'$MPCTL_BIN' stress --json --duration 1s --threads 1 >/dev/full"
	[ "$status" -eq 1 ]
	[ "$(grep -c 'write error' <<<"$output")" -eq 1 ]
	assert_line "mpctl stress: write error: No space left on device"
}

@test "stress --hog: a run killed with SIGKILL leaves no temporary directory or file" {
	requires root memcg stress-ng
	local pid i marker=$BATS_TEST_TMPDIR/marker out=$BATS_TEST_TMPDIR/out
	touch "$marker"
	mkdir "$out"
	sleep 1.1
	"$MPCTL_BIN" stress --duration 60s --limit 256M --threads 1 \
		--output "$out/k.json" \
		--hog "--vm 1 --vm-bytes 8m" >/dev/null 2>&1 &
	pid=$!
	MP_PIDS+=("$pid")
	for i in $(seq 50); do
		pgrep -P "$pid" -f stress-ng >/dev/null && break
		pgrep -f "stress-ng --vm 1 --vm-bytes 8m --timeout 60" >/dev/null && break
		sleep 0.1
	done
	sleep 0.5
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	run find /tmp -maxdepth 1 -name 'mpctl-stress-*' -newer "$marker"
	assert_output ""
	# --output's temporary file has no name before the end (O_TMPFILE)
	run ls -A "$out"
	assert_output ""
	# the hog dies with the run (its process group, SIGKILL on our exit)
	for i in $(seq 50); do
		pgrep -f "stress-ng --vm 1 --vm-bytes 8m --timeout 60" >/dev/null || break
		sleep 0.1
	done
	! pgrep -f "stress-ng --vm 1 --vm-bytes 8m --timeout 60"
	# the run's cgroups, which a SIGKILLed run cannot remove
	local cg c
	cg=$(run_cg "$pid")
	for c in hog engine ""; do
		[ ! -d "$cg/$c" ] || rm_cgroup "$cg/$c"
	done
}

@test "stress: the hidden engine applet refuses an fd that is not its memfd (no SIGBUS)" {
	local f=$BATS_TEST_TMPDIR/f
	echo x >"$f"
	for fd in "3<$f" "3</dev/null" "3<&0" "3<&-"; do
		eval "run --separate-stderr \"\$MPCTL_BIN\" __stress-engine --shm 3 $fd" \
			</dev/null
		assert_failure 64
		[ "$stderr" = "mpctl __stress-engine: fd 3 is not the shared memory of 'mpctl stress'" ]
	done
	[ "$(cat "$f")" = x ]
	# its settings come from the memfd alone: no other argument
	for args in "" "--shm" "--shm x" "--shm 3 --chunk 4096" "--chunk 4096"; do
		# shellcheck disable=SC2086 # words on purpose
		run --separate-stderr "$MPCTL_BIN" __stress-engine $args
		assert_failure 64
		[ "$stderr" = "mpctl __stress-engine: the engine of 'mpctl stress', not a command" ]
	done
}

@test "stress: a limit too small for the threads in flight is refused with the smallest that works" {
	requires root memcg
	local before
	before=$(stress_cgroups)
	for l in 16 24 32 48; do
		mpctl stress --limit ${l}M --duration 1s
		assert_failure 64
		assert_line --index 0 "mpctl stress: limit $l.0 MiB is too small for 4 threads of 1.0 MiB chunks: at least 64.0 MiB (or fewer threads, smaller chunks)"
	done
	[ "$before" = "$(stress_cgroups)" ]
}

@test "stress: --cgroup without a memory limit (the root) is refused unless --force" {
	requires root memcg
	mpctl stress --cgroup / --duration 1s
	assert_failure 64
	assert_line --index 0 "mpctl stress: cgroup '/' has no memory limit: the run would pressure the whole host (--force to do so)"
	local dir
	memcg unlim
	mpctl stress --cgroup "/$(basename "$dir")" --duration 1s
	assert_failure 64
	assert_line --index 0 --partial "has no memory limit"
}

@test "stress: --chunk is checked against the --cgroup's own limit, not the default 256M" {
	requires root memcg jq
	local dir
	memcg big 1G
	mpctl stress --cgroup "/$(basename "$dir")" --chunk 300M --threads 1 \
		--duration 1s --json
	[ "$status" -ne 64 ]
	echo "$output" | jq -e '.limit_bytes == 1073741824 and .parameters.chunk_size_bytes == 314572800 and .chunks_allocated > 0'
}

@test "stress: an unprivileged run on v1 names the cgroup it could not make, once, with a hint" {
	requires root memcg
	command -v setpriv >/dev/null || skip "no setpriv"
	[ -n "$(memcg_root)" ] || skip "not cgroup v1"
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$MPCTL_BIN" stress --duration 1s
	assert_failure 77
	[[ $stderr == "mpctl stress: cannot create cgroup '/mpctl-stress-"* ]]
	[[ $stderr == *"(cgroup v1: only root, or a user given a directory of the hierarchy, can; --cgroup runs in an existing cgroup): Permission denied" ]]
	[[ $stderr != *"//"* ]]
}

@test "stress: -o means what it means in report: the document instead of stdout, indented only with -p; -q and -v" {
	requires root memcg jq
	local f=$BATS_TEST_TMPDIR/o.json
	# -q: nothing on stdout or stderr, the file compact (one line)
	mpctl stress --duration 1s --threads 1 -q -o "$f"
	assert_success
	assert_output ""
	[ "$(wc -l <"$f")" -eq 1 ]
	jq -e '.schema.name == "mpctl-stress"' "$f"
	# -p -o: the document indented in the file, none on stdout; -v: one
	# line on stderr with the set-up and the exit reason
	mpctl stress --duration 1s --threads 1 -p -o "$f" -v
	assert_success
	assert_output --regexp "^mpctl stress: backend [a-z-]+, shrinker [a-z]+, cgroup '.+', ended by duration$"
	[ "${#lines[@]}" -eq 1 ]
	[ "$(wc -l <"$f")" -gt 10 ]
	jq -e '.exit_reason == "duration"' "$f"
}

@test "stress --cotenant, --stop-answering: bad values are one line and 64, no cgroup made" {
	requires root memcg
	local before bad
	before=$(stress_cgroups)
	for bad in 0 -1s 5x soon 0% 100% 150%; do
		mpctl stress --stop-answering "$bad" -d 1s
		[ "$status" -eq 64 ]
		assert_line --index 0 --regexp "^mpctl stress: invalid --stop-answering '$bad': "
		[ "${#lines[@]}" -eq 2 ]
	done
	mpctl stress --stop-answering 2s -d 2s
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: --stop-answering must come before the end of the run: less than --duration"
	[ "${#lines[@]}" -eq 2 ]
	mpctl stress --stop-answering 1s --strategy psi -d 2s
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: --stop-answering and --strategy exclude each other: the stress engine stops answering, the cache answers at once"
	for bad in 1K 65M big; do
		mpctl stress --cotenant="$bad" -d 1s
		[ "$status" -eq 64 ]
		assert_line --index 0 --regexp "^mpctl stress: invalid --cotenant '$bad': "
		[ "${#lines[@]}" -eq 2 ]
	done
	# SIZE only as --cotenant=SIZE: a word after it is an argument
	mpctl stress --cotenant 64K -d 1s
	[ "$status" -eq 64 ]
	assert_line --index 0 "mpctl stress: unexpected argument '64K'"
	[ "$before" = "$(stress_cgroups)" ]
}

@test "stress --cotenant: its operations timed in the JSON and the summary; null without" {
	requires root memcg jq
	local out=$BATS_TEST_TMPDIR/run.json
	run -0 --separate-stderr "$MPCTL_BIN" stress -d 3s -L 128M --threads 2 \
		--cotenant -o "$out"
	[ "$status" -ne 69 ] || skip "no pressure interface"
	jq -e '.parameters.cotenant_bytes == 65536 and
		.parameters.stop_answering_ns == null and
		.stopped_answering_ns == null and .exit_reason == "duration"' "$out"
	# 1 ms apart for 3 s: hundreds at least, at most one a ms
	jq -e '.cotenant | .size_bytes == 65536 and .killed == false and
		.ops >= 300 and .ops <= 3100 and
		.ops_per_sec > 100 and .ops_per_sec <= 1000 and
		.p50_ns > 0 and .p50_ns <= .p99_ns and .p99_ns <= .max_ns and
		.mean_ns <= .max_ns' "$out"
	local line
	line=$(jq -r '.cotenant | "  co-tenant     \(.ops) ops of 65536 bytes"' "$out")
	assert_line --partial "$line"
	assert_line --regexp '^  co-tenant     [0-9]+ ops of 65536 bytes \([0-9]+/s\): p50 [0-9]+ us, p99 [0-9]+ us, max [0-9]+ us$'
	# the same line from the saved document
	mpctl stress --input "$out"
	assert_success
	assert_line --regexp '^  co-tenant     [0-9]+ ops of 65536 bytes'
	assert_cgroup_gone "$out"
	# --cotenant=SIZE, rounded down to a page
	run -0 --separate-stderr "$MPCTL_BIN" stress -d 1s -L 64M --threads 1 \
		--cotenant=130K --json
	jq -e '.parameters.cotenant_bytes == 131072 and
		.cotenant.size_bytes == 131072 and .cotenant.ops > 0' <<<"$output"
	# without: null, and no summary line
	run -0 --separate-stderr "$MPCTL_BIN" stress -d 1s -L 64M --threads 1 \
		-o "$out"
	jq -e '.cotenant == null and .parameters.cotenant_bytes == null' "$out"
	refute_line --partial "co-tenant"
}

@test "stress --stop-answering 25%: no request read after it, the time in the JSON" {
	requires root memcg jq
	run --separate-stderr "$MPCTL_BIN" stress -d 4s -L 64M --threads 2 \
		--stop-answering 25% --cotenant --json
	[ "$status" -ne 69 ] || skip "no pressure interface"
	# without swap, a program that stops answering may be OOM-killed
	[ "$status" -eq 0 ] ||
		jq -e '.exit_reason == "engine_killed"' <<<"$output"
	jq -e '.parameters.stop_answering_ns == 1000000000 and
		.stopped_answering_ns >= 1000000000 and
		.stopped_answering_ns < 1500000000' <<<"$output"
	# 100 ms after it, the requests read stay what they are at the end
	jq -e '.stopped_answering_ns as $s | .reclaim_requests as $n |
		[.timeline[] | select(.t_ns > $s + 100000000) | .requests] |
		all(. == $n)' <<<"$output"
	jq -e '.cotenant.ops > 0' <<<"$output"
}

@test "stress --cotenant: SIGTERM ends the run with its report, no co-tenant or engine left" {
	requires root memcg jq
	local out=$BATS_TEST_TMPDIR/run.json pid i kids=() k
	"$MPCTL_BIN" stress -d 60s -L 64M --threads 1 --cotenant \
		-o "$out" >/dev/null 2>&1 &
	pid=$!
	MP_PIDS+=("$pid")
	# the engine and the co-tenant: children of the run
	for ((i = 0; i < 100; i++)); do
		mapfile -t kids < <(pgrep -P "$pid")
		[ "${#kids[@]}" -lt 2 ] || break
		sleep 0.1
	done
	[ "${#kids[@]}" -eq 2 ] || fail "children of the run: ${kids[*]}"
	pgrep -P "$pid" -f -- '__stress-engine --shm [0-9]+ --cotenant$'
	sleep 1
	kill -TERM "$pid"
	wait_exit "$pid" 10 || fail "mpctl stress ended with status $?"
	for k in "${kids[@]}"; do
		! kill -0 "$k" 2>/dev/null || fail "child $k left behind"
	done
	jq -e '.exit_reason == "interrupted" and .cotenant.ops > 0' "$out"
	assert_cgroup_gone "$out"
}

# the engine of run $1: its child running the hidden applet, once started
engine_of() {
	local i e
	for ((i = 0; i < 100; i++)); do
		e=$(pgrep -P "$1" -f -- '__stress-engine --shm [0-9]+$') &&
			{ echo "$e"; return 0; }
		sleep 0.1
	done
	return 1
}

@test "stress: an engine that does not stop at the end is killed, and the run failed" {
	requires root memcg jq
	local out=$BATS_TEST_TMPDIR/run.json pid eng rc=0
	"$MPCTL_BIN" stress -d 1s -L 64M --threads 1 -o "$out" \
		>/dev/null 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	MP_PIDS+=("$pid")
	eng=$(engine_of "$pid") || fail "no engine in run $pid"
	# frozen: it reads no stop, as a hung engine would
	kill -STOP "$eng"
	wait_exit "$pid" 30 || rc=$?
	cat "$BATS_TEST_TMPDIR/err" >&2
	[ "$rc" -eq 1 ]
	jq -e '.exit_reason == "engine_unresponsive"' "$out"
	grep -q "the engine did not stop within 5 s of the run's end and was killed" \
		"$BATS_TEST_TMPDIR/err"
	! kill -0 "$eng" 2>/dev/null
	assert_cgroup_gone "$out"
}

@test "stress: an OOM kill after the run's end, in its teardown, is not the run's" {
	requires root memcg jq
	local out=$BATS_TEST_TMPDIR/run.json pid eng cg rc=0 t0 i
	"$MPCTL_BIN" stress -d 3s -L 32M --threads 1 -o "$out" >/dev/null 2>&1 &
	pid=$!
	MP_PIDS+=("$pid")
	eng=$(engine_of "$pid") || fail "no engine in run $pid"
	t0=$(date +%s%N)
	cg=$(memcg_root)$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' \
		"/proc/$eng/cgroup")
	# the engine near the limit, then frozen: it holds its memory, and
	# the end of the run waits for it (up to 5 s)
	for ((i = 0; i < 50; i++)); do
		[ "$(cat "$cg/memory.usage_in_bytes")" -lt $((24 << 20)) ] || break
		sleep 0.05
	done
	kill -STOP "$eng"
	[ "$i" -lt 50 ] || fail "the engine never came near the limit"
	# past the run's end (3 s from its start, before t0), within the 5 s
	while [ $(($(date +%s%N) - t0)) -lt 4000000000 ]; do sleep 0.1; done
	kill -0 "$pid"
	# what a teardown racing the limit does: more than the limit asked
	# for in the engine's cgroup; the OOM killer takes the engine
	bash -c 'echo $$ >"$1/cgroup.procs" &&
		exec dd if=/dev/zero of=/dev/null bs=48M count=1' _ "$cg" \
		2>/dev/null || true
	wait_exit "$pid" 30 || rc=$?
	jq . "$out" >&2
	jq -e '.oom_kills == 0 and .teardown_oom_kills >= 1' "$out"
	[ "$rc" -eq 0 ]
	mpctl stress --input "$out"
	assert_output --regexp 'OOM kills +0 \(and [1-9][0-9]* after the run, in its teardown: not the run.s\)'
	assert_cgroup_gone "$out"
}

@test "stress: the reclaim counters' growth over the run, the host's and the cgroup's, in the JSON" {
	requires root memcg jq
	local out=$BATS_TEST_TMPDIR/run.json
	run -0 --separate-stderr "$MPCTL_BIN" stress -d 1s -L 64M --threads 1 --json
	# the keys this kernel has, each a growth (>= 0)
	jq -e '(.vmstat | length > 0 and all(.[]; type == "number" and . >= 0) and
		has("pgmajfault") and has("oom_kill")) and
		(.cgroup_counters.memory_stat | type == "object") and
		(.cgroup_counters.memory_events | has("oom_kill"))' <<<"$output"
	# a cache that never gives memory back is OOM-killed: the counters
	# of the run say so, the host's and the cgroup's
	run -1 --separate-stderr "$MPCTL_BIN" stress --strategy none \
		--miss-cost 1us --limit 64M --duration 2m --json
	jq -e '.oom_kills >= 1 and .vmstat.oom_kill >= .oom_kills and
		.cgroup_counters.memory_events.oom_kill >= 1' <<<"$output"
}

@test "stress --metrics: the run's requests, chunks and OOM kills, for promtool and OpenMetrics" {
	requires root memcg jq
	local d=$BATS_TEST_TMPDIR
	mpctl stress -d 2s -L 64M -q -o "$d/r.json" --metrics "$d/m.prom"
	assert_success
	check_metrics "$d/m.prom"
	for k in reclaim_requests chunks_requested chunks_freed oom_kills; do
		grep -q "^mpctl_stress_${k}_total{backend=\".*\",cgroup=\".*\"} $(jq ".$k" "$d/r.json")$" "$d/m.prom"
	done
	grep -q "^mpctl_stress_peak_usage_bytes{.*} $(jq .peak_usage_bytes "$d/r.json")$" "$d/m.prom"
	# '-': the exposition on stdout instead of the summary
	run --separate-stderr "$MPCTL_BIN" stress -d 1s -L 64M --metrics - \
		--metrics-format openmetrics
	assert_success
	printf '%s\n' "$output" >"$d/m.om"
	check_metrics "$d/m.om" openmetrics
	refute_output --partial "reclaim requests"
	mpctl stress -d 1s --json --metrics -
	assert_failure 64
	assert_output --partial "--metrics - and --json both write to stdout"
}
