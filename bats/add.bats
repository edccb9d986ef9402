#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# mpctl add: accounting chunks on an inherited registration and serving
# reclaim requests from a shell loop.

load helpers

fill_cmd() {
	# in a subshell, so that a kill of dd is not reported on stderr
	echo "(dd if=/dev/zero of=$BATS_TEST_TMPDIR/fill bs=1M count=${1:-150} status=none || true) 2>/dev/null"
}

# In the test VM nothing mounts the v1 hierarchies: mount memory (and
# mempressure, when the kernel has it) for this file, unmount after.
setup_file() {
	MP_MOUNTED=""
	if [ -e /mpctl/flavour ] && [ "$(id -u)" = 0 ]; then
		local c
		for c in memory mempressure; do
			grep -qw "^$c" /proc/cgroups || continue
			awk -v c="$c" '$0 ~ / - cgroup / {
				n = split($NF, o, ",")
				for (i = 1; i <= n; i++) if (o[i] == c) f = 1 }
				END { exit !f }' /proc/self/mountinfo && continue
			mkdir -p "/sys/fs/cgroup/$c"
			mount -t cgroup -o "$c" none "/sys/fs/cgroup/$c" &&
				MP_MOUNTED="$MP_MOUNTED $c"
		done
	fi
	export MP_MOUNTED
}

teardown_file() {
	local c
	for c in $MP_MOUNTED; do
		umount "/sys/fs/cgroup/$c" || true
	done
}

# the fillers' files take memory on a tmpfs (the VM's /tmp): gone first
teardown() {
	rm -f "$BATS_TEST_TMPDIR/fill"
	mp_cleanup
}

# shrinker_cg NAME LIMIT: a memory cgroup with LIMIT and, on a kernel with
# the mempressure controller, the cgroup of the same name there (both
# removed in teardown). $SCG is the name for --cgroup, $SCG_DIRS the
# cgroupfs directories for spawn_in.
shrinker_cg() {
	local mp
	make_memcg "$1" "$2" >/dev/null
	SCG=$MP_RUN_ID-$1
	SCG_DIRS=("$(memcg_root)/$SCG")
	# where there is swap (the VM's zram), the filler's tmpfs pages may
	# go there rather than be OOM-killed
	if [ -e "${SCG_DIRS[0]}/memory.memsw.limit_in_bytes" ]; then
		echo -1 > "${SCG_DIRS[0]}/memory.memsw.limit_in_bytes"
	fi
	mp=$(mempressure_root)
	if [ -n "$mp" ]; then
		mkdir "$mp/$SCG"
		MP_CGROUPS+=("$mp/$SCG")
		SCG_DIRS+=("$mp/$SCG")
	fi
}

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
	mpctl register --chunk 1M --cgroup "$SCG" --join -- bash -c "
		\$MPCTL add 200 || exit 8
		$(fill_cmd 300) &
		for i in 1 2 3; do
			n=\$(\$MPCTL add --wait --timeout 20s) || exit 7
			echo freed \$n
			# the cache grows back
			\$MPCTL add \$n || exit 6
		done
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
