#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Discovery against recorded /proc and /sys trees (bats/fixtures/sysroot):
# mountinfo, /proc/self/cgroup and /proc/cgroups parsing, backend choice
# and cgroup resolution, on machines this one is not.

load helpers

# copy a recorded tree: registration writes into it
tree() {
	cp -a "$ROOT/bats/fixtures/sysroot/$1" "$BATS_TEST_TMPDIR/root"
	T=$BATS_TEST_TMPDIR/root
}

listening() {
	mpctl listen --sysroot "$T" -v -t 50ms "$@"
	assert_success
	assert_output "mpctl listen: listening: $1"
}

@test "sysroot: hybrid v1 machine picks memcg and the caller's nested cgroup" {
	tree hybrid-container
	own=$(sed -n 's/^4:memory://p' "$T/proc/self/cgroup")
	mpctl listen --sysroot "$T" -v -t 50ms
	assert_success
	assert_output "mpctl listen: listening: backend=memcg cgroup=$own level=low file=$T/sys/fs/cgroup/memory$own/memory.pressure_level"
	# the kernel got "<eventfd> <fd> <level>" through cgroup.event_control
	run cat "$T/sys/fs/cgroup/memory$own/cgroup.event_control"
	assert_output --regexp '^[0-9]+ [0-9]+ critical$'
}

@test "sysroot: hybrid machine, psi on the unified hierarchy without memory" {
	tree hybrid-container
	mpctl listen --sysroot "$T" -b psi -l medium -v -t 50ms
	assert_success
	assert_output "mpctl listen: listening: backend=psi cgroup=/ level=medium file=$T/sys/fs/cgroup/unified/memory.pressure"
	run cat "$T/sys/fs/cgroup/unified/memory.pressure"
	assert_output --regexp '^(some|full) [0-9]+ [0-9]+'
}

@test "sysroot: modes reach the kernel as 'level,mode'" {
	tree hybrid-container
	mpctl listen --sysroot "$T" -c / -l critical -m local -t 50ms
	assert_success
	run cat "$T/sys/fs/cgroup/memory/cgroup.event_control"
	assert_output --regexp '^[0-9]+ [0-9]+ critical,local$'
}

@test "sysroot: cgroup2-only systemd machine picks psi and the session scope" {
	tree v2-systemd
	mpctl listen --sysroot "$T" -v -t 50ms
	assert_success
	assert_output "mpctl listen: listening: backend=psi cgroup=/user.slice/user-1000.slice/session-2.scope level=low file=$T/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope/memory.pressure"
}

@test "sysroot: cgroup paths with spaces, relative and absolute" {
	tree v2-systemd
	for c in "system.slice/my service.service" "/system.slice/my service.service" \
		"$T/sys/fs/cgroup/system.slice/my service.service/"; do
		mpctl listen --sysroot "$T" -c "$c" -v -t 50ms
		assert_success
		assert_output --partial "cgroup=/system.slice/my service.service level=low file=$T/sys/fs/cgroup/system.slice/my service.service/memory.pressure"
	done
}

@test "sysroot: cgroup2-only machine has no memcg backend (69)" {
	tree v2-systemd
	mpctl listen --sysroot "$T" -b memcg -t 50ms
	assert_failure 69
	assert_output "mpctl listen: no cgroup v1 memory hierarchy with memory.pressure_level is mounted"
	mpctl listen --sysroot "$T" -b mempressure -t 50ms
	assert_failure 69
	assert_output "mpctl listen: the kernel has no mempressure controller (not a patched kernel)"
}

@test "sysroot: patched kernel, mempressure on a v1 mount point with a space" {
	tree patched-v1
	mpctl listen --sysroot "$T" -v -t 50ms -l oom
	assert_success
	assert_output "mpctl listen: listening: backend=mempressure cgroup=/ level=oom file=$T/sys/fs/cgroup/mem pressure/mempressure.level"
	run cat "$T/sys/fs/cgroup/mem pressure/cgroup.event_control"
	assert_output --regexp '^[0-9]+ [0-9]+ oom$'
	mpctl listen --sysroot "$T" -c app -v -t 50ms
	assert_success
	assert_output --partial "backend=mempressure cgroup=/app level=low"
	# memcg is mounted beside it and still usable
	mpctl listen --sysroot "$T" -b memcg -v -t 50ms
	assert_success
	assert_output --partial "backend=memcg cgroup=/ level=low"
}

@test "sysroot: patched kernel, mempressure on cgroup2 registers through the file" {
	tree patched-v2
	mpctl listen --sysroot "$T" -l medium -v -t 50ms
	assert_success
	assert_output "mpctl listen: listening: backend=mempressure cgroup=/app level=medium file=$T/sys/fs/cgroup/app/mempressure.level"
	run cat "$T/sys/fs/cgroup/app/mempressure.level"
	assert_output "medium"
}

@test "sysroot: the mempressure controller compiled in but not mounted" {
	tree patched-v1
	sed -i '/mempressure/d' "$T/proc/self/mountinfo"
	mpctl listen --sysroot "$T" -b mempressure -t 50ms
	assert_failure 69
	assert_output --partial "the mempressure controller is not mounted"
}

@test "sysroot: a container's v1 mount rooted below the hierarchy root" {
	tree container-nested
	mpctl listen --sysroot "$T" -v -t 50ms
	assert_success
	assert_output "mpctl listen: listening: backend=memcg cgroup=/docker/abc123/worker level=low file=$T/sys/fs/cgroup/memory/worker/memory.pressure_level"
	mpctl listen --sysroot "$T" -c /docker/abc123 -v -t 50ms
	assert_success
	assert_output --partial "cgroup=/docker/abc123 level=low file=$T/sys/fs/cgroup/memory/memory.pressure_level"
	# outside what the container sees
	mpctl listen --sysroot "$T" -c /docker/other -t 50ms
	assert_failure 1
	assert_output "mpctl listen: cannot resolve cgroup '/docker/other': No such file or directory"
}

@test "sysroot: no cgroups and no PSI: no interface (69)" {
	tree bare
	mpctl listen --sysroot "$T" -t 50ms
	assert_failure 69
	assert_output "mpctl listen: no memory pressure interface: no mempressure, memcg v1 or PSI"
	mpctl listen --sysroot "$T" -b psi -t 50ms
	assert_failure 69
}

@test "sysroot: MPCTL_SYSROOT works like --sysroot" {
	tree v2-systemd
	MPCTL_SYSROOT=$T run "$MPCTL_BIN" listen -v -t 50ms
	assert_success
	assert_output --partial "backend=psi cgroup=/user.slice/user-1000.slice/session-2.scope"
}

@test "sysroot: .. in a cgroup path is refused" {
	tree v2-systemd
	mpctl listen --sysroot "$T" -c "user.slice/../system.slice" -t 50ms
	assert_failure 64
	assert_output --partial "must not contain '.' or '..'"
}

@test "sysroot: cgroup2-only systemd machine: stress refuses a session scope with other processes" {
	tree v2-systemd
	local scope=$T/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope
	MPCTL_SYSROOT=$T run --separate-stderr "$MPCTL_BIN" stress --duration 1s
	assert_failure 1
	[ "$stderr" = "mpctl stress: cgroup '/user.slice/user-1000.slice/session-2.scope' has other processes, so controllers cannot be enabled below it (cgroup2's no-internal-process rule): start mpctl in a cgroup of its own (systemd-run --scope -p Delegate=yes mpctl ...)" ]
	# nothing made, nothing enabled, nobody moved
	run find "$scope" -mindepth 1 -type d
	assert_output ""
	[ ! -e "$T/sys/fs/cgroup/cgroup.subtree_control" ]
	run cat "$scope/cgroup.procs"
	assert_output $'1201\n1377'
}

@test "sysroot: cgroup2-only systemd machine: report refuses the same scope in one line" {
	tree v2-systemd
	MPCTL_SYSROOT=$T run --separate-stderr "$MPCTL_BIN" report -s shrinker \
		-d 1s -r 1 --json
	assert_failure 1
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == *"has other processes"* ]]
	assert_output ""
}

@test "sysroot: stress --parent puts the run in a delegated cgroup (user@.service's app.slice)" {
	tree v2-systemd
	local app=$T/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice
	# the recorded tree has no memory.max to write in a new cgroup: the
	# failure names where the run's cgroup was made, and it is gone again
	MPCTL_SYSROOT=$T run --separate-stderr "$MPCTL_BIN" stress \
		--parent /user.slice/user-1000.slice/user@1000.service/app.slice \
		--duration 1s
	assert_failure 1
	[[ $stderr == "mpctl stress: cannot set the limit of '/user.slice/user-1000.slice/user@1000.service/app.slice/mpctl-stress-"* ]]
	run find "$app" -mindepth 1 -type d
	assert_output ""
}

@test "sysroot: cgroup2-only systemd machine: register emulates over PSI in the session scope" {
	tree v2-systemd
	MPCTL_SYSROOT=$T run --separate-stderr timeout 10 "$MPCTL_BIN" \
		register -C 1M -v -- true
	assert_success
	[ "$stderr" = "mpctl register: registered: mode=emulated backend=psi cgroup=/user.slice/user-1000.slice/session-2.scope chunk=1048576; listening for reclaim requests" ]
	run cat "$T/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope/memory.pressure"
	assert_output --regexp '^(some|full) [0-9]+ [0-9]+'
}

@test "sysroot: config.gz is read without a shell, and an unreadable one is unknown, not 'n'" {
	local r="$BATS_TEST_TMPDIR/it's \$(touch pwned)"
	cp -a "$ROOT/bats/fixtures/sysroot/bare" "$r"
	printf 'CONFIG_PSI=y\n# CONFIG_SWAP is not set\n' | gzip >"$r/proc/config.gz"
	cd "$BATS_TEST_TMPDIR"
	MPCTL_SYSROOT=$r run --separate-stderr "$MPCTL_BIN" report -s shrinker \
		-d 1s -r 1 --json
	[ ! -e pwned ]
	echo "$output" | jq -e '.system.kernel_config |
		.source == "/proc/config.gz" and .options.CONFIG_PSI == "y" and
		.options.CONFIG_SWAP == "n" and .options.CONFIG_ZRAM == "n"'
	# a corrupt config.gz: every option unknown (null), none claimed "n"
	printf '\037\213\010\000garbage' >"$r/proc/config.gz"
	MPCTL_SYSROOT=$r run --separate-stderr "$MPCTL_BIN" report -s shrinker \
		-d 1s -r 1 --json
	echo "$output" | jq -e '.system.kernel_config.options |
		length > 0 and all(.[]; . == null)'
	MPCTL_SYSROOT=$r run --separate-stderr "$MPCTL_BIN" report -s shrinker \
		-d 1s -r 1
	[[ $output == *" PSI=? "* ]]
}
