# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# qemu-cmd.sh - the one qemu command line of the VM harness, sourced by
#               run-vm.sh and compare-kernels.sh (and by scripts/check.sh
#               for mp_qemu_need); nothing else names qemu's binary or
#               builds its arguments
#
# Two modes (VMTEST_MODE):
#
#   tcg  (default; functional tests) plain TCG, or KVM when the caller
#        says so (VMTEST_ACCEL=kvm), 2 vCPUs (VMTEST_SMP): fast, but the
#        guest's clock is the host's, so every timing the guest measures
#        changes with the host's load
#   det  (measurements) TCG with "-icount shift=N,sleep=off": the guest's
#        clock advances by 2^N ns per emulated instruction, so the guest
#        sees the same time for the same work whoever else uses the host;
#        "-rtc clock=vm" (the RTC follows that clock too), one vCPU, and
#        "nokaslr norandmaps" on the kernel command line (no address-space
#        randomisation in the kernel or in the programs)
#
# Both modes take the same guest memory (VMTEST_MEM, default 1G) and the
# same base kernel command line for every kernel.
#
# Why one vCPU in det mode (README-harness.md, "Two vCPUs under icount"):
# with "-smp 2" and icount (shift 0 and 2; clocksource=jiffies,
# tsc=reliable, no_timer_check; -cpu max, -cpu Haswell) the 6.1 guest hangs
# at "x86: Booting SMP configuration" under qemu 7.2, where qemu runs every
# vCPU round-robin in one thread; 6.12 boots, but its timings then depend
# on the host again (listen p50 1096% apart between boots).
#
# Environment read by mp_qemu_setup:
#   VMTEST_MODE          tcg | det
#   VMTEST_ACCEL         tcg | kvm (tcg mode only; det is always TCG)
#   VMTEST_MEM           guest memory (default 1G)
#   VMTEST_SMP           vCPUs (default 2 in tcg mode, 1 in det mode)
#   VMTEST_ICOUNT_SHIFT  det mode's shift (default MP_DET_SHIFT below)
#   VMTEST_SEED          det mode: the guest clock starts that many seconds
#                        after 2026-01-01 00:00 UTC instead of at the host's
#                        time. The kernel seeds its random state from that
#                        clock, the only input a det boot takes from the
#                        host: one seed, one run, bit for bit (two boots of
#                        6.1 with seed 7, one of them beside two other VMs
#                        on 2 cores, wrote identical TAP)
#   VMTEST_APPEND        more kernel parameters, appended last

# the shift chosen by measurement (README-harness.md, "Deterministic mode")
MP_DET_SHIFT=2

MP_QEMU=qemu-system-x86_64

# mp_qemu_need: succeeds when qemu is installed, else prints why not (for
# the caller's message) and fails
mp_qemu_need() {
	command -v "$MP_QEMU" >/dev/null && return 0
	echo "$MP_QEMU missing (apt-get install qemu-system-x86)"
	return 1
}

# mp_qemu_kvm_key: what a cached KVM verdict holds for (the host's kernel
# and qemu's version)
mp_qemu_kvm_key() {
	echo "$(uname -r) $("$MP_QEMU" --version | head -n1)"
}

# mp_qemu_kvm_cached FILE: the verdict cached in FILE by run-vm.sh's probe
# (kvm or tcg), when /dev/kvm exists and FILE is for this kernel and qemu
mp_qemu_kvm_cached() {
	[ -e /dev/kvm ] && [ -f "$1" ] &&
		[ "$(sed -n 1p "$1")" = "$(mp_qemu_kvm_key)" ] || return 1
	sed -n 2p "$1"
}

# mp_qemu_setup: sets mp_qemu_mode, mp_qemu_desc, the array mp_qemu_args
# (every qemu argument but the kernel, initrd and serial ports) and
# mp_qemu_append (the base kernel command line)
mp_qemu_setup() {
	local accel=${VMTEST_ACCEL:-tcg} smp ishift rtc
	mp_qemu_mode=${VMTEST_MODE:-tcg}
	mp_qemu_args=(-nographic -nodefaults -no-user-config -no-reboot
		      -m "${VMTEST_MEM:-1G}")
	mp_qemu_append="console=ttyS0 reboot=t panic=-1 oops=panic"
	case $mp_qemu_mode in
	tcg)
		smp=${VMTEST_SMP:-2}
		if [ "$accel" = kvm ]; then
			mp_qemu_args+=(-enable-kvm -cpu host)
		else
			accel=tcg
			mp_qemu_args+=(-accel tcg)
		fi
		mp_qemu_args+=(-smp "$smp")
		mp_qemu_desc="$accel smp=$smp"
		;;
	det)
		smp=${VMTEST_SMP:-1}
		ishift=${VMTEST_ICOUNT_SHIFT:-$MP_DET_SHIFT}
		case $ishift in
		[0-9] | 10) ;;
		*) echo "qemu-cmd: VMTEST_ICOUNT_SHIFT='$ishift': 0..10" >&2
		   return 1 ;;
		esac
		case ${VMTEST_SEED-} in
		'' | [0-9] | [0-9][0-9] | [0-9][0-9][0-9] | [0-9][0-9][0-9][0-9]) ;;
		*) echo "qemu-cmd: VMTEST_SEED='$VMTEST_SEED': 0..9999" >&2
		   return 1 ;;
		esac
		rtc=clock=vm
		[ -z "${VMTEST_SEED-}" ] ||
			rtc=base=$(date -u -d @$((1767225600 + 10#$VMTEST_SEED)) \
				+%Y-%m-%dT%H:%M:%S),$rtc
		mp_qemu_args+=(-accel tcg -icount "shift=$ishift,sleep=off"
			       -rtc "$rtc"
			       -smp "$smp")
		mp_qemu_append+=" nokaslr norandmaps"
		mp_qemu_desc="det icount shift=$ishift smp=$smp${VMTEST_SEED:+ seed=$VMTEST_SEED}"
		;;
	*)
		echo "qemu-cmd: VMTEST_MODE='$mp_qemu_mode': tcg or det" >&2
		return 1
		;;
	esac
	[ -z "${VMTEST_APPEND:-}" ] || mp_qemu_append+=" $VMTEST_APPEND"
	return 0
}

# mp_qemu_run SECS IMAGE INITRD CONSOLE_LOG SERIAL2_LOG QEMU_OUT APPEND
#             [QEMU_ARGS...]
# One boot under timeout(1), in the background so that the caller's trap
# can kill it (mp_qemu_pid); returns qemu's (or timeout's) status.
mp_qemu_pid=
mp_qemu_run() {
	local secs=$1 image=$2 initrd=$3 console=$4 out=$5 qout=$6 append=$7
	local rc=0
	shift 7
	rm -f "$console" "$out"
	timeout -k 10 "$secs" "$MP_QEMU" "${mp_qemu_args[@]}" "$@" \
		-kernel "$image" -initrd "$initrd" \
		-serial "file:$console" -serial "file:$out" \
		-append "$mp_qemu_append $append" \
		</dev/null >"$qout" 2>&1 &
	mp_qemu_pid=$!
	wait "$mp_qemu_pid" || rc=$?
	mp_qemu_pid=
	return $rc
}

# kill the qemu of mp_qemu_run, if one runs (for EXIT traps)
mp_qemu_kill() {
	if [ -n "$mp_qemu_pid" ] && kill -0 "$mp_qemu_pid" 2>/dev/null; then
		kill "$mp_qemu_pid" 2>/dev/null || true
		sleep 1
		kill -9 "$mp_qemu_pid" 2>/dev/null || true
	fi
}
