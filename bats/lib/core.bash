# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# core.bash - what the host suites (bats/helpers.bash) and the in-VM suites
# (bats/vm/helpers.bash) share; each of them sources this file first.
#
#   requires WHAT...        skip with a reason unless every WHAT holds; one
#                           meaning for each WHAT, on the host and in the VM
#   mp_run CMD...           run under bats' run, trace on stderr
#   memcg_root, v2_root, mempressure_root
#                           mount points, from mountinfo (empty when none)
#   MP_PIDS, mp_stop_bg, mp_kill_bg
#                           background processes of a test, ended in teardown
#   wait_exit PID SECS      wait for a background process, with a timeout
#   rm_cgroup DIR, mp_cg_rmtree DIR
#                           remove a cgroup, a cgroup's children, killing
#                           what runs there
#
# Callers set MPCTL_BIN (the mpctl under test) before calling requires.

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

# mp_trace LABEL: after run, log LABEL, the status and the output to
# stderr, which bats shows only when the test fails
# shellcheck disable=SC2154 # status and output are set by run
mp_trace() {
	echo "$1 (status=$status)" >&2
	printf '%s\n' "$output" >&2
}

mp_run() {
	run "$@"
	mp_trace "$*"
}

mp_in_vm() {
	[ -f /mpctl/flavour ]
}

# mp_v1_root CONTROLLER: where a v1 hierarchy with CONTROLLER is mounted
mp_v1_root() {
	awk -v c="$1" '$0 ~ / - cgroup / { n = split($NF, o, ",");
		for (i = 1; i <= n; i++) if (o[i] == c) { print $5; exit } }' \
		/proc/self/mountinfo
}
memcg_root() {
	mp_v1_root memory
}
mempressure_root() {
	mp_v1_root mempressure
}
v2_root() {
	awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo
}

# mp_have_controller NAME: the kernel has the controller, enabled
mp_have_controller() {
	awk -v c="$1" '$1 == c && $4 == 1 { f = 1 } END { exit !f }' /proc/cgroups
}

# requires WHAT...: skip the test with a reason unless every WHAT holds
#   root          running as root
#   vm            inside the mpctl test VM
#   memory        the kernel has the memory controller (on v1 or v2)
#   mempressure   the kernel has the mempressure controller (v1 or v2)
#   memcg         a v1 memory hierarchy with memory.pressure_level is mounted
#   v2            a cgroup2 hierarchy is mounted
#   psi           /proc/pressure/memory
#   psi_cgroup    memory.pressure in cgroup2's root
#   swap          a swap device is on
#   mpctl         the mpctl under test ($MPCTL_BIN) exists
#   jq, stress-ng, prog:NAME
#                 the program is on $PATH
#   openmetrics   Debian's python3-prometheus-client (its OpenMetrics
#                 parser, for bats/openmetrics-check)
requires() {
	local w r
	for w in "$@"; do
		case $w in
		root)
			[ "$(id -u)" = 0 ] || skip "needs root" ;;
		vm)
			mp_in_vm || skip "not in the mpctl test VM" ;;
		memory)
			mp_have_controller memory ||
				skip "no memory controller in /proc/cgroups" ;;
		mempressure)
			mp_have_controller mempressure ||
				skip "no mempressure controller in /proc/cgroups" ;;
		memcg)
			r=$(memcg_root)
			[ -n "$r" ] && [ -e "$r/memory.pressure_level" ] ||
				skip "no cgroup v1 memory hierarchy with memory.pressure_level" ;;
		v2)
			[ -n "$(v2_root)" ] || skip "no cgroup2 hierarchy" ;;
		psi)
			[ -r /proc/pressure/memory ] ||
				skip "no PSI (/proc/pressure/memory)" ;;
		psi_cgroup)
			r=$(v2_root)
			[ -n "$r" ] && [ -e "$r/memory.pressure" ] ||
				skip "no cgroup2 memory.pressure" ;;
		swap)
			[ "$(wc -l </proc/swaps)" -gt 1 ] || skip "no swap" ;;
		mpctl)
			[ -x "${MPCTL_BIN:-}" ] ||
				skip "no mpctl at '${MPCTL_BIN:-}'" ;;
		openmetrics)
			/usr/bin/python3 -c 'import prometheus_client.openmetrics.parser' \
				2>/dev/null ||
				skip "no python3-prometheus-client (OpenMetrics parser)" ;;
		jq | stress-ng | prog:*)
			command -v "${w#prog:}" >/dev/null ||
				skip "no ${w#prog:} on \$PATH" ;;
		*)
			echo "requires: unknown prerequisite '$w'" >&2
			return 1 ;;
		esac
	done
}

# Background processes of a test: add their pids to MP_PIDS; teardown
# calls mp_kill_bg. The array is filled in the test's own shell (not in
# $(...)), so teardown sees it.
MP_PIDS=()

# mp_stop_bg [SIGNAL]: signal every background process (TERM by default),
# wait for them all, forget them
mp_stop_bg() {
	local sig=${1:-TERM} p
	[ ${#MP_PIDS[@]} -gt 0 ] || return 0
	kill -"$sig" "${MP_PIDS[@]}" 2>/dev/null || true
	for p in "${MP_PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	MP_PIDS=()
}

# mp_kill_bg: SIGKILL every background process, and its process group when
# it leads one (spawn_in's setsid), then wait for them all
mp_kill_bg() {
	local p
	for p in "${MP_PIDS[@]}"; do
		kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null || true
	done
	for p in "${MP_PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	MP_PIDS=()
}

# wait_exit PID [SECS]: wait for a background process, return its status
# (124 when it still runs after SECS, 30 by default)
wait_exit() {
	local pid=$1 t=${2:-30}
	for _ in $(seq $((t * 20))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "process $pid still running after ${t}s" >&2
		return 124
	fi
	wait "$pid"
}

# rm_cgroup DIR: kill what runs there (ours: the test put it there), rmdir;
# a v1 memcg is emptied first, so that it really goes away
rm_cgroup() {
	local c=$1 p
	[ ! -e "$c/memory.force_empty" ] ||
		echo 0 >"$c/memory.force_empty" 2>/dev/null || true
	for _ in $(seq 50); do
		rmdir "$c" 2>/dev/null && return 0
		[ -d "$c" ] || return 0
		while read -r p; do
			kill -KILL "$p" 2>/dev/null || true
		done <"$c/cgroup.procs"
		sleep 0.1
	done
	echo "could not remove cgroup $c" >&2
}

# mp_cg_rmtree DIR: remove every cgroup below DIR, deepest first (DIR
# itself stays: it may be a hierarchy's root)
mp_cg_rmtree() {
	local d
	[ -d "$1" ] || return 0
	find "$1" -mindepth 1 -depth -type d | while read -r d; do
		rm_cgroup "$d"
	done
}
