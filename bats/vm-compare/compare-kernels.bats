#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The test compare-kernels.sh boots: run mpctl report, write the document
# into the TAP. The script copies this file into the boot's overlay as
# /mpctl/bats/vm/zz-compare-kernels.bats (zz-v2pure-... for -P, as
# vm-init.sh picks a boot's suites by name) beside its settings,
# /mpctl/compare.conf, one KEY=VALUE a line:
#
#   v2=0|1          1: the memory and mempressure controllers on cgroup2
#   lru_gen=y|n|    MGLRU on or off for every scenario, empty: as booted
#   other_lru=y|n|  -L: these scenarios once more with MGLRU this way
#   report=ARGS     mpctl report's arguments (words, no quoting)
#   relru=ARGS      -L's mpctl report arguments
#   warmup=ARGS     -L's run after the switch, not kept

# conf KEY: the value of KEY in /mpctl/compare.conf
conf() {
	local line
	while IFS= read -r line; do
		[ "${line%%=*}" != "$1" ] || { printf '%s\n' "${line#*=}"; return 0; }
	done </mpctl/compare.conf
	echo "compare.conf: no $1" >&2
	return 1
}

mount_v1() {
	# cgroup2 alone (-P): no v1 hierarchy to mount
	[ ! -e /sys/fs/cgroup/cgroup.controllers ] || return 0
	grep -qw "^$1" /proc/cgroups || return 0
	awk -v c="$1" '$0 ~ / - cgroup / { n = split($NF, o, ",")
		for (i = 1; i <= n; i++) if (o[i] == c) f = 1 }
		END { exit !f }' /proc/self/mountinfo && return 0
	mkdir -p "/sys/fs/cgroup/$1"
	mount -t cgroup -o "$1" none "/sys/fs/cgroup/$1"
}

# emit NAME FILE RC: FILE base64 in the TAP between MPCTL-NAME-BEGIN and
# MPCTL-NAME-END lines, as compare-kernels.sh cuts it out
emit() {
	echo "# MPCTL-$1-BEGIN rc=$3" >&3
	base64 -w 76 "$2" | sed "s/^/# MPCTL-$1 /" >&3
	echo "# MPCTL-$1-END" >&3
}

@test "mpctl-compare-kernels report" {
	local v2 lru_gen other_lru report relru warmup w rc
	[ -x /mpctl/bin/mpctl ] || { echo "no /mpctl/bin/mpctl" >&2; return 1; }
	v2=$(conf v2) && lru_gen=$(conf lru_gen) &&
		other_lru=$(conf other_lru) || return 1
	# the arguments: words, split here (a missing key fails the test)
	w=$(conf report) || return 1
	read -r -a report <<<"$w"
	w=$(conf relru) || return 1
	read -r -a relru <<<"$w"
	w=$(conf warmup) || return 1
	read -r -a warmup <<<"$w"
	if [ "$v2" = 1 ]; then
		echo "+memory +mempressure" >/sys/fs/cgroup/unified/cgroup.subtree_control
	else
		mount_v1 memory
		mount_v1 mempressure
	fi
	if [ -n "$lru_gen" ]; then
		[ -w /sys/kernel/mm/lru_gen/enabled ] ||
			{ echo "-g $lru_gen: no /sys/kernel/mm/lru_gen/enabled" >&2; return 1; }
		echo "$lru_gen" >/sys/kernel/mm/lru_gen/enabled
	fi
	rc=0
	/mpctl/bin/mpctl report "${report[@]}" -o /tmp/report.json \
		2>/tmp/report.err || rc=$?
	sed 's/^/# report: /' /tmp/report.err >&3
	[ -s /tmp/report.json ] || return 1
	# which kernel this was: a demo kernel has mempressure.test_demo
	echo "# MPCTL-KERNEL test_demo=$(cat /sys/module/mempressure/parameters/test_demo 2>/dev/null || echo none) cmdline=$(cat /proc/cmdline)" >&3
	emit REPORT /tmp/report.json "$rc"
	# -L: scenarios once more with MGLRU the other way, then back
	[ -n "$other_lru" ] || return 0
	echo "$other_lru" >/sys/kernel/mm/lru_gen/enabled
	# the first run after the switch frees fewer chunks (measured: 290
	# and 284 of 368 on 6.1, 226 of 297 on 6.12, in every boot), which
	# widens the base's spread: one run of the first scenario, not kept
	/mpctl/bin/mpctl report "${warmup[@]}" \
		-o /tmp/report-lru-warmup.json 2>/dev/null || true
	rc=0
	/mpctl/bin/mpctl report "${relru[@]}" -o /tmp/report-lru.json \
		2>/tmp/report-lru.err || rc=$?
	echo "$lru_gen" >/sys/kernel/mm/lru_gen/enabled
	sed 's/^/# report: /' /tmp/report-lru.err >&3
	[ -s /tmp/report-lru.json ] || return 1
	emit REPORT-LRU /tmp/report-lru.json "$rc"
}
