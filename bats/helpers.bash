# SPDX-License-Identifier: GPL-2.0
# Shared helpers for mpctl's bats suites, in the style of runc's:
#   load helpers
#   mpctl listen ...          runs the binary under `run`, logs to stderr
#   requires root memcg ...   skips with a reason when a prerequisite is missing
#   make_memcg NAME LIMIT     a uniquely named v1 memory cgroup, removed in teardown
#   make_v2cg NAME            a uniquely named cgroup2 cgroup, removed in teardown
#   spawn_in CG... -- CMD     starts CMD inside the cgroups, killed in teardown

bats_require_minimum_version 1.5.0 2>/dev/null || true

load_lib() {
	local name=$1 d
	for d in /usr/lib/bats /usr/local/lib/bats /usr/lib/bats-core \
		"${BATS_LIB_PATH:-}"; do
		if [ -f "$d/$name/load.bash" ]; then
			load "$d/$name/load.bash"
			return 0
		fi
	done
	return 1
}
load_lib bats-support
load_lib bats-assert

ROOT=$(cd "$(dirname "${BATS_TEST_FILENAME}")/.." && pwd)
MPCTL_BIN=${MPCTL_BIN:-$ROOT/build/mpctl}
# a name unique to this run: tests create cgroups only under names of ours
MP_RUN_ID=${MP_RUN_ID:-mpctl-test-$$-$RANDOM}

# Run mpctl under bats' run; log the command, status and output to stderr,
# which bats shows only when the test fails.
mpctl() {
	run "$MPCTL_BIN" "$@"
	echo "mpctl $* (status=$status)" >&2
	echo "$output" >&2
}

# The cgroup v1 memory hierarchy and cgroup2 mount points, from mountinfo.
memcg_root() {
	awk '$0 ~ / - cgroup / { n = split($NF, o, ","); \
		for (i = 1; i <= n; i++) if (o[i] == "memory") { print $5; exit } }' \
		/proc/self/mountinfo
}
v2_root() {
	awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo
}
mempressure_root() {
	awk '$0 ~ / - cgroup / { n = split($NF, o, ","); \
		for (i = 1; i <= n; i++) if (o[i] == "mempressure") { print $5; exit } }' \
		/proc/self/mountinfo
}

requires() {
	local p
	for p in "$@"; do
		case $p in
		root)
			[ "$(id -u)" = 0 ] || skip "needs root" ;;
		memcg)
			local m
			m=$(memcg_root)
			[ -n "$m" ] && [ -e "$m/memory.pressure_level" ] ||
				skip "no cgroup v1 memory hierarchy with memory.pressure_level" ;;
		v2)
			[ -n "$(v2_root)" ] || skip "no cgroup2 hierarchy" ;;
		psi)
			[ -e /proc/pressure/memory ] || skip "no PSI (/proc/pressure/memory)" ;;
		psi_cgroup)
			local r
			r=$(v2_root)
			[ -n "$r" ] && [ -e "$r/memory.pressure" ] ||
				skip "no cgroup2 memory.pressure" ;;
		mempressure)
			# enabled: not cgroup_disable=mempressure
			awk '$1 == "mempressure" && $4 == 1 { f = 1 } END { exit !f }' \
				/proc/cgroups ||
				skip "kernel has no mempressure controller" ;;
		stress-ng)
			command -v stress-ng >/dev/null || skip "no stress-ng" ;;
		jq)
			command -v jq >/dev/null || skip "no jq" ;;
		*)
			echo "requires: unknown prerequisite '$p'" >&2
			return 1 ;;
		esac
	done
}

# Cgroups and processes made by a test are recorded here and removed in
# teardown, even when the test fails.
MP_CGROUPS=()
MP_PIDS=()

make_memcg() {
	local name=$1 limit=${2:-} dir
	dir=$(memcg_root)/$MP_RUN_ID-$name
	mkdir "$dir"
	MP_CGROUPS+=("$dir")
	[ -z "$limit" ] || echo "$limit" > "$dir/memory.limit_in_bytes"
	# no swap for the test's cgroup when memsw exists, so limits bite
	[ -z "$limit" ] || [ ! -e "$dir/memory.memsw.limit_in_bytes" ] ||
		echo "$limit" > "$dir/memory.memsw.limit_in_bytes" 2>/dev/null || true
	echo "$dir"
}

make_v2cg() {
	local name=$1 dir
	dir=$(v2_root)/$MP_RUN_ID-$name
	mkdir "$dir"
	MP_CGROUPS+=("$dir")
	echo "$dir"
}

# spawn_in CGDIR... -- CMD ARGS: run CMD in the background inside every
# given cgroup; its pid is in $MP_SPAWNED and it is killed in teardown.
spawn_in() {
	local cgs=() c
	while [ "$1" != "--" ]; do cgs+=("$1"); shift; done
	shift
	local list="${cgs[*]}"
	# shellcheck disable=SC2016
	setsid bash -c 'for c in $1; do echo $$ > "$c/cgroup.procs"; done; shift; exec "$@"' \
		mp-spawn "$list" "$@" </dev/null >/dev/null 2>&1 &
	MP_SPAWNED=$!
	MP_PIDS+=("$MP_SPAWNED")
}

# Start mpctl in the background with output to files; wait until it says
# it is listening (-v). $MP_BG_PID, $MP_BG_OUT, $MP_BG_ERR.
mpctl_bg() {
	MP_BG_N=$((${MP_BG_N:-0} + 1))
	MP_BG_OUT=$BATS_TEST_TMPDIR/bg$MP_BG_N.out
	MP_BG_ERR=$BATS_TEST_TMPDIR/bg$MP_BG_N.err
	"$MPCTL_BIN" "$@" >"$MP_BG_OUT" 2>"$MP_BG_ERR" &
	MP_BG_PID=$!
	MP_PIDS+=("$MP_BG_PID")
	local i
	for i in $(seq 100); do
		grep -q listening "$MP_BG_ERR" 2>/dev/null && return 0
		kill -0 "$MP_BG_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "mpctl $* did not start: $(cat "$MP_BG_ERR")" >&2
	return 1
}

# wait_exit PID TIMEOUT_S: wait for a background process, return its status
wait_exit() {
	local pid=$1 t=${2:-30} i
	for i in $(seq $((t * 20))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "process $pid still running after ${t}s" >&2
		return 124
	fi
	wait "$pid"
}

# rm_cgroup DIR: kill what runs there (ours: the test put it there), rmdir
rm_cgroup() {
	local c=$1 n p
	for n in $(seq 50); do
		rmdir "$c" 2>/dev/null && return 0
		[ -d "$c" ] || return 0
		while read -r p; do kill -KILL "$p" 2>/dev/null || true; done \
			< "$c/cgroup.procs"
		sleep 0.1
	done
	echo "could not remove cgroup $c" >&2
}

mp_cleanup() {
	local p c i root
	for p in "${MP_PIDS[@]}"; do
		kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null || true
	done
	for p in "${MP_PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	# children first: remove in reverse order of creation
	for ((i = ${#MP_CGROUPS[@]} - 1; i >= 0; i--)); do
		c=${MP_CGROUPS[$i]}
		[ -d "$c" ] && rm_cgroup "$c"
	done
	# make_memcg runs in $(...), a subshell, so MP_CGROUPS may not know
	# every cgroup: sweep the run's unique names too, deepest first
	for root in "$(memcg_root)" "$(v2_root)" "$(mempressure_root)"; do
		[ -n "$root" ] || continue
		for c in "$root/$MP_RUN_ID"-*; do
			[ -d "$c" ] || continue
			while read -r p; do
				rm_cgroup "$p"
			done < <(find "$c" -depth -type d)
		done
	done
	MP_CGROUPS=()
	MP_PIDS=()
}

teardown() {
	mp_cleanup
}
