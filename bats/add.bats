#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# mpctl add: accounting chunks on an inherited registration and serving
# reclaim requests from a shell loop.

load helpers
load shrinker

setup() {
	export MPCTL=$MPCTL_BIN
	unset MPCTL_SHRINKER_FD MPCTL_SHRINKER_EFD MPCTL_SHRINKER_CHUNK \
		MPCTL_SHRINKER_ABI MPCTL_SHRINKER_BACKEND
}

@test "add: outside a registration it says so, status 69" {
	mpctl add 5
	[ "$status" -eq 69 ]
	assert_output --partial "mpctl add: not run under 'mpctl register'"
	mpctl add --wait
	[ "$status" -eq 69 ]
}

@test "add: usage errors are 64" {
	mpctl add
	[ "$status" -eq 64 ]
	assert_output --partial 'nothing to do'
	mpctl add five
	[ "$status" -eq 64 ]
	assert_output --partial "invalid chunk count 'five'"
	mpctl add 1 2
	[ "$status" -eq 64 ]
	mpctl add 1 --json
	[ "$status" -eq 64 ]
}

@test "add: malformed variables are a usage error, not a crash" {
	MPCTL_SHRINKER_FD=x MPCTL_SHRINKER_EFD=y MPCTL_SHRINKER_CHUNK=1 \
		MPCTL_SHRINKER_ABI=v1 MPCTL_SHRINKER_BACKEND=memcg \
		run "$MPCTL_BIN" add 1
	[ "$status" -eq 64 ] || [ "$status" -eq 69 ]
}

@test "add: +N, N, -N and -- -N inside register" {
	requires root
	mpctl register --chunk 1M -- sh -c '
		$MPCTL add 10 && $MPCTL add +5 && $MPCTL add -3 &&
		$MPCTL add -- -2 && echo ok'
	[ "$status" -ne 69 ] || skip "no shrinker interface"
	assert_success
	assert_output ok
}

@test "add: -q is accepted and errors still print" {
	requires root
	mpctl register --chunk 1M -- sh -c '$MPCTL add -q 10 && $MPCTL add --quiet --wait --timeout 300ms'
	[ "$status" -ne 69 ] || skip "no shrinker interface"
	[ "$status" -eq 1 ]
	assert_output --partial 'mpctl add: no reclaim request within the timeout'
}

@test "add: --wait times out with status 1 when nobody asks" {
	requires root
	mpctl register --chunk 1M -- sh -c '$MPCTL add 10; $MPCTL add --wait --timeout 300ms'
	[ "$status" -ne 69 ] || skip "no shrinker interface"
	[ "$status" -eq 1 ]
	assert_output --partial 'mpctl add: no reclaim request within the timeout'
}

@test "add: a shell loop serves reclaim requests" {
	requires root memcg
	shrinker_cg add-loop 64M
	# the pressure lasts until the loop is done: one fill may end before
	# the third request (seen on the 6.1 VM)
	mpctl register --chunk 1M --cgroup "$SCG" --join -- bash -c "
		trap 'touch $BATS_TEST_TMPDIR/stop' EXIT
		\$MPCTL add 200 || exit 8
		$(fill_loop_cmd 150) &
		for i in 1 2 3; do
			n=\$(\$MPCTL add --wait --timeout 20s) || exit 7
			echo freed \$n
			# the cache grows back
			\$MPCTL add \$n || exit 6
		done
		touch $BATS_TEST_TMPDIR/stop
		wait"
	assert_success
	[ "$(grep -c '^freed [1-9][0-9]*$' <<< "$output")" -eq 3 ]
}

@test "add: requests never exceed the chunks accounted" {
	requires root memcg
	shrinker_cg add-cap 64M
	mpctl register --chunk 1M --cgroup "$SCG" --join -- bash -c "
		\$MPCTL add 5 || exit 8
		$(fill_cmd) &
		total=0
		while n=\$(\$MPCTL add --wait --timeout 3s); do
			total=\$((total + n))
		done
		echo total \$total
		wait"
	assert_success
	assert_line --regexp '^total [1-5]$'
}

@test "add: --wait --json prints a request document" {
	requires root memcg jq
	shrinker_cg add-json 64M
	mpctl register --chunk 256K --cgroup "$SCG" --join -- bash -c "
		\$MPCTL add 400 || exit 8
		$(fill_cmd) &
		\$MPCTL add --wait --json --timeout 20s
		wait"
	assert_success
	echo "$output" | jq -e '.schema.name == "mpctl-add" and
		.schema.version == 1 and .request.chunk_size_bytes == 262144 and
		(.request.chunks >= 1) and
		.request.bytes == .request.chunks * 262144'
}

@test "add: N --wait adds, then waits" {
	requires root memcg
	shrinker_cg add-both 64M
	mpctl register --chunk 1M --cgroup "$SCG" --join -- bash -c "
		( sleep 0.3; $(fill_cmd) ) &
		\$MPCTL add 50 --wait --timeout 20s
		wait"
	assert_success
	assert_output --regexp '^[1-9][0-9]*$'
}

@test "add: --wait and N notice that their 'mpctl register' is gone" {
	requires root memcg
	local cg st
	cg=$(make_memcg addgone 64M)
	# register exits at once; its child keeps the registration's fds
	run timeout 10 "$MPCTL_BIN" register --chunk 1M -b memcg -c "$cg" -- \
		sh -c '(sleep 0.5; "$MPCTL" add --wait; echo "wait=$?";
			"$MPCTL" add 5; echo "add=$?") >'"$BATS_TEST_TMPDIR/log"' 2>&1 &'
	assert_success
	for st in $(seq 50); do
		grep -q "^add=" "$BATS_TEST_TMPDIR/log" 2>/dev/null && break
		sleep 0.1
	done
	run cat "$BATS_TEST_TMPDIR/log"
	assert_line "mpctl add: the shrinker is gone: the 'mpctl register' that owned it has exited, or its cgroup was removed"
	assert_line "wait=1"
	assert_line --partial "mpctl add: cannot account +5 chunks: the shrinker is gone"
	assert_line "add=1"
}

@test "add: MPCTL_SHRINKER_* are parsed strictly: empty, negative, above INT_MAX" {
	local v
	for v in "FD=" "FD=4294967297" "FD=-1" "FD= 3" "EFD=" "EFD=4294967296" \
		"CHUNK=-1" "CHUNK=" "CHUNK=18446744073709551615" "CHUNK=0"; do
		env MPCTL_SHRINKER_FD=1 MPCTL_SHRINKER_EFD=1 \
			MPCTL_SHRINKER_CHUNK=4096 MPCTL_SHRINKER_ABI=v1 \
			MPCTL_SHRINKER_BACKEND=memcg "MPCTL_SHRINKER_$v" \
			"$MPCTL_BIN" add 1 >"$BATS_TEST_TMPDIR/out" 2>&1 && st=0 || st=$?
		echo "MPCTL_SHRINKER_$v: $st $(cat "$BATS_TEST_TMPDIR/out")" >&2
		[ "$st" -eq 64 ]
		grep -q "invalid MPCTL_SHRINKER_${v%%=*} " "$BATS_TEST_TMPDIR/out"
	done
}

@test "add: MPCTL_SHRINKER_* fds of the wrong type are refused and left alone" {
	local f=$BATS_TEST_TMPDIR/file
	echo data >"$f"
	# stdout and a file where the eventfd should be: nothing written, read
	MPCTL_SHRINKER_FD=1 MPCTL_SHRINKER_EFD=3 MPCTL_SHRINKER_CHUNK=4096 \
		MPCTL_SHRINKER_ABI=v1 MPCTL_SHRINKER_BACKEND=memcg \
		run --separate-stderr "$MPCTL_BIN" add 1 3<"$f"
	assert_failure 64
	assert_output ""
	[ "$stderr" = "mpctl add: invalid MPCTL_SHRINKER_EFD '3': not an eventfd" ]
	[ "$(cat "$f")" = data ]
	requires root
	# inside register the eventfd is real, the request fd is not: a
	# file on stdin is refused, not written
	mpctl register --chunk 1M -- sh -c '
		MPCTL_SHRINKER_FD=0 $MPCTL add 1 2>&1 <"$0"; echo "st=$?"' "$f"
	[ "$status" -ne 69 ] || skip "no shrinker interface"
	# the emulated shrinker's pipe, or on a patched kernel its
	# mempressure.shrinker file
	assert_line --regexp "invalid MPCTL_SHRINKER_FD '0': not (the emulated shrinker's pipe|a cgroup (v1|v2|2) mempressure.shrinker file|a cgroup2 mempressure.shrinker file)"
	assert_line "st=64"
	[ "$(cat "$f")" = data ]
}

@test "add: removing register's cgroup ends add --wait, fails add N, and register exits 1" {
	requires root memcg
	# the emulated shrinker's case: a kernel shrinker's removal is the
	# VM suites' (57-v1-kernel-shrinker)
	! mp_have_controller mempressure || skip "a kernel shrinker here"
	local dir name
	dir=$(make_memcg rm 64M)
	name=/$(basename "$dir")
	"$MPCTL_BIN" register -c "$name" -C 1M -- sh -c '
		$MPCTL add 10; echo "added=$?"
		$MPCTL add --wait; echo "wait=$?"
		$MPCTL add 5; echo "add5=$?"' >"$BATS_TEST_TMPDIR/out" 2>&1 &
	local pid=$! i rc=0
	MP_PIDS+=("$pid")
	for ((i = 0; i < 100; i++)); do
		grep -q added= "$BATS_TEST_TMPDIR/out" && break
		sleep 0.1
	done
	rmdir "$dir"
	wait_exit "$pid" 20 || rc=$?
	[ "$rc" -eq 1 ]
	run cat "$BATS_TEST_TMPDIR/out"
	assert_line "added=0"
	assert_line "wait=1"
	assert_line "add5=1"
	assert_line "mpctl register: cgroup removed '$name'"
}
