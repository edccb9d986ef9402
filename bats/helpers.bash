# SPDX-License-Identifier: GPL-2.0
# Shared helpers for mpctl's bats suites, in the style of runc's:
#   load helpers
#   mpctl listen ...          runs the binary under `run`, logs to stderr
#   requires root memcg ...   skips with a reason when a prerequisite is missing
#                             (bats/lib/core.bash, shared with the VM suites)
#   make_memcg NAME LIMIT     a uniquely named v1 memory cgroup, removed in teardown
#   make_v2cg NAME            a uniquely named cgroup2 cgroup, removed in teardown
#   spawn_in CG... -- CMD     starts CMD inside the cgroups, killed in teardown

bats_require_minimum_version 1.5.0 2>/dev/null || true

# requires, mp_run, the cgroup mount points, background processes and
# cgroup removal: the same as in the VM suites
# shellcheck source=bats/lib/core.bash
. "${BASH_SOURCE[0]%/*}/lib/core.bash"

ROOT=$(cd "$(dirname "${BATS_TEST_FILENAME}")/.." && pwd)
MPCTL_BIN=${MPCTL_BIN:-$ROOT/build/mpctl}
# a name unique to this run: tests create cgroups only under names of ours
MP_RUN_ID=${MP_RUN_ID:-mpctl-test-$$-$RANDOM}

# Run mpctl under bats' run; log the command, status and output to stderr,
# which bats shows only when the test fails.
mpctl() {
	run "$MPCTL_BIN" "$@"
	mp_trace "mpctl $*"
}

# Cgroups made by a test are recorded here (processes in core's MP_PIDS)
# and removed in teardown, even when the test fails.
MP_CGROUPS=()

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

mp_cleanup() {
	local c i root
	mp_kill_bg
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
			mp_cg_rmtree "$c"
			rm_cgroup "$c"
		done
	done
	MP_CGROUPS=()
}

teardown() {
	mp_cleanup
}

# pool_r_base: $BATS_TEST_TMPDIR/base.json, the fixture
# report-vm612-R-base.json's two boots pooled. The fixture predates the boot
# tags: its runs are boot 1's three, then boot 2's; tagged, --compare sees
# the boot-to-boot spread
pool_r_base() {
	jq '.scenarios |= map(.runs |= (to_entries |
		map(.value + {boot: ((.key / 3 | floor) + 1)})) | del(.metrics))' \
		"$ROOT/bats/fixtures/report-vm612-R-base.json" > "$BATS_TEST_TMPDIR/base.raw.json"
	mpctl report --input "$BATS_TEST_TMPDIR/base.raw.json" --json \
		-o "$BATS_TEST_TMPDIR/base.json"
	assert_success
}

# check_metrics FILE [FORMAT]: FILE is a valid exposition for its format's
# own checker: promtool (prometheus, the default) or Debian's OpenMetrics
# parser (openmetrics, through bats/openmetrics-check); their output on
# failure
check_metrics() {
	local f=$1 fmt=${2:-prometheus} out
	if [ "$fmt" = openmetrics ]; then
		requires openmetrics
		out=$("$ROOT/bats/openmetrics-check" <"$f" 2>&1) ||
			fail "not OpenMetrics: $out"
	else
		requires prog:promtool
		out=$(promtool check metrics <"$f" 2>&1) ||
			fail "promtool check metrics: $out"
	fi
}
