# SPDX-License-Identifier: GPL-2.0
# Shared by register.bats and add.bats: cgroups for a shrinker, fillers,
# and the VM's v1 mounts. Load after helpers.

# page cache twice the cgroup's limit: reclaim without OOM kills
fill_cmd() {
	# in a subshell, so that a kill of dd is not reported on stderr
	echo "(dd if=/dev/zero of=$BATS_TEST_TMPDIR/fill bs=1M count=${1:-150} status=none || true) 2>/dev/null"
}

# fill_cmd again and again until $BATS_TEST_TMPDIR/stop exists: pressure
# that lasts as long as the test needs it (touch the file in an EXIT trap)
fill_loop_cmd() {
	echo "(while [ ! -e $BATS_TEST_TMPDIR/stop ]; do dd if=/dev/zero of=$BATS_TEST_TMPDIR/fill bs=1M count=${1:-150} status=none || true; done) 2>/dev/null"
}

# In the test VM nothing mounts the v1 hierarchies: mount memory (and
# mempressure, when the kernel has it) for this file, unmount after.
setup_file() {
	MP_MOUNTED=""
	if mp_in_vm && [ "$(id -u)" = 0 ]; then
		local c
		for c in memory mempressure; do
			mp_have_controller "$c" || continue
			[ -z "$(mp_v1_root "$c")" ] || continue
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

# monitor_bg ARGS...: mpctl_bg for a register monitor of $SCG. With the
# kernel's shrinker on cgroup v1 (a mempressure hierarchy of its own), the
# kernel asks a shrinker for the memory cgroup of the process that accounts
# its chunks, so the monitor runs in that memcg, as the program it stands
# for would.
monitor_bg() {
	local bin=$MPCTL_BIN
	if [ -n "$(mempressure_root)" ]; then
		printf '#!/bin/sh\necho $$ >"%s/cgroup.procs" || exit 1\nexec "%s" "$@"\n' \
			"${SCG_DIRS[0]}" "$MPCTL_BIN" >"$BATS_TEST_TMPDIR/in-memcg"
		chmod +x "$BATS_TEST_TMPDIR/in-memcg"
		MPCTL_BIN=$BATS_TEST_TMPDIR/in-memcg
	fi
	mpctl_bg "$@" || { MPCTL_BIN=$bin; return 1; }
	MPCTL_BIN=$bin
}
