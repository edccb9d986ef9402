#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# mpctl on the machines people run: cgroup2 alone on /sys/fs/cgroup, the
# kernel booted with cgroup_disable=mempressure (a stock kernel for memcg's
# paths), in the layouts of a systemd host and of a container.
#
# "-v2pure-" in the name: only the v2pure boot runs it (vm-init.sh mounts
# cgroup2 on /sys/fs/cgroup there, and nothing else).
#
#  systemd-like  /mpt-sd, memory.max 192M and memory.high 160M, delegated to
#                uid 1000 the way systemd delegates (the directory and its
#                cgroup.procs, cgroup.subtree_control, cgroup.threads);
#                mpctl runs as that user in a scope of its own, or from a
#                "shell" cgroup that holds other processes
#  container     /mpt-ct, memory.max 128M, a cgroup namespace rooted there
#                (bats/vm/mpns.c), cgroup2 mounted afresh, read-only but for
#                the delegated /deleg when asked

load helpers

CG=/sys/fs/cgroup
SD=$CG/mpt-sd
CT=$CG/mpt-ct
U=1000

setup_file() {
	[ -f /mpctl/flavour ] || return 0
	grep -qw memory $CG/cgroup.controllers || return 0
	echo +memory >$CG/cgroup.subtree_control
	mkdir -p "$SD" "$CT"
	echo 192M >"$SD/memory.max"
	echo 160M >"$SD/memory.high"
	echo 0 >"$SD/memory.swap.max" 2>/dev/null || true
	echo +memory >"$SD/cgroup.subtree_control"
	chown "$U:$U" "$SD" "$SD"/cgroup.procs "$SD"/cgroup.subtree_control \
		"$SD"/cgroup.threads
	echo 128M >"$CT/memory.max"
	echo 0 >"$CT/memory.swap.max" 2>/dev/null || true
}

teardown_file() {
	[ -f /mpctl/flavour ] || return 0
	mp_cg_rmtree "$SD"
	mp_cg_rmtree "$CT"
	rmdir "$SD" "$CT" 2>/dev/null || true
}

setup() {
	requires vm root mpctl prog:mpns
	[ ! -d $CG/unified ] && ! grep -q ' cgroup ' /proc/mounts ||
		skip "not the pure cgroup2 layout"
	grep -qw memory $CG/cgroup.controllers || skip "no memory controller"
	ROOT_SUBTREE=$(cat $CG/cgroup.subtree_control)
}

teardown() {
	local d
	for d in "$SD"/* "$CT"/*; do
		[ -d "$d" ] || continue
		mp_cg_rmtree "$d"
		rmdir "$d" 2>/dev/null || true
	done
	# what mpns -E enabled: the next test moves a process into /mpt-ct
	[ ! -d "$CT" ] || echo -memory >"$CT/cgroup.subtree_control" || true
	return 0
}

# a cgroup of the delegated subtree, owned by the user as systemd does
user_cg() {
	mkdir -p "$SD/$1"
	chown "$U:$U" "$SD/$1" "$SD/$1"/cgroup.procs \
		"$SD/$1"/cgroup.subtree_control "$SD/$1"/cgroup.threads
}

# nothing of ours outside the subtrees, the root's controllers untouched
assert_root_clean() {
	[ "$(cat $CG/cgroup.subtree_control)" = "$ROOT_SUBTREE" ]
	! ls -d $CG/mpctl-* 2>/dev/null
}

@test "v2pure: the kernel is stock for memcg (no mempressure controller)" {
	! mp_have_controller mempressure
	mp_run mpctl stress -b mempressure --duration 1s
	assert_failure 69
}

@test "v2pure: stress as a delegated user in a scope of its own: under the scope, limited, nothing left" {
	local out=$BATS_TEST_TMPDIR/sd.json
	user_cg scope
	# until the shrinker gave back: the placement is what is tested,
	# and a slow (debug) guest takes 15 s to reach 64M
	mp_run mpns -g "$SD/scope" -u $U -- mpctl stress --limit 64M \
		--until-freed 1 --duration 5m --threads 2 --json
	assert_success
	echo "$output" >"$out"
	jq -e '.shrinker == "emulated" and .backend == "psi"' "$out"
	jq -e '.cgroup | startswith("/mpt-sd/scope/mpctl-stress-")' "$out"
	jq -e '.exit_reason == "freed"' "$out"
	jq -e '.oom_kills == 0 and .chunks_freed > 0' "$out"
	jq -e '.peak_usage_bytes <= 67108864' "$out"
	# the scope is as it was: no leaf, no run cgroup, no controller
	run find "$SD/scope" -mindepth 1 -type d
	assert_output ""
	[ -z "$(cat "$SD/scope/cgroup.subtree_control")" ]
	assert_root_clean
}

@test "v2pure: stress from a cgroup with other processes says what to do and makes nothing" {
	user_cg shell
	mp_run mpns -g "$SD/shell" -u $U -- sh -c \
		'sleep 30 & s=$!; mpctl stress --limit 64M --duration 1s; r=$?; kill $s; exit $r'
	assert_failure 1
	assert_line --partial "has other processes"
	assert_line --partial "Delegate=yes"
	[ "${#lines[@]}" -eq 1 ]
	run find "$SD/shell" -mindepth 1 -type d
	assert_output ""
	assert_root_clean
}

@test "v2pure: stress as a user without a delegated cgroup is refused with 77" {
	mkdir -p "$SD/rootowned"
	mp_run mpns -g "$SD/rootowned" -u $U -- mpctl stress --limit 64M \
		--duration 1s
	assert_failure 77
	assert_output --partial "not delegated"
	assert_root_clean
}

@test "v2pure: --parent names a delegated cgroup; the run is created there" {
	local out=$BATS_TEST_TMPDIR/p.json
	user_cg runs
	user_cg me
	# an empty delegated cgroup: memory is enabled for the run, and
	# disabled again after it
	mp_run mpns -g "$SD/me" -u $U -- mpctl stress --parent /mpt-sd/runs \
		--limit 64M --duration 2s --json
	assert_success
	echo "$output" >"$out"
	jq -e '.cgroup | startswith("/mpt-sd/runs/mpctl-stress-")' "$out"
	jq -e '.oom_kills == 0' "$out"
	run find "$SD/runs" -mindepth 1 -type d
	assert_output ""
	[ -z "$(cat "$SD/runs/cgroup.subtree_control")" ]
}

@test "v2pure: --cgroup in a child of a limited parent works against the parent's limit" {
	local out=$BATS_TEST_TMPDIR/c.json
	mkdir -p "$SD/app"
	mp_run mpctl stress --cgroup /mpt-sd/app --duration 2s --json
	assert_success
	echo "$output" >"$out"
	# memory.high 160M on the parent is the lowest limit on the path
	jq -e '.limit_bytes == 167772160' "$out"
	jq -e '.oom_kills == 0' "$out"
}

@test "v2pure: unprivileged listen on a root-owned memory.pressure falls back to system PSI and says so" {
	mp_run mpns -u $U -- mpctl listen -b psi -c /mpt-sd -v -t 1s
	if [ "$status" -eq 0 ]; then
		assert_line --partial "file=/proc/pressure/memory"
		assert_line --partial "is not writable: system-wide PSI"
	else
		# a kernel without unprivileged triggers (upstream before
		# 6.5): the fallback was tried, the kernel's refusal is the
		# answer
		assert_failure 77
		assert_output --partial "/proc/pressure/memory"
	fi
}

@test "v2pure: memory.events is a source: hitting memory.max is a critical event" {
	mkdir -p "$SD/ev"
	echo 32M >"$SD/ev/memory.max"
	# a PSI trigger that cannot fire in the test: only memory.events can
	mpctl listen -b psi -c /mpt-sd/ev -l critical --psi "full 10s 10s" \
		-n 1 -t 60s --json >"$BATS_TEST_TMPDIR/ev.json" &
	local lpid=$!
	sleep 1
	mpns -g "$SD/ev" -- stress-ng --vm 1 --vm-bytes 64M --vm-keep \
		--timeout 5s --quiet || true
	wait "$lpid"
	jq -e '.event.level == "critical" and .event.backend == "psi"' \
		"$BATS_TEST_TMPDIR/ev.json"
}

@test "v2pure: \$MEMORY_PRESSURE_WATCH: listen watches its own memory.pressure with systemd's trigger" {
	mkdir -p "$SD/mpw"
	# throttled at memory.high: a memory stall, no OOM kill
	echo 24M >"$SD/mpw/memory.high"
	echo 256M >"$SD/mpw/memory.max"
	local w
	w=$(printf 'some 50000 2000000\0' | base64)
	mpns -g "$SD/mpw" -- env MEMORY_PRESSURE_WATCH="$SD/mpw/memory.pressure" \
		MEMORY_PRESSURE_WRITE="$w" mpctl listen -n 1 -t 60s --json -v \
		>"$BATS_TEST_TMPDIR/mpw.json" 2>"$BATS_TEST_TMPDIR/mpw.err" &
	local lpid=$!
	mp_wait_line "$BATS_TEST_TMPDIR/mpw.err" listening
	grep -q "file=$SD/mpw/memory.pressure" "$BATS_TEST_TMPDIR/mpw.err"
	grep -q "with trigger 'some 50000 2000000'" "$BATS_TEST_TMPDIR/mpw.err"
	mpns -g "$SD/mpw" -- stress-ng --vm 1 --vm-bytes 64M --vm-keep \
		--timeout 10s --quiet || true
	wait "$lpid"
	jq -e '.event.backend == "psi" and .event.cgroup == "/mpt-sd/mpw"' \
		"$BATS_TEST_TMPDIR/mpw.json"
}

@test "v2pure: register and add on cgroup2: the emulated shrinker asks a shell script" {
	mkdir -p "$SD/reg"
	echo 64M >"$SD/reg/memory.max"
	# 40 chunks accounted, then a hog near the limit: PSI, memory.events
	# and memory.current against the limit make the emulation ask
	mp_run timeout 90 mpctl register --chunk 1M --cgroup /mpt-sd/reg \
		--join -- sh -c '
		mpctl add 40
		stress-ng --vm 1 --vm-bytes 60M --vm-keep --timeout 30s --quiet &
		n=$(mpctl add --wait --timeout 45s)
		echo "asked $n"
		kill $! 2>/dev/null
		wait'
	assert_success
	assert_line --regexp '^asked [1-9][0-9]*$'
}

@test "v2pure: container with its own cgroup namespace: the run goes under the caller's cgroup" {
	local out=$BATS_TEST_TMPDIR/ct.json
	mkdir -p "$CT/deleg"
	mp_run mpns -g "$CT" -c -G deleg -E -- mpctl stress --limit 64M \
		--until-freed 1 --duration 5m --threads 2 --json
	assert_success
	echo "$output" >"$out"
	jq -e '.cgroup | startswith("/deleg/mpctl-stress-")' "$out"
	jq -e '.exit_reason == "freed"' "$out"
	jq -e '.oom_kills == 0 and .chunks_freed > 0' "$out"
	run find "$CT/deleg" -mindepth 1 -type d
	assert_output ""
	assert_root_clean
}

@test "v2pure: container: --cgroup inside the namespace works against the namespace root's limit" {
	local out=$BATS_TEST_TMPDIR/ctl.json
	mkdir -p "$CT/deleg" "$CT/app"
	mp_run mpns -g "$CT" -c -G deleg -E -- mpctl stress --cgroup /app \
		--duration 2s --json
	assert_success
	echo "$output" >"$out"
	jq -e '.cgroup == "/app" and .limit_bytes == 134217728' "$out"
	jq -e '.oom_kills == 0' "$out"
}

@test "v2pure: container with a read-only /sys/fs/cgroup: one line, 77, nothing made" {
	mkdir -p "$CT/deleg"
	mp_run mpns -g "$CT" -c -G deleg -E -r "" -- mpctl stress --limit 64M \
		--duration 1s
	assert_failure 77
	assert_output --partial "read-only"
	[ "${#lines[@]}" -eq 1 ]
	run find "$CT/deleg" -mindepth 1 -type d
	assert_output ""
}

@test "v2pure: container, read-only but for the delegated cgroup: the run works there" {
	local out=$BATS_TEST_TMPDIR/ro.json
	mkdir -p "$CT/deleg"
	mp_run mpns -g "$CT" -c -G deleg -E -r deleg -- mpctl stress \
		--limit 64M --duration 2s --json
	assert_success
	echo "$output" >"$out"
	jq -e '.cgroup | startswith("/deleg/mpctl-stress-")' "$out"
	run find "$CT/deleg" -mindepth 1 -type d
	assert_output ""
}

@test "v2pure: report runs its scenarios under the caller's cgroup, nothing left" {
	local out=$BATS_TEST_TMPDIR/r.json
	user_cg rep
	# stdout alone: an engine OOM-killed in a run is a result, said on
	# stderr
	mp_run --separate-stderr mpns -g "$SD/rep" -u $U -- mpctl report \
		-d 1s -r 1 -s shrinker -s listen-latency --json
	assert_success
	echo "$output" >"$out"
	jq -e '[.scenarios[] | .status] | all(. == "ok")' "$out"
	jq -e '.system.cgroup_mode == "v2"' "$out"
	run find "$SD/rep" -mindepth 1 -type d
	assert_output ""
	assert_root_clean
}
