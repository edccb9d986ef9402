#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-vm.sh - boot the test kernel under qemu, collect and check the TAP
#
# usage: run-vm.sh KVER [DEBUG]
#
# Boots build/linux-$KVER/bzImage-$flavour with
# build/vm-$KVER/initramfs-$flavour.cpio.gz, always under timeout(1), once
# per boot group: "v2" runs the suites of bats/vm without "-v1-" in their
# name, "v1" those with it.  The memory controller must not move between
# cgroup2 and a v1 hierarchy within one boot: kmem charged while it was on
# cgroup2 and freed after it moved to v1 underflows memcg's kmem counter and
# the stock kernel WARNs (see README-harness.md).  Each boot's console goes
# to build/vm-$KVER/console-$flavour-$group.log, the TAP that /init writes
# to the second serial port to tap-$flavour-$group.txt, all TAP renumbered
# in tap-$flavour.txt.
# KVM is used only when /dev/kvm exists and a probe boot (cached in
# build/kvm-verdict) got through; otherwise TCG.
#
# Fails when qemu timed out, the TAP is missing or truncated, a test failed,
# or the console shows a kernel warning, BUG, oops, panic, lockdep, KASAN or
# kmemleak report.  Prints the TAP on stdout.
#
# Environment: VMTEST_TIMEOUT (seconds, each boot), VMTEST_FILTER (bats
# --filter regex, no spaces), VMTEST_ACCEL (kvm|tcg, skips the probe),
# VMTEST_MEM (default 1G), VMTEST_APPEND (more kernel parameters),
# VMTEST_BOOTS (boot groups, default "v2 v2det v1 v2pure"; v2det boots
# deterministic whatever VMTEST_MODE says; "repro" runs bats/vm-repro),
# VMTEST_IMAGE (boot this bzImage instead of the harness's build; "make
# vmtest VMTEST_IMAGE=..." then builds no kernel), VMTEST_MODE (tcg, the
# default, or det: the deterministic icount mode), VMTEST_SMP,
# VMTEST_ICOUNT_SHIFT: see qemu-cmd.sh.
set -euo pipefail

kver=${1:?usage: run-vm.sh KVER [DEBUG]}
debug=${2:-0}
flavour=plain
[ "$debug" = 1 ] && flavour=debug

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
vdir=$top/build/vm-$kver
image=${VMTEST_IMAGE:-$top/build/linux-$kver/bzImage-$flavour}
initrd=$vdir/initramfs-$flavour.cpio.gz
tap=$vdir/tap-$flavour.txt
verdict=$top/build/kvm-verdict

prog="run-vm $kver/$flavour"

[ -f "$image" ] || die "'$image' missing: make kernel KVER=$kver DEBUG=$debug (or VMTEST_IMAGE=)"
[ -f "$initrd" ] || die "'$initrd' missing: make initramfs KVER=$kver DEBUG=$debug"
. "$here/qemu-cmd.sh"
why=$(mp_qemu_need) || die "$why"
trap mp_qemu_kill EXIT
trap 'exit 130' INT TERM

# one boot under timeout, qemu's arguments from qemu-cmd.sh; sets qrc
boot() {
	local secs=$1 log=$2 out=$3 append=$4
	shift 4
	qrc=0
	mp_qemu_run "$secs" "$image" "$initrd" "$log" "$out" \
		"$vdir/qemu-$flavour.out" "$append" "$@" || qrc=$?
}

# --- KVM or TCG, or the deterministic mode ----------------------------------
accel=${VMTEST_ACCEL:-}
if [ "${VMTEST_MODE:-tcg}" = det ]; then
	accel=tcg
elif [ -z "$accel" ]; then
	accel=tcg
	if [ -e /dev/kvm ]; then
		key=$(mp_qemu_kvm_key)
		if cached=$(mp_qemu_kvm_cached "$verdict"); then
			accel=$cached
		else
			msg "probing KVM (20s)"
			VMTEST_ACCEL=kvm mp_qemu_setup || die "bad VMTEST_*"
			boot 20 "$vdir/kvm-probe.log" "$vdir/kvm-probe.out" \
				mpctl.probe=1
			if grep -q MPCTL-PROBE-OK "$vdir/kvm-probe.log" 2>/dev/null; then
				accel=kvm
			fi
			printf '%s\n%s\n' "$key" "$accel" >"$verdict"
			msg "KVM verdict: $accel (cached in '$verdict')"
		fi
	fi
fi
VMTEST_ACCEL=$accel mp_qemu_setup || die "bad VMTEST_MODE, VMTEST_SMP or VMTEST_ICOUNT_SHIFT"
accel_kind=$accel
accel=$mp_qemu_desc
if [ -z "${VMTEST_TIMEOUT:-}" ]; then
	VMTEST_TIMEOUT=900
	[ "$flavour" = debug ] && VMTEST_TIMEOUT=1800
fi

# VMTEST_APPEND is in mp_qemu_append already
append=
[ -n "${VMTEST_FILTER:-}" ] && append="mpctl.filter=$VMTEST_FILTER"

# kernel splats; the ignore list holds known-harmless lines, one ERE a line
bad_re='WARNING:|BUG:|Oops|Kernel panic|possible circular locking|INFO: [a-z]|'
bad_re+='KASAN:|kmemleak:|unreferenced object|UBSAN:|general protection fault|'
bad_re+='possible recursive locking|inconsistent lock state|RCU stall|hung_task'
ignore=$here/console-ignore.re

# one boot of group $1; appends its results to $tap.body, fails when the
# boot did
run_boot() {
	local group=$1 console=$vdir/console-$flavour-$1.log
	local tapraw=$vdir/tap-$flavour-$1.raw btap=$vdir/tap-$flavour-$1.txt
	local secs t0 plan ran failed skipped splats timing boot_s s0 s1 suite_s line
	local bfail=0 load0 load1 accel=$accel

	# the det boot group (tests that compare times side by side):
	# deterministic, one seed, whatever VMTEST_MODE says for the others
	if [ "$group" = v2det ]; then
		VMTEST_MODE=det VMTEST_SEED=${VMTEST_SEED:-1} VMTEST_SMP= \
			mp_qemu_setup || die "bad VMTEST_ICOUNT_SHIFT or VMTEST_SEED"
		accel=$mp_qemu_desc
	fi
	msg "boot $group ($accel, timeout ${VMTEST_TIMEOUT}s), console in '$console'"
	t0=$(date +%s)
	# the host's 1-minute load at both ends: under TCG the guest's timings
	# stretch with the host's other work (the cores are shared)
	load0=$(cut -d' ' -f1 /proc/loadavg)
	local extra=
	# the pure cgroup2 boot is a stock kernel for memcg's paths
	case $group in
	v2pure | bench-v2pure) extra=" cgroup_disable=mempressure" ;;
	esac
	boot "$VMTEST_TIMEOUT" "$console" "$tapraw" \
		"$append mpctl.boot=$group$extra"
	[ "$group" != v2det ] || VMTEST_ACCEL=$accel_kind mp_qemu_setup
	secs=$(($(date +%s) - t0))
	load1=$(cut -d' ' -f1 /proc/loadavg)

	if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		msg "$group: qemu timed out after ${VMTEST_TIMEOUT}s"
		bfail=1
	elif [ "$qrc" != 0 ]; then
		msg "$group: qemu exited with status $qrc: $(tail -n 5 "$vdir/qemu-$flavour.out")"
		bfail=1
	fi

	tr -d '\r' <"$tapraw" 2>/dev/null |
		sed -n '/^MPCTL-TAP-BEGIN$/,/^MPCTL-TAP-END/p' >"$btap.all" || true
	grep -v '^MPCTL-TAP-' "$btap.all" >"$btap" || true
	if ! grep -q '^MPCTL-TAP-BEGIN$' "$btap.all"; then
		msg "$group: no TAP from the VM"
		bfail=1
	elif ! grep -q '^MPCTL-TAP-END' "$btap.all"; then
		msg "$group: TAP truncated (no end marker)"
		bfail=1
	fi

	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$btap" | head -n1)
	ran=$(grep -cE '^(not )?ok ' "$btap" || true)
	failed=$(grep -cE '^not ok ' "$btap" || true)
	skipped=$(grep -cE '^ok .*# skip' "$btap" || true)
	if [ -z "$plan" ]; then
		[ $bfail = 1 ] || msg "$group: TAP has no plan"
		bfail=1
	elif [ "$plan" != "$ran" ]; then
		msg "$group: TAP plan 1..$plan but $ran results"
		bfail=1
	fi
	[ "$failed" = 0 ] || bfail=1
	# renumber into the combined TAP, boot group in the name
	awk -v g="$group" -v n="$total" '
		/^(not )?ok [0-9]+/ {
			n++
			sub(/^ok [0-9]+/, "ok " n " [" g "]")
			sub(/^not ok [0-9]+/, "not ok " n " [" g "]")
			print; next
		}
		/^1\.\./ { next }
		{ print }' "$btap" >>"$tap.body"
	total=$((total + ran))

	splats=$(tr -d '\r' <"$console" | grep -E "$bad_re" |
		grep -vEf <(grep -v '^#' "$ignore" | sed '/^$/d') || true)
	if [ -n "$splats" ]; then
		msg "$group: kernel splat on the console ('$console'):"
		printf '%s\n' "$splats" | head -n 20 | sed 's/^/  /' >&2
		bfail=1
	fi

	timing=$(tr -d '\r' <"$console" | sed -n 's/^MPCTL-TIMING //p' | tail -n1)
	boot_s=$(printf '%s\n' "$timing" | sed -n 's/.*boot_s=\([0-9.]*\).*/\1/p')
	s0=$(printf '%s\n' "$timing" | sed -n 's/.*suite_start_s=\([0-9.]*\).*/\1/p')
	s1=$(printf '%s\n' "$timing" | sed -n 's/.*suite_end_s=\([0-9.]*\).*/\1/p')
	suite_s=
	if [ -n "$s0" ] && [ -n "$s1" ]; then
		suite_s=$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.1f", b - a }')
	fi
	line="$(date -u +%FT%TZ) $kver $flavour boot=$group accel=${accel// /,} wall_s=$secs"
	line+=" boot_s=${boot_s:-?} suite_s=${suite_s:-?} host_load=$load0,$load1"
	line+=" tests=${ran} failed=${failed} skipped=${skipped}"
	line+=" result=$([ $bfail = 0 ] && echo pass || echo FAIL)"
	echo "$line" >>"$top/build/vm-times.log"
	msg "$group: $ran tests, $failed failed, $skipped skipped; wall ${secs}s," \
		"kernel boot ${boot_s:-?}s, suites ${suite_s:-?}s," \
		"host load $load0 to $load1"
	[ $bfail = 0 ] || msg "$group: FAILED (console: '$console', TAP: '$btap')"
	return $bfail
}

fail=0
total=0
rm -f "$tap" "$tap.body"
: >"$tap.body"
for group in ${VMTEST_BOOTS:-v2 v2det v1 v2pure}; do
	run_boot "$group" || fail=1
done
{
	echo "1..$total"
	cat "$tap.body"
} >"$tap"
rm -f "$tap.body"
cat "$tap"
[ $fail = 0 ] || die "FAILED"
msg "passed"
