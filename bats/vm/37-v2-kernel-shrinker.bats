#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The kernel alone keeps cooperating programs alive on cgroup v2: no
# emulator, no usage early warning. Each test fails when the program was
# OOM-killed, when no memory came back, or when the requests went to the
# wrong cgroup: the limit sits on a parent, the programs in its children.
# The parent has memory.high below memory.max unless a test says
# otherwise. The kernel asks from 1/8 below memory.high and memory.max,
# in the charge path, and over memory.high; no task ever waits for a
# program: a request is advice, and the limits are enforced as in a
# kernel without userspace shrinkers.

# MP_PIDS (helpers) is filled in each test, in the same subshell
# shellcheck disable=SC2030,SC2031
load helpers

setup() {
	mp_v2_setup
}

teardown() {
	[ -z "${LRU_GEN_WAS:-}" ] ||
		echo "$LRU_GEN_WAS" >/sys/kernel/mm/lru_gen/enabled
	[ -z "${THP_WAS:-}" ] ||
		echo "$THP_WAS" >/sys/kernel/mm/transparent_hugepage/enabled
	mp_v2_teardown
}

hog() {
	"$MP_IN_CG" "$1" -- stress-ng --vm 1 --vm-bytes "$2" --vm-keep \
		--timeout "${3}s" --quiet || true
}

# chunks asked of an mpvm shrinker, from its output
asked() {
	awk '/^request/ { s += $2 } END { print s + 0 }' "$1"
}

@test "v2 kernel alone: mpctl stress --no-assist, 4 threads, twice a 128M limit, 0 OOM kills" {
	requires mpctl
	mp_run mpctl stress --no-assist -b mempressure --chunk 1M --threads 4 \
		--overcommit 2 --duration 10s --limit 128M --json
	assert_success
	echo "$output" | jq -e '.exit_reason == "duration" and .oom_kills == 0 and
		.emulator == null and .early_warning == false and
		.reclaim_requests > 0 and .chunks_freed > 0 and
		.peak_usage_bytes <= .limit_bytes' >&2 ||
		fail "stress document: $output"
}

@test "v2 kernel alone at memory.max only: asked from a margin below max, offered chunks keep it alive" {
	requires mpctl
	# --no-throttle: no memory.high, no swap (docker --memory, systemd
	# MemoryMax= alone). Nothing waits for the program: with its chunks
	# not offered, four allocating threads outrun its answers to
	# memory.max, where the OOM killer runs as in the stock kernel. That
	# run is recorded, not asserted (6.12, 2026-12-07: OOM-killed after
	# 4.5 s, 209 requests, 1624 chunks freed; with the kernel waiting for
	# the program, as the series did before, 0 OOM kills)
	mp_run --separate-stderr mpctl stress --no-assist -b mempressure \
		--no-throttle --chunk 1M --threads 4 --overcommit 2 \
		--duration 10s --limit 128M --json
	echo "# not offered: $(echo "$output" | jq -c '{exit_reason, oom_kills,
		reclaim_requests, chunks_freed}' 2>/dev/null || echo "$output")" >&3
	# offered (MADV_FREE, a marker in every chunk): reclaim takes what
	# the answers leave, no OOM kill, and the program is still asked
	mp_run mpctl stress --no-assist -b mempressure --no-throttle --lazyfree \
		--chunk 1M --threads 4 --overcommit 2 --duration 10s --limit 128M \
		--json
	assert_success
	echo "$output" | jq -e '.oom_kills == 0 and .exit_reason == "duration" and
		.reclaim_requests > 0 and (.chunks_lost | type) == "number"' >&2 ||
		fail "stress document: $output"
	echo "# offered: $(echo "$output" | jq -c '{oom_kills, reclaim_requests,
		chunks_freed, chunks_lost}')" >&3
}

# thp_always: transparent huge pages on every anonymous mapping, restored
# by teardown
thp_always() {
	local f=/sys/kernel/mm/transparent_hugepage/enabled
	[ -w "$f" ] || skip "no THP (CONFIG_TRANSPARENT_HUGEPAGE)"
	THP_WAS=$(sed 's/.*\[\(.*\)\].*/\1/' "$f")
	echo always >"$f"
}

# assert_no_stall DOC: no allocation of 500 ms or more (issue 21's
# bound; before the redesign 7-10 per run, up to 4 s), not OOM-killed.
# Traced under load (two VMs side by side, 6 runs), the worst was 388 ms:
# mmap_lock for writing and the kernel's 200 ms wait. No gap probe here:
# a FIFO thread on every vCPU made the stalls it was meant to excuse.
assert_no_stall() {
	echo "$1" | jq -e '.oom_kills == 0 and .exit_reason == "duration" and
		.reclaim_requests > 0 and .alloc_latency.over_500ms == 0' >&2 ||
		fail "stress document: $1"
}

# munmap_pair [ARGS...]: the ordinary program (3 allocator threads that
# populate 1M chunks, a server that answers with munmap()), its chunks
# offered (MADV_FREE, --lazyfree), beside the same program touching its
# chunks page by page, THP always, each 6 s, with ARGS. Offered, because
# nothing waits for the program: mainline throttles populating allocators
# over memory.high with mmap_lock held, and a munmap() answer waits behind
# them; without offering, on a busy host (load 6 to 12), 6.12 measured 2
# allocations over 500 ms (674 ms at most) on 2026-12-07, as the stock
# kernel would. Fails on an allocation of 500 ms or more in the populating run, an
# OOM kill in either, a populating throughput below half the control's or
# a populating p99 latency above three times the control's
munmap_pair() {
	local pop touch
	thp_always
	mp_run mpctl stress --no-assist -b mempressure --free munmap --lazyfree \
		"$@" --chunk 1M --threads 3 --overcommit 2 --duration 6s \
		--limit 128M --json
	assert_success
	pop=$output
	mp_run mpctl stress --no-assist -b mempressure --free munmap --lazyfree \
		"$@" --chunk 1M --threads 3 --overcommit 2 --duration 6s \
		--limit 128M --no-populate --json
	assert_success
	touch=$output
	jq -nc --argjson p "$pop" --argjson t "$touch" \
		'{populate: $p.alloc_latency, touch: $t.alloc_latency,
		  chunks: [$p.chunks_allocated, $t.chunks_allocated],
		  requests: [$p.reclaim_requests, $t.reclaim_requests],
		  swap_growth: [$p.swap_growth_bytes, $t.swap_growth_bytes],
		  oom_kills: [$p.oom_kills, $t.oom_kills]}' | sed 's/^/# /' >&3
	# no populate of 500 ms or more (assert_no_stall)
	assert_no_stall "$pop"
	echo "$touch" | jq -e '.oom_kills == 0 and .exit_reason == "duration"' >&2 ||
		fail "page-by-page run: $touch"
	# throughput within 2x of the page-by-page control, side by side
	[ $(($(echo "$pop" | jq .chunks_allocated) * 2)) -ge \
	  "$(echo "$touch" | jq .chunks_allocated)" ] ||
		fail "populating allocated less than half of page by page"
	# and its p99 allocation latency within 3x of the control's: with a
	# wait for the program in the charge path, even one capped at 200 ms
	# (an earlier version of the series), it was 5-6.5x (107-124 ms
	# against 16-24) and no allocation reached 500 ms; without, 0.8-1.34x
	[ "$(echo "$pop" | jq .alloc_latency.p99_ns)" -le \
	  $((3 * $(echo "$touch" | jq .alloc_latency.p99_ns))) ] ||
		fail "populating p99 more than three times page by page's"
}

# bats test_tags=det
@test "v2 kernel alone, THP: a program that frees with munmap() while its allocators populate, its chunks offered, does not stall" {
	requires mpctl
	# issue 21: populating allocators sat in memory.high throttling with
	# mmap_lock held, the server's munmap() waited behind them, the one
	# request could not be answered: 7-10 populates of 500 ms or more,
	# p99 2.5-3.1 s, 102-111 chunks in 10 s against 4048 page by page
	munmap_pair
}

# bats test_tags=det
@test "v2 kernel alone, THP and zram swap: munmap() answers, populating allocators, chunks offered, no stall" {
	requires mpctl swap
	munmap_pair --swap
}

@test "v2 kernel alone, MGLRU and zram swap: the program is asked before it is swapped out" {
	requires mpctl swap
	[ -w /sys/kernel/mm/lru_gen/enabled ] || skip "no MGLRU (CONFIG_LRU_GEN)"
	LRU_GEN_WAS=$(cat /sys/kernel/mm/lru_gen/enabled)
	echo y >/sys/kernel/mm/lru_gen/enabled
	# MGLRU reclaims at the first priority, where a shrinker's share
	# (its claim >> 12) is below a batch: unless the kernel asks the
	# program first, its chunks go to zram and it is hardly asked.
	# The run ends once the program gave back half the limit (64
	# chunks), at any speed; without asking first (measured on 6.12)
	# it got 3 requests in 10 s, allocated 132 chunks and swapped 8M
	mp_run mpctl stress --no-assist -b mempressure --swap --chunk 1M \
		--threads 4 --overcommit 2 --until-freed 64 --duration 3m \
		--limit 128M --json
	assert_success
	echo "$output" | jq -e '.oom_kills == 0 and .exit_reason == "freed" and
		.chunks_freed >= 64' >&2 || fail "stress document: $output"
	# the seed: "it also shouldn't use much swap space" (5% of the limit)
	echo "$output" | jq -e '.swap_growth_bytes * 20 <= .limit_bytes' >&2 ||
		fail "swap grew by $(echo "$output" | jq .swap_growth_bytes) bytes"
}

@test "v2 kernel alone: the limit on a parent, a program in a child is asked and survives" {
	requires mpctl
	local d
	d=$(mp_v2_parent plim 48M 3/4 app)
	mp_run "$MP_IN_CG" "$d/app" -- mpvm v2-shrinker "$d/app" 1048576 40 -a \
		-t 30000 -- stress-ng --vm 1 --vm-bytes 24M --vm-keep --timeout 10s --quiet
	assert_success
	assert_line --regexp '^request [1-9]'
	refute_line --regexp '^over'
	[ "$(mp_oom_kills "$d")" = 0 ] || fail "OOM kills: $(mp_oom_kills "$d")"
}

@test "v2 kernel alone: siblings under one limit are asked in proportion to what they hold" {
	local d a b
	d=$(mp_v2_parent sib 64M 3/4 a b hog)
	mp_bg_mpvm "$BATS_TEST_TMPDIR/a" "$d/a" v2-shrinker "$d/a" 1048576 24 -a -t 60000 -k
	mp_bg_mpvm "$BATS_TEST_TMPDIR/b" "$d/b" v2-shrinker "$d/b" 1048576 6 -a -t 60000 -k
	hog "$d/hog" 64M 10
	mp_stop_bg
	a=$(asked "$BATS_TEST_TMPDIR/a")
	b=$(asked "$BATS_TEST_TMPDIR/b")
	echo "asked: 24M holder $a chunks, 6M holder $b chunks" >&2
	[ "$a" -gt 0 ] || fail "the 24M holder was never asked"
	[ "$b" -gt 0 ] || fail "the 6M holder was never asked"
	# 4:1 held; a factor 2.5 either way is still "in proportion"
	[ $((a * 10)) -ge $((b * 16)) ] && [ "$a" -le $((b * 10)) ] ||
		fail "not in proportion to what they hold: $a vs $b"
	! grep -q '^over' "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b" ||
		fail "a shrinker was asked for more than it held"
}

@test "v2 kernel alone: a claim of 2^62 bytes takes no more than the memory cgroup's charge from an honest shrinker" {
	local d alone h
	# the honest shrinker alone, then the same beside a liar: side by
	# side in one boot, the same hog
	d=$(mp_v2_parent lie 48M 3/4 app hog)
	mp_bg_mpvm "$BATS_TEST_TMPDIR/alone" "$d/app" v2-shrinker "$d/app" 1048576 16 \
		-a -t 60000 -k
	hog "$d/hog" 64M 10
	mp_stop_bg
	alone=$(asked "$BATS_TEST_TMPDIR/alone")
	# the liar holds nothing and claims 1024 chunks of 2^52 bytes; its
	# claim counts for at most what the memory cgroup is charged for,
	# about the honest 16M, so the honest one keeps about half of the
	# asks (without that bound: 16M against 2^62, never asked)
	mp_bg_mpvm "$BATS_TEST_TMPDIR/liar" "$d/app" v2-shrinker "$d/app" \
		4503599627370496 1024 -t 60000 -k
	mp_bg_mpvm "$BATS_TEST_TMPDIR/honest" "$d/app" v2-shrinker "$d/app" 1048576 16 \
		-a -t 60000 -k
	hog "$d/hog" 64M 10
	mp_stop_bg
	h=$(asked "$BATS_TEST_TMPDIR/honest")
	echo "# asked: honest alone $alone chunks, beside the liar $h chunks, liar $(asked "$BATS_TEST_TMPDIR/liar") chunks" >&3
	[ "$alone" -gt 0 ] || fail "the honest shrinker alone was never asked"
	[ $((h * 3)) -ge "$alone" ] ||
		fail "beside the liar the honest shrinker was asked $h chunks, alone $alone: under a third"
}

# cotenant CGDIR DIR: milliseconds a co-tenant in CGDIR takes to write
# 48M to a file in the tmpfs DIR in 64K writes, twice, each write(2) a
# small charge
cotenant() {
	local t0 t1
	# microseconds; busybox's date has no %N
	t0=${EPOCHREALTIME/./}
	# shellcheck disable=SC2016 # expanded by the inner shell
	"$MP_IN_CG" "$1" -- sh -c 'for i in 1 2; do
		dd if=/dev/zero of="$1/f" bs=64k count=768 status=none || exit 1
		rm -f "$1/f"
	done' sh "$2" || return 1
	t1=${EPOCHREALTIME/./}
	echo $(((t1 - t0) / 1000))
}

high_events() {
	sed -n 's/^high //p' "$1/memory.events"
}

# bats test_tags=det
@test "v2: a stopped shrinker costs only itself: a co-tenant over memory.high keeps its pace" {
	requires swap
	local d shm=$BATS_TEST_TMPDIR/shm alone with h0 h1 h2 p
	# memory.high 32M under a 128M memory.max, with the zram swap: the
	# co-tenant's 48M of tmpfs is over memory.high in both runs, and
	# memory.high reclaim swaps the excess out (anonymous memory without
	# swap was throttled to a standstill, alone)
	d=$(mp_v2_parent stop 128M 32M app)
	echo max >"$d/memory.swap.max"
	mkdir -p "$shm"
	mount -t tmpfs -o size=64m none "$shm"
	h0=$(high_events "$d")
	alone=$(cotenant "$d/app" "$shm") || { umount "$shm"; fail "the co-tenant failed alone"; }
	h1=$(high_events "$d")
	# the same beside a shrinker that claims 64 chunks and never reads a
	# request: stopped, it cannot
	mp_bg_mpvm "$BATS_TEST_TMPDIR/stopped" "$d/app" v2-shrinker "$d/app" \
		1048576 64 -t 60000 -k
	p=${MP_PIDS[-1]}
	kill -STOP "$p"
	with=$(cotenant "$d/app" "$shm") || with=
	h2=$(high_events "$d")
	kill -CONT "$p"
	umount "$shm"
	echo "# co-tenant: alone $alone ms, beside the stopped shrinker ${with:-failed} ms; memory.high events $h0 -> $h1 -> $h2" >&3
	[ -n "$with" ] || fail "the co-tenant failed beside the stopped shrinker"
	# both runs were over memory.high
	[ "$h1" -gt "$h0" ] && [ "$h2" -gt "$h1" ] ||
		fail "a run did not go over memory.high"
	# within 2x, side by side: before, with every return to userspace
	# waiting up to a second for the stopped program, it was not
	[ "$with" -le $((alone * 2)) ] ||
		fail "the stopped shrinker slowed the co-tenant: $with ms against $alone ms"
}

# neighbour_loops CGDIR: the loops in 2 s of an allocator in CGDIR that
# holds 29M and then maps, writes and unmaps 1M (mpvm alloc), and its
# sleeps: "LOOPS SLEEPS"
neighbour_loops() {
	local out
	out=$("$MP_IN_CG" "$1" -- mpvm alloc 29 1024 2000) || return 1
	echo "$(mp_field loops "$out") $(mp_field sleeps "$out")"
}

# neighbour_try D OUT LIM: one side-by-side triple in D/app: the allocator
# alone, beside a registered program that reads every request and adds the
# chunks back (mpctl register --keep: frees nothing), and after the
# program exited; sets alone, with, after ("LOOPS SLEEPS") and reqs
neighbour_try() {
	local d=$1 out=$2
	alone=$(neighbour_loops "$d/app") || fail "the allocator failed alone"
	# the program in the same memory cgroup, as a container's cache is
	"$MP_IN_CG" "$d/app" -- mpctl register -v -c "$d/app" --chunk 1M \
		--chunks 1000 --keep -t 60s >"$out" 2>&1 &
	MP_PIDS+=($!)
	mp_wait_line "$out" 'registered: mode=kernel-v2' 100 ||
		fail "mpctl register: $(cat "$out")"
	with=$(neighbour_loops "$d/app") ||
		fail "the allocator failed beside the program"
	mp_stop_bg
	reqs=$(grep -c ' chunks=[0-9]' "$out" || true)
	after=$(neighbour_loops "$d/app") ||
		fail "the allocator failed after the program"
}

# neighbour_case LIMIT: memory.LIMIT (max or high) 32M on a child, no
# other limit, and an allocator there at 29M, 90% of the limit: above the
# 7/8 mark where the kernel asks, below the limit (memory.events shows it
# was never reached). Beside the program, and after it, the allocator
# must keep at least 90% of its loops alone. Tagged det: it runs in the
# v2det boot, where time counts instructions (on plain TCG a busy host
# took the guest's vCPUs at random: make check failed it once at 3 of 3
# triples; the det boot measured 385 / 384 / 385 loops on 6.12). A
# triple that misses is measured again, three at most (a kernel that
# makes the allocator wait for the program fails all three: 3 loops
# against 234 alone)
neighbour_case() {
	local lim=$1 d out=$BATS_TEST_TMPDIR/reg-$1 alone with after reqs ev
	local try ok=0
	d=$(mp_v2_parent "nb$lim" max max app)
	echo 32M >"$d/app/memory.$lim"
	for try in 1 2 3; do
		neighbour_try "$d" "$out"
		ev=$(tr '\n' ' ' <"$d/app/memory.events")
		echo "# memory.$lim 32M, 29M held, try $try: loops (sleeps) alone ${alone% *} (${alone#* }), with the program ${with% *} (${with#* }), after ${after% *} (${after#* }); requests read $reqs; memory.events: $ev" >&3
		[ "$(mp_oom_kills "$d")" = 0 ] || fail "OOM kills: $(mp_oom_kills "$d")"
		# the program was asked: the allocator crossed the mark where
		# the kernel asks (else this compares nothing)
		[ "$reqs" -gt 0 ] || fail "the program was never asked: $(cat "$out")"
		# below the limit: nothing to throttle or reclaim
		grep -qx "$lim 0" "$d/app/memory.events" ||
			fail "memory.$lim was reached: $ev"
		[ "${alone% *}" -ge 10 ] ||
			fail "the allocator barely ran alone: ${alone% *} loops"
		if [ $((${with% *} * 10)) -ge $((${alone% *} * 9)) ] &&
		   [ $((${after% *} * 10)) -ge $((${alone% *} * 9)) ]; then
			ok=1
			break
		fi
	done
	[ "$ok" = 1 ] ||
		fail "the program slowed its neighbour in 3 tries, the last: ${with% *} loops beside it, ${after% *} after, ${alone% *} alone"
}

# bats test_tags=det
@test "v2: a registered program never harms its neighbours: 90% of memory.max, a program that frees nothing" {
	requires mpctl
	# before: with the kernel waiting for programs that read their
	# requests, 477 loops alone, 4 beside the program on 6.12 (206 and 4
	# on 6.1)
	neighbour_case max
}

# bats test_tags=det
@test "v2: a registered program never harms its neighbours: 90% of memory.high, a program that frees nothing" {
	requires mpctl
	neighbour_case high
}

@test "v2 races: closing, forking and concurrent counts under reclaim" {
	requires prog:mp_race
	local d
	d=$(mp_v2_parent race 32M 3/4 app)
	mp_run mp_race v2 "$d/app" - 20
	assert_success
	assert_output --regexp '^rounds [1-9][0-9]* writes [1-9][0-9]* requests [0-9]+ unexpected errors 0$'
	# a removal with a live registration (held from the root cgroup, bound
	# to app's memcg) while reclaim in app goes on
	mp_bg_mpvm "$BATS_TEST_TMPDIR/s" "$MP_V2" v2-shrinker "$d/app" 4096 100000 -t 60000 -k
	"$MP_IN_CG" "$d/app" -- stress-ng --vm 1 --vm-bytes 64M --vm-keep \
		--timeout 30s --quiet &
	MP_PIDS+=($!)
	# removed while asked: wait for the first request, at any speed (a
	# fixed 2 s was too short once on a 6.1 debug kernel beside other VMs)
	mp_wait_line "$BATS_TEST_TMPDIR/s" '^request [1-9]' 250 ||
		fail "no request in 25 s of reclaim: $(cat "$BATS_TEST_TMPDIR/s")"
	kill -9 "${MP_PIDS[-1]}"
	mp_cg_rmtree "$d"
	mp_stop_bg
	[ ! -d "$d/app" ] || fail "'$d/app' is still there"
	mp_run cat "$BATS_TEST_TMPDIR/s"
	assert_line --regexp '^request [1-9]'
}

# bats test_tags=det
@test "v2: one cache workload under every strategy, side by side: the kernel's ask keeps it alive, freeing the ordinary way too" {
	requires mpctl
	local doc=$BATS_TEST_TMPDIR/strategies.json s
	mp_run mpctl report -r 1 -d 3s -o "$doc" -s strategy-none \
		-s strategy-madv-free -s strategy-psi -s strategy-kernel \
		-s strategy-kernel-lazyfree -s strategy-kernel-munmap
	# the table goes to the TAP log, pass or fail: it is the measurement
	echo "$output" | sed -n '/^strategies/,/^$/s/^/# /p' >&3
	assert_success
	# every strategy ran: a skipped one would make the table a lie
	jq -e '[.scenarios[] | select(.status != "ok")] | length == 0' \
		"$doc" >&2 || fail "a strategy did not run: $(jq -c \
		'[.scenarios[] | {name, status, reason}]' "$doc")"
	# the workload outgrows the limit: a cache that never gives memory
	# back, without swap, is OOM-killed in every run. Not on the debug
	# kernels (KASAN, lockdep): a strategy run lasts 1 s, in which they
	# do not fill the 128M limit (2026-12-07: 20 to 26 MiB on average,
	# 6.12 and 6.1), so nothing needs memory back and the table
	# compares nothing
	# Or it reached the limit in every run and the 1 s ended before
	# its next chunk: in the det boot 125 and 126 misses of 1M against
	# the 128M limit, OOM-killed or not by a few instructions (2026-12-08,
	# 6.12, the same binary but for the workload table's refactor)
	jq -c '.scenarios[] | select(.name == "strategy-none") | .metrics |
		{oom_kills: .oom_kills.samples, peak: .peak_usage_ratio.samples}' \
		"$doc" | sed 's/^/# strategy-none: /' >&3
	if ! jq -e '.scenarios[] | select(.name == "strategy-none") |
		.metrics.oom_kills.min >= 1 or
		.metrics.peak_usage_ratio.min >= 0.97' "$doc" >&2; then
		! mp_debug_kernel ||
			skip "the debug kernel did not fill the limit in the 1 s runs"
		fail "strategy-none neither OOM-killed nor at its limit: the workload does not need memory back: $(jq -c \
			'.scenarios[] | select(.name == "strategy-none") | .metrics | {oom_kills, peak_usage_ratio}' "$doc")"
	fi
	# kernel-lazyfree may never be asked: reclaim takes its MADV_FREE
	# chunks by itself, which is the point of it
	for s in kernel kernel-lazyfree kernel-munmap; do
		jq -e --arg s "strategy-$s" '.scenarios[] | select(.name == $s) |
			.metrics.oom_kills.max == 0 and
			(.name == "strategy-kernel-lazyfree" or
			 .metrics.reclaim_requests.min > 0)' "$doc" >&2 ||
			fail "strategy-$s: $(jq -c --arg s "strategy-$s" \
				'.scenarios[] | select(.name == $s) | .metrics |
				{oom_kills, reclaim_requests}' "$doc")"
	done
}

@test "v2: echo 2 > drop_caches asks a registered program, and does not empty its cache" {
	local d a
	# no pressure at all: 64M held under a 256M memory.max, no memory.high
	d=$(mp_v2_parent drop 256M max app)
	mp_bg_mpvm "$BATS_TEST_TMPDIR/s" "$d/app" v2-shrinker "$d/app" \
		1048576 64 -a -t 30000 -k
	echo 2 >/proc/sys/vm/drop_caches
	# drop_caches asks while it runs; the program reads at its pace
	mp_wait_line "$BATS_TEST_TMPDIR/s" '^request [1-9]' 100 ||
		fail "drop_caches asked nothing: $(cat "$BATS_TEST_TMPDIR/s")"
	sleep 1
	mp_stop_bg
	a=$(asked "$BATS_TEST_TMPDIR/s")
	echo "# drop_caches asked $a of 64 chunks" >&3
	# mempressure.rst: asked again only after a read, at most 1/16 of
	# the claim adding up meanwhile; never the whole cache in one go
	[ "$a" -gt 0 ] && [ "$a" -lt 64 ] ||
		fail "drop_caches asked for $a of 64 chunks"
}

@test "v2: a parent turns the memory controller off: the registration moves up, is told so and is still asked" {
	local d a w
	d=$(mp_v2_parent off 256M max app)
	mp_bg_mpvm "$BATS_TEST_TMPDIR/s" "$d/app" v2-shrinker "$d/app" \
		1048576 64 -a -t 30000 -k
	# and mpctl register's monitor, a second registration there
	mpctl register -v -c "$d/app" --chunk 1M --chunks 4 -t 30s \
		>"$BATS_TEST_TMPDIR/m" 2>&1 &
	MP_PIDS+=($!)
	mp_wait_line "$BATS_TEST_TMPDIR/m" 'registered: mode=kernel-v2' 100 ||
		fail "mpctl register: $(cat "$BATS_TEST_TMPDIR/m")"
	[ "$(cat "$d/app/mempressure.events")" = "moved 0" ] ||
		fail "before the move: $(cat "$d/app/mempressure.events")"
	# the program is told through mempressure.events, polled for POLLPRI
	mpvm watch "$d/app/mempressure.events" -n 1 -t 10000 \
		>"$BATS_TEST_TMPDIR/w" 2>&1 &
	w=$!
	mp_wait_line "$BATS_TEST_TMPDIR/w" '^watching' 50 ||
		fail "watch did not start: $(cat "$BATS_TEST_TMPDIR/w")"
	# app's memory cgroup goes offline, its registration stays: reclaim
	# no longer calls shrinkers for an offline memory cgroup, so the
	# kernel must move it to the parent, where app is charged from now on
	echo -memory >"$d/cgroup.subtree_control"
	wait "$w" || fail "no event on mempressure.events: $(cat "$BATS_TEST_TMPDIR/w")"
	grep -qE '^event moved [12]$' "$BATS_TEST_TMPDIR/w" ||
		fail "the move was not told: $(cat "$BATS_TEST_TMPDIR/w")"
	# both registrations moved, and the monitor says so
	[ "$(cat "$d/app/mempressure.events")" = "moved 2" ] ||
		fail "after the move: $(cat "$d/app/mempressure.events")"
	mp_wait_line "$BATS_TEST_TMPDIR/m" '^mpctl register: moved: ' 50 ||
		fail "the monitor did not tell: $(cat "$BATS_TEST_TMPDIR/m")"
	[ ! -e "$d/app/memory.max" ] || fail "the memory controller is still on in app"
	# the event came with the move: reclaim finds the registration there
	echo 32M >"$d/memory.reclaim" || true
	# before the registration moved, nothing asked: 0 requests
	mp_wait_line "$BATS_TEST_TMPDIR/s" '^request [1-9]' 100 ||
		fail "not asked after its memory cgroup went offline: $(cat "$BATS_TEST_TMPDIR/s")"
	mp_stop_bg
	a=$(asked "$BATS_TEST_TMPDIR/s")
	echo "# asked $a chunks through the parent" >&3
	! grep -q '^over' "$BATS_TEST_TMPDIR/s" ||
		fail "asked for more than it held"
}
