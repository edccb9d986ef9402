#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run every test and print one closing line "N passed, N failed, N skipped".
#
#   scripts/check.sh              host suite, the VM suite on each patched
#                                 kernel, the cross-kernel comparison
#   scripts/check.sh --host-only  host suite (and make check-format) only
#   scripts/check.sh --vm-only    VM suites and comparison only
#
# Environment: MPCTL_VM=0 leaves out the VM suites and the comparison (see
# kernel-patch/README-harness.md), MPCTL_COMPARE=0 only the comparison
# (MPCTL_COMPARE_BOOTS, default 3: boots per kernel; MPCTL_COMPARE_DURATION,
# default 2s: each report run; MPCTL_COMPARE_JOBS, default 2: VMs at once);
# KERNEL_VERSIONS (default "6.1 6.12") and VM_DEBUG (default 0; 1: lockdep,
# KASAN, list debugging) choose the kernels; MPCTL_KERNEL_CACHE (default
# /var/cache/mpctl-kernels) keeps the kernel trees across clones, so a
# fresh clone builds them only once per machine. TAP goes to build/tap/.
#
# One function per stage; each writes its TAP to build/tap/STAGE.tap (and
# on stdout), and the end counts them all (scripts/tap.sh).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/tap.sh
. scripts/tap.sh
tapdir=build/tap
vers=(${KERNEL_VERSIONS:-6.1 6.12})
debug=${VM_DEBUG:-0}
chain=''

# why the VM stages cannot run, on stdout, and 1; or 0
vm_ok() {
	[ "${MPCTL_VM:-1}" != 0 ] || { echo "left out (MPCTL_VM=0)"; return 1; }
	[ -f kernel-patch/kernel.mk ] || { echo "no VM harness"; return 1; }
	# shellcheck source=kernel-patch/scripts/qemu-cmd.sh
	. kernel-patch/scripts/qemu-cmd.sh
	mp_qemu_need || return 1
	return 0
}

# the VM suites' kernels build in the background, one after the other,
# from the start: under SCHED_IDLE they take only what the host suite
# and then the VM suites leave (one of the two cores, mostly), and each
# VM suite's own "make kernel" waits for its kernel under the build lock
# (nothing to do when the cache has them)
start_kernel_builds() {
	local cache v idle
	# kernel trees are cached outside the clone, keyed by their inputs
	# (build-kernel.sh's stamps), so a fresh clone on this machine
	# reuses them; MPCTL_KERNEL_CACHE= (empty) keeps them in build/
	cache=${MPCTL_KERNEL_CACHE-/var/cache/mpctl-kernels}
	if [ -n "$cache" ] && mkdir -p "$cache" 2>/dev/null; then
		for v in "${vers[@]}"; do
			[ -e "build/linux-$v" ] && [ ! -L "build/linux-$v" ] && continue
			mkdir -p "$cache/linux-$v"
			ln -sfn "$cache/linux-$v" "build/linux-$v"
		done
	fi
	idle=(nice -n 19)
	chrt --idle 0 true 2>/dev/null && idle=(chrt --idle 0)
	# its own process group (setsid), so that an interrupted check
	# stops the build with it
	# shellcheck disable=SC2016 # expanded by the inner bash
	TAPDIR=$tapdir DEBUG=$debug setsid "${idle[@]}" bash -c '
		for v; do
			make --no-print-directory kernel KVER="$v" DEBUG="$DEBUG" \
				>"$TAPDIR/kernel-$v.log" 2>&1
		done' _ "${vers[@]}" &
	chain=$!
	trap '[ -z "$chain" ] || kill -- -"$chain" 2>/dev/null' EXIT
}

stage_host() {
	local htmp
	echo "== host suite ($(uname -r))"
	# a temp dir of the suite's own: whatever a test or the tool left
	# in it (a killed run's files, a nested bats' run dir) is a failure
	htmp=$(mktemp -d "${TMPDIR:-/tmp}/mpctl-check.XXXXXX")
	TMPDIR=$htmp bats --tap bats/*.bats | tee "$tapdir/host.tap"
	# bats' own verdict too: a suite that died counts
	tap_status "$tapdir/host.tap" "${PIPESTATUS[0]}" "bats (host suite)"
	tap_empty_dir "$tapdir/host.tap" "$htmp" "the host suite"
	rm -rf "$htmp"
	grep '^not ok - ' "$tapdir/host.tap"
}

stage_format() {
	local out
	echo "== clang-format (make check-format)"
	{
		# a missing prerequisite skips (make check's deps install it)
		if ! command -v "${CLANG_FORMAT:-clang-format}" >/dev/null; then
			echo "ok 1 the C sources pass .clang-format # skip no ${CLANG_FORMAT:-clang-format}"
		elif out=$(make --no-print-directory check-format 2>&1); then
			echo "ok 1 the C sources pass .clang-format"
		else
			printf '%s\n' "$out" | sed 's/^/# /'
			echo "not ok 1 the C sources pass .clang-format (make format)"
		fi
	} | tee "$tapdir/format.tap"
}

# the VM's mpctl: without it the in-VM mpctl tests would skip
stage_static() {
	make --no-print-directory static >"$tapdir/static.log" 2>&1 && return 0
	tail -n 15 "$tapdir/static.log" | sed 's/^/# /'
	echo "not ok 1 make static failed (see $tapdir/static.log)" |
		tee "$tapdir/static.tap"
}

# stage_vm KVER: the in-VM suites on the patched KVER
stage_vm() {
	local v=$1 log=$tapdir/vm-$1.log app rc=0
	echo "== VM suite, patched $v (DEBUG=$debug)"
	# waits for the background build of this kernel (a failed build
	# shows in vmtest, which retries it)
	make --no-print-directory kernel KVER="$v" DEBUG="$debug" \
		>>"$tapdir/kernel-$v.log" 2>&1 || true
	# the host suites replayed in the VM (v1 and pure v2 layouts) test
	# mpctl, not the kernel: on the last kernel only, one representative
	# (3 min a kernel)
	app=${VMTEST_APPEND:-}
	[ "$v" = "${vers[-1]}" ] || app+=" mpctl.host_suites=0"
	VMTEST_APPEND=${app# } make --no-print-directory vmtest KVER="$v" \
		DEBUG="$debug" >"$log" 2>&1 || rc=$?
	# the TAP the VM wrote, whatever the verdict
	grep -E '^(ok|not ok|1\.\.)' "$log" | sed "s/^\(not ok\|ok\) \([0-9]*\)/\1 \2 [$v]/" \
		>"$tapdir/vm-$v.tap" || true
	cat "$tapdir/vm-$v.tap"
	[ $rc = 0 ] && return 0
	tail -n 15 "$log" | sed 's/^/# /'
	echo "not ok - vmtest $v: the VM run failed (status $rc, see $log)" |
		tee -a "$tapdir/vm-$v.tap"
}

# the comparison's settings, for both of its stages: deterministic mode
# (qemu -icount). MGLRU on (-g y), the harder case for the series: there
# reclaim swaps out at the first priority, where a kernel that does not
# ask first loses the chunks to zram (the noaskfirst demo below). cgroup
# v2 with the series (-V), the layout users run (the v1 layout: make
# compare-scenarios, by hand). No -s: the report's standard suite, which
# has the configurations where the series differs: swap on
# (kernel-shrinker) and off (-noswap), memory.high below max and
# memory.max alone (-max), a program that answers 50 ms late (-late), and
# one that stops answering beside a co-tenant (-stopped); -L runs
# kernel-shrinker and -noswap once more in every boot with MGLRU off
# (classic LRU). Each scenario costs about 4 s in every one of the 12
# boots; the strategies are by name only (make compare-scenarios)
boots=${MPCTL_COMPARE_BOOTS:-3}
cargs=(-M det -d "${MPCTL_COMPARE_DURATION:-2s}" -r 3
       -j "${MPCTL_COMPARE_JOBS:-2}" -g y -V
       -L kernel-shrinker -L kernel-shrinker-noswap)

# 6.1 against 6.12, each kernel booted $boots times, boots two at a time
# (icount timings do not depend on the host's load)
stage_compare() {
	local cmpdir=build/compare log=$tapdir/compare.log rc=0 n c
	echo "== mpctl report on 6.1 and 6.12, deterministic, $boots boots each, compared"
	kernel-patch/scripts/compare-kernels.sh "${cargs[@]}" \
		-b "$boots" -n "$boots" -c 1 -E 1 -o "$cmpdir" \
		6.1 6.12 >"$log" 2>&1 || rc=$?
	cat "$cmpdir/compare.txt" 2>/dev/null
	# 0: no regression, 1: a regression (a finding, shown above); 3: a
	# control boot (of 6.1, -c, or of 6.12, -E: it fills the slot the
	# third 6.12 boot leaves free) was flagged; anything else: a VM or
	# a report failed
	{
		if [ $rc -le 1 ] || [ $rc = 3 ] &&
		   [ -s "$cmpdir/compare.json" ]; then
			echo "ok 1 compare-kernels 6.1 6.12: compared (status $rc)"
		else
			tail -n 15 "$log" | sed 's/^/# /'
			echo "not ok 1 compare-kernels 6.1 6.12: failed (status $rc, see $log)"
		fi
		n=2
		for c in "control-1 6.1" "ncontrol-1 6.12"; do
			set -- $c
			if jq -e '.regressions == 0' "$cmpdir/$1.json" >/dev/null 2>&1; then
				echo "ok $n --compare does not flag another boot of $2"
			else
				# which build each boot ran, and what was flagged
				grep -E "^compare-kernels: ($2-(n|b|control|ncontrol)-|control|new control)" "$log" |
					sed 's/^/# /'
				# the rows that flagged it: the table's, and the
				# JSON's (p, minimum effect, base range)
				grep -E 'WORSE$' "$cmpdir/$1.txt" 2>/dev/null |
					sed 's/^/# /'
				jq -c '.rows[] | select(.verdict == "worse")' \
					"$cmpdir/$1.json" 2>/dev/null | sed 's/^/# /'
				echo "not ok $n --compare does not flag another boot of $2 (status $rc, see $log)"
			fi
			n=$((n + 1))
		done
	} | tee "$tapdir/compare.tap"
}

# the demos (make regression-demo): 6.12 built once with a test-only
# patch whose breakage is chosen at boot (drop 3 of 4 requests, 2 ms
# delay, never ask early as without the "ask first" patch); each must be
# flagged against the pooled 6.12 of stage_compare (whose control boot of
# the real 6.12 must not be). drop1of5 is left to make regression-demo:
# the kernel asks again for what a dropped request lost (measured:
# reclaim_requests +75%, chunks_freed -0.3%), which the report calls no
# regression in some boots (README-harness.md)
stage_demos() {
	local base612=build/compare/report-6.12-pooled.json
	local cmpdir=build/compare-regress log=$tapdir/compare-regress.log
	local dargs=(-b "$boots") rc=0 n d
	echo "== --compare on 6.12 broken three ways"
	[ -s "$base612" ] && dargs=(-U "$base612")
	kernel-patch/scripts/compare-kernels.sh "${cargs[@]}" \
		"${dargs[@]}" -D drop3of4,delay2ms,noaskfirst -o "$cmpdir" \
		6.12 6.12 >"$log" 2>&1 || rc=$?
	sed 's/^/# /' "$cmpdir"/demo-*.txt 2>/dev/null |
		grep -E 'WORSE|better$|regression|^# base'
	{
		[ $rc = 1 ] || [ $rc = 4 ] || tail -n 15 "$log" | sed 's/^/# /'
		n=1
		for d in drop3of4 delay2ms noaskfirst; do
			if jq -e '.regressions > 0' "$cmpdir/demo-$d.json" >/dev/null 2>&1; then
				echo "ok $n --compare flags the $d demo kernel"
			else
				echo "not ok $n --compare flags the $d demo kernel (status $rc, see $log)"
			fi
			n=$((n + 1))
		done
	} | tee "$tapdir/compare-regress.tap"
}

# every result, and every result a plan promised that never came; the
# failures again at the end, where a truncated log still shows them
summary() {
	tap_count "$tapdir"/*.tap
	if [ "$tap_failed" -gt 0 ]; then
		echo "== what failed"
		tap_failures "$tapdir"/*.tap
	fi
	echo "$tap_passed passed, $tap_failed failed, $tap_skipped skipped"
	[ "$tap_failed" -eq 0 ] && [ "$tap_passed" -gt 0 ]
}

host=1 vms=1
case ${1:-} in
--host-only) vms=0 ;;
--vm-only) host=0 ;;
'') ;;
*) echo "usage: $0 [--host-only | --vm-only]" >&2; exit 64 ;;
esac

mkdir -p "$tapdir"
rm -f "$tapdir"/*.tap
why=''
if [ $vms = 1 ] && ! why=$(vm_ok); then
	vms=0
	echo "ok 1 VM suites # skip $why" | tee "$tapdir/vm.tap"
fi
[ $vms = 0 ] || start_kernel_builds
if [ $host = 1 ]; then
	stage_host
	stage_format
fi
if [ $vms = 1 ]; then
	stage_static
	for v in "${vers[@]}"; do
		stage_vm "$v"
	done
	wait "$chain" 2>/dev/null
	chain=''
	if [ "${MPCTL_COMPARE:-1}" != 0 ]; then
		stage_compare
		stage_demos
	fi
fi
summary
