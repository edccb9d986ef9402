#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# How the series scales with registrations (boot group scale, by hand:
# VMTEST_BOOTS=scale make vmtest KVER=...; kernel-patch/README-harness.md).
# Kernel parameter mpctl.regs=N (default 1000): the registrations on one
# file, and the registrations spread over N/10 memory cgroups elsewhere.
# Each test prints its numbers as "# SCALE {json}" lines and asserts only
# what holds at any speed: the programs were asked, every side was
# measured, and side by side in one boot a memory cgroup without
# registrations is not slowed by the registrations of others.

# MP_PIDS (helpers) is filled in each test, in the same subshell
# shellcheck disable=SC2030,SC2031
load bench

# shellcheck disable=SC2034 # used by the helpers
MP_IN_CG=$BATS_TEST_DIRNAME/../vm/in-cg.sh

# the chunk every registration holds and registers
CHUNK=65536

setup() {
	bench_setup
	mp_v2_enable memory
	mp_v2_enable mempressure
	REGS=$(bench_arg regs 1000)
	SHM=$BATS_TEST_TMPDIR/shm
}

teardown() {
	! mp_is_mounted "$SHM" || umount "$SHM"
	bench_teardown
	mp_v2_teardown
}

# reclaim_us CGDIR PASSES: microseconds per write of 1M to
# CGDIR/memory.reclaim (a write that finds nothing to reclaim counts too)
reclaim_us() {
	local t0 t1
	t0=${EPOCHREALTIME/./}
	for _ in $(seq "$2"); do
		echo 1M >"$1/memory.reclaim" 2>/dev/null || true
	done
	t1=${EPOCHREALTIME/./}
	echo $(((t1 - t0) / $2))
}

# many OUT CGDIR N ADD: mpvm v2-many in CGDIR, N registrations of ADD
# chunks each held for real (N 0: ADD chunks held, nothing registered)
many() {
	mp_bg_mpvm "$1" "$2" v2-many "$2" "$3" "$CHUNK" "$4" -a -t 600000
}

# many_field NAME OUT...: NAME=V of the v2-many summaries in OUT, summed
many_field() {
	local name=$1
	shift
	sed -n "s/^many .*[[:space:]]$name=\([0-9]*\).*/\1/p" "$@" |
		awk '{ s += $1 } END { print s + 0 }'
}

# elsewhere PARENT KIND: REGS/10 memory cgroups e1.. under PARENT, each
# with a program holding 10 chunks, registered (KIND reg) or not (KIND
# none)
elsewhere() {
	local i n=$((REGS / 10)) per=10
	[ "$2" = reg ] || per=0
	for i in $(seq "$n"); do
		mkdir -p "$1/e$i"
		if [ "$per" = 0 ]; then
			many "$BATS_TEST_TMPDIR/e$2$i" "$1/e$i" 0 10
		else
			many "$BATS_TEST_TMPDIR/e$2$i" "$1/e$i" 10 1
		fi
	done
}

@test "scale: reclaim cost per pass with 0, 1 and N registrations in the memcg, and N elsewhere" {
	requires swap
	local d k kind us req freed rows='' passes=20 total=1000
	d=$(mp_v2_parent reclaim 1G max app)
	echo max >"$d/memory.swap.max"
	# the memcg holds the same $total chunks in every row; only how many
	# registrations they are spread over changes
	for k in 0 1 "$REGS"; do
		if [ "$k" = 0 ]; then
			many "$BATS_TEST_TMPDIR/r$k" "$d/app" 0 "$total"
		else
			many "$BATS_TEST_TMPDIR/r$k" "$d/app" "$k" $((total / k))
		fi
		us=$(reclaim_us "$d/app" "$passes")
		mp_stop_bg
		req=$(many_field requests "$BATS_TEST_TMPDIR/r$k")
		freed=$(many_field chunks "$BATS_TEST_TMPDIR/r$k")
		rows+="${rows:+,}{\"registrations\":$k,\"elsewhere\":0,\"pass_us\":$us,\"requests\":$req,\"chunks_freed\":$freed}"
		[ "$k" = 0 ] || [ "$req" -gt 0 ] ||
			fail "$k registrations: memory.reclaim asked none"
	done
	# none in the memcg, REGS/10 memcgs beside it holding the same memory:
	# unregistered first (the control: as many memcgs and processes), then
	# as REGS registrations, so that what the registrations cost is told
	# apart from what the memcgs and the processes do
	for kind in none reg; do
		elsewhere "$d" "$kind"
		many "$BATS_TEST_TMPDIR/rx$kind" "$d/app" 0 "$total"
		us=$(reclaim_us "$d/app" "$passes")
		mp_stop_bg
		k=0
		[ "$kind" = none ] || k=$REGS
		rows+=",{\"registrations\":0,\"elsewhere\":$k,\"elsewhere_memcgs\":$((REGS / 10)),\"pass_us\":$us}"
	done
	echo "# SCALE {\"test\":\"reclaim\",\"kernel\":\"$(uname -r)\",\"pass_bytes\":1048576,\"passes\":$passes,\"chunk_bytes\":$CHUNK,\"chunks\":$total,\"rows\":[$rows]}" >&3
}

# pollers_ctxt PID...: voluntary context switches of the processes, summed
pollers_ctxt() {
	local p s=0 v
	for p in "$@"; do
		v=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' \
			"/proc/$p/status" 2>/dev/null)
		s=$((s + ${v:-0}))
	done
	echo "$s"
}

# idle_rate PID...: voluntary context switches per second of the processes
# when nothing is delivered (poll's own 200 ms timeout)
idle_rate() {
	local s0 s1 t0 t1
	s0=$(pollers_ctxt "$@")
	t0=${EPOCHREALTIME/./}
	sleep 2
	s1=$(pollers_ctxt "$@")
	t1=${EPOCHREALTIME/./}
	echo $(((s1 - s0) * 1000000 / (t1 - t0)))
}

@test "scale: wakeups per delivery, 1, 10 and 100 programs and one of N registrations on one file" {
	local d n i s0 s1 t0 t1 idle deliveries wakeups rows='' polls req
	for n in 1 10 100; do
		d=$(mp_v2_parent "wake$n" 1G max app)
		for i in $(seq "$n"); do
			mp_bg_mpvm "$BATS_TEST_TMPDIR/w$n-$i" "$d/app" v2-shrinker \
				"$d/app" "$CHUNK" 8 -a -t 600000 -k
		done
		idle=$(idle_rate "${MP_PIDS[@]}")
		s0=$(pollers_ctxt "${MP_PIDS[@]}")
		t0=${EPOCHREALTIME/./}
		for i in $(seq 10); do
			echo 2M >"$d/app/memory.reclaim" 2>/dev/null || true
			sleep 0.2
		done
		s1=$(pollers_ctxt "${MP_PIDS[@]}")
		t1=${EPOCHREALTIME/./}
		mp_stop_bg
		deliveries=$(cat "$BATS_TEST_TMPDIR/w$n"-* | grep -c '^request [1-9]' || true)
		[ "$deliveries" -gt 0 ] || fail "$n programs: nothing delivered"
		wakeups=$(((s1 - s0) - idle * (t1 - t0) / 1000000))
		[ "$wakeups" -ge 0 ] || wakeups=0
		rows+="${rows:+,}{\"programs\":$n,\"registrations\":$n,\"deliveries\":$deliveries,\"wakeups\":$wakeups,\"idle_per_s\":$idle}"
	done
	# one program polling REGS registrations of one file: a poll that
	# returns is one wakeup of it, a nonzero read one delivery
	d=$(mp_v2_parent "wakemany" 1G max app)
	many "$BATS_TEST_TMPDIR/wm" "$d/app" "$REGS" 1
	for i in $(seq 10); do
		echo 2M >"$d/app/memory.reclaim" 2>/dev/null || true
		sleep 0.2
	done
	mp_stop_bg
	req=$(many_field requests "$BATS_TEST_TMPDIR/wm")
	polls=$(many_field polls "$BATS_TEST_TMPDIR/wm")
	[ "$req" -gt 0 ] || fail "$REGS registrations: nothing delivered"
	rows+=",{\"programs\":1,\"registrations\":$REGS,\"deliveries\":$req,\"polls\":$polls}"
	echo "# SCALE {\"test\":\"wakeups\",\"kernel\":\"$(uname -r)\",\"rows\":[$rows]}" >&3
}

# overhigh_ms CGDIR: milliseconds a program in CGDIR takes to write 64M to
# a file in the tmpfs $SHM in 64K writes: over memory.high, every write
# returns to user space through the over-high path
overhigh_ms() {
	local t0 t1
	t0=${EPOCHREALTIME/./}
	"$MP_IN_CG" "$1" -- dd if=/dev/zero of="$SHM/f" bs=64k count=1024 \
		status=none || return 1
	t1=${EPOCHREALTIME/./}
	rm -f "$SHM/f"
	echo $(((t1 - t0) / 1000))
}

high_count() {
	sed -n 's/^high //p' "$1/memory.events"
}

@test "scale: over-high returns in a memcg without registrations, N registrations elsewhere or none" {
	requires swap
	local d co kind r ms h0 h1 without=() with=() mw mr rows=''
	d=$(mp_v2_parent overhigh 1G max co)
	co=$d/co
	# memory.high 16M and the zram swap: the co-tenant's 64M of tmpfs is
	# over memory.high almost all the way, and memory.high reclaim swaps
	# the excess out
	echo max >"$d/memory.swap.max"
	echo 16M >"$co/memory.high"
	mkdir -p "$SHM"
	mount -t tmpfs -o size=96m none "$SHM"
	# alternate the two sides, three rounds: the same memcgs and the same
	# memory held by the same programs; only the registrations differ
	for r in 1 2 3; do
		for kind in none reg; do
			elsewhere "$d" "$kind"
			h0=$(high_count "$co")
			ms=$(overhigh_ms "$co") || fail "the co-tenant failed ($kind)"
			h1=$(high_count "$co")
			mp_stop_bg
			[ "$h1" -gt "$h0" ] || fail "the co-tenant never went over memory.high"
			if [ "$kind" = reg ]; then with+=("$ms"); else without+=("$ms"); fi
			rows+="${rows:+,}{\"round\":$r,\"elsewhere\":$([ "$kind" = reg ] && echo "$REGS" || echo 0),\"ms\":$ms,\"high_events\":$((h1 - h0))}"
		done
	done
	mw=$(printf '%s\n' "${without[@]}" | sort -n | sed -n 2p)
	mr=$(printf '%s\n' "${with[@]}" | sort -n | sed -n 2p)
	echo "# SCALE {\"test\":\"overhigh\",\"kernel\":\"$(uname -r)\",\"bytes\":67108864,\"write_bytes\":65536,\"median_ms\":{\"without\":$mw,\"with\":$mr},\"rows\":[$rows]}" >&3
	# side by side, medians of three: registrations in other memcgs may
	# not make this memcg's over-high returns twice as slow
	[ "$mr" -le $((mw * 2)) ] ||
		fail "$REGS registrations elsewhere slowed the co-tenant: $mr ms against $mw ms"
}
