#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# compare-kernels.sh - run "mpctl report" in the test VM of two kernels and
#                      compare the two reports
#
# usage: compare-kernels.sh [OPTIONS] [BASE_KVER [NEW_KVER]]
#
#   BASE_KVER, NEW_KVER  6.1 and 6.12 by default; the same version twice
#                        boots that kernel twice (two runs of one kernel:
#                        --compare must not flag them)
#   -d T        each report run's duration (default 3s)
#   -r N        runs per scenario (default 3)
#   -t PCT      --threshold for --compare (default: per metric)
#   -s NAME     only this scenario (repeatable)
#   -o DIR      output directory (default build/compare)
#   -B          do not build: use the kernels and initramfs already built
#   -N DIR      build NEW_KVER with the series in DIR (KPATCH_SERIES_DIR of
#               the harness): e.g. the series plus a test-only patch that
#               delays or drops notifications, which --compare must catch
#   -R          the regression demo: NEW_KVER is built with its series plus
#               a test-only patch (written by this script) that drops three
#               shrinker requests out of four; --compare must exit 1.
#               "compare-kernels.sh -R 6.12 6.12" compares the kernel with
#               itself so broken. Afterwards the harness's tree of NEW_KVER
#               is rebuilt with its real series (only the files the test
#               patch touches are rebuilt)
#   -C          control: boot the base kernel a third time and compare the
#               pooled base with that run too; two runs of one kernel must
#               not be flagged (exit 3 if they are)
#
# For each kernel, the harness of kernel-patch/kernel.mk builds the kernel
# and its initramfs ("make kernel initramfs KVER=..."). This script then
# appends a small cpio archive to a copy of that initramfs: the tree's
# build/static/mpctl as /mpctl/bin/mpctl, and one bats file,
# /mpctl/bats/vm/zz-compare-kernels.bats, that mounts the v1 memory (and
# mempressure) hierarchies, runs "mpctl report --json" and writes the
# document base64-encoded as TAP comments ("# MPCTL-REPORT ..."). The VM is
# booted the way kernel-patch/scripts/run-vm.sh boots it (same qemu
# arguments, same /init, mpctl.filter selects that one test), and the
# report is cut out of the TAP.
#
# The base kernel boots twice; its two reports are pooled into
# DIR/report-<base>-pooled.json, the base of the comparison.
#
# Output: DIR/report-<kver>[-<n>].json for each boot, DIR/compare.txt and
# DIR/compare.json (DIR/control.txt and DIR/control.json with -C), and
# DIR/report-*.svg. Exit status: that of "mpctl report --compare" of base
# and new (0 no regression, 1 a regression), 2 when a VM or a report
# failed, 3 when -C's control run was flagged.
#
# Environment: VMTEST_TIMEOUT (seconds per boot, default 1200),
# VMTEST_MEM (default 1G), VMTEST_ACCEL (kvm|tcg; default: kvm when
# /dev/kvm exists and the harness's probe said so, else tcg).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)

duration=3s
repeat=3
threshold=
scen=()
out=$top/build/compare
build=1
new_series=
regress=0
control=0

msg() { printf 'compare-kernels: %s\n' "$*" >&2; }
die() { msg "$*"; exit 2; }
usage() { sed -n '4,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 64; }

while getopts d:r:t:s:o:BN:RCh opt; do
	case $opt in
	d) duration=$OPTARG ;;
	r) repeat=$OPTARG ;;
	t) threshold=$OPTARG ;;
	s) scen+=("-s" "$OPTARG") ;;
	o) out=$(realpath -m "$OPTARG") ;;
	B) build=0 ;;
	N) new_series=$(cd "$OPTARG" && pwd) ;;
	R) regress=1 ;;
	C) control=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
base=${1:-6.1}
new=${2:-6.12}
[ $# -le 2 ] || usage

mpctl=$top/build/mpctl
mkdir -p "$out"

# --- -R: the series of NEW_KVER and a test-only patch that loses requests ---
if [ "$regress" = 1 ]; then
	[ -z "$new_series" ] || die "-R and -N exclude each other"
	ls "$top/kernel-patch/$new"/0*.patch >/dev/null 2>&1 ||
		die "no series in kernel-patch/$new: -R breaks the kernel's shrinker"
	new_series=$out/series-$new-test
	rm -rf "$new_series"
	mkdir -p "$new_series"
	cp "$top/kernel-patch/$new"/0*.patch "$new_series/"
	cat >"$new_series/0999-test-only-drop-shrinker-requests.patch" <<'PATCH'
From: mpctl compare-kernels.sh <mpctl@example.org>
Subject: [TEST ONLY] mm: mempressure: drop three shrinker requests out of four

Never for a real kernel: the regression "compare-kernels.sh -R" builds so
that "mpctl report --compare" shows it catches a kernel that loses reclaim
requests. The chunks are taken off the shrinker's count as before, but
only one request in four reaches the program.
---
 mm/mempressure.c | 7 +++++++
 1 file changed, 7 insertions(+)

diff --git a/mm/mempressure.c b/mm/mempressure.c
--- a/mm/mempressure.c
+++ b/mm/mempressure.c
@@ -260,6 +260,13 @@ static void mpc_shrink(struct mempressure *mpc, u64 request)
 		if (!l->chunks)
 			l->carry = 0;
 
+		/* test only: drop three reclaim requests out of four */
+		{
+			static atomic_t drops = ATOMIC_INIT(0);
+
+			if (atomic_inc_return(&drops) % 4)
+				continue;
+		}
 		mpc_shrinker_deliver(l, nr);
 	}
 }
PATCH
	msg "-R: '$new_series' is the series of $new and a test-only patch"
	# leave the harness's tree as it was: the real series
	restore() {
		msg "-R: rebuilding $new with its own series"
		make -C "$top" --no-print-directory kernel KVER="$new" DEBUG=0 >&2 ||
			msg "-R: could not rebuild $new: make kernel KVER=$new"
	}
	trap restore EXIT
fi
command -v qemu-system-x86_64 >/dev/null ||
	die "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
command -v cpio >/dev/null || die "cpio missing"
command -v jq >/dev/null || die "jq missing"

# --- the host's mpctl, for --compare and the pictures ------------------------
if [ "$build" = 1 ]; then
	make -C "$top" --no-print-directory all static >&2 ||
		die "make all static failed"
fi
[ -x "$mpctl" ] || die "'$mpctl' missing: make"

# --- the overlay: one bats test that writes the report into the TAP ----------
overlay=$out/overlay
rm -rf "$overlay"
mkdir -p "$overlay/mpctl/bats/vm"
report_args="--json -d $duration -r $repeat ${scen[*]}"
cat >"$overlay/mpctl/bats/vm/zz-compare-kernels.bats" <<EOF
#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Added by kernel-patch/scripts/compare-kernels.sh, never part of the
# repository's suites: run mpctl report, write it into the TAP.

mount_v1() {
	grep -qw "^\$1" /proc/cgroups || return 0
	awk -v c="\$1" '\$0 ~ / - cgroup / { n = split(\$NF, o, ",")
		for (i = 1; i <= n; i++) if (o[i] == c) f = 1 }
		END { exit !f }' /proc/self/mountinfo && return 0
	mkdir -p "/sys/fs/cgroup/\$1"
	mount -t cgroup -o "\$1" none "/sys/fs/cgroup/\$1"
}

@test "mpctl-compare-kernels report" {
	[ -x /mpctl/bin/mpctl ] || { echo "no /mpctl/bin/mpctl" >&2; return 1; }
	mount_v1 memory
	mount_v1 mempressure
	rc=0
	/mpctl/bin/mpctl report $report_args -o /tmp/report.json \\
		2>/tmp/report.err || rc=\$?
	sed 's/^/# report: /' /tmp/report.err >&3
	[ -s /tmp/report.json ] || return 1
	echo "# MPCTL-REPORT-BEGIN rc=\$rc" >&3
	base64 -w 76 /tmp/report.json | sed 's/^/# MPCTL-REPORT /' >&3
	echo "# MPCTL-REPORT-END" >&3
}
EOF
# the tree's own static mpctl, whatever the harness's initramfs holds
if [ -x "$top/build/static/mpctl" ]; then
	mkdir -p "$overlay/mpctl/bin"
	cp "$top/build/static/mpctl" "$overlay/mpctl/bin/mpctl"
fi
(cd "$overlay" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 >"$out/overlay.cpio.gz"

# --- accel -------------------------------------------------------------------
accel=${VMTEST_ACCEL:-}
if [ -z "$accel" ]; then
	accel=tcg
	if [ -e /dev/kvm ] && [ -f "$top/build/kvm-verdict" ] &&
	   [ "$(sed -n 2p "$top/build/kvm-verdict")" = kvm ]; then
		accel=kvm
	fi
fi
if [ "$accel" = kvm ]; then
	accel_args=(-enable-kvm -cpu host)
else
	accel_args=(-accel tcg)
fi

# --- one boot: build, boot, cut the report out --------------------------------
# boot KVER TAG [SERIES_DIR]: writes $out/report-TAG.json
boot() {
	local kver=$1 tag=$2 series=${3:-} image initrd tapraw console rc=0
	if [ "$build" = 1 ]; then
		msg "$kver: make kernel initramfs${series:+ (series from $series)}"
		KPATCH_SERIES_DIR=$series make -C "$top" --no-print-directory \
			kernel initramfs KVER="$kver" DEBUG=0 >&2 ||
			die "$kver: the harness could not build the kernel or initramfs"
	fi
	image=$top/build/linux-$kver/bzImage-plain
	initrd=$top/build/vm-$kver/initramfs-plain.cpio.gz
	[ -f "$image" ] || die "'$image' missing: make kernel KVER=$kver"
	[ -f "$initrd" ] || die "'$initrd' missing: make initramfs KVER=$kver"
	# the kernel reads concatenated cpio archives; later files win
	cat "$initrd" "$out/overlay.cpio.gz" >"$out/initrd-$tag.cpio.gz"
	console=$out/console-$tag.log
	tapraw=$out/tap-$tag.raw
	msg "$kver: booting ($accel) for report-$tag.json, console in '$console'"
	timeout -k 10 "${VMTEST_TIMEOUT:-1200}" qemu-system-x86_64 \
		"${accel_args[@]}" -nographic -nodefaults -no-user-config \
		-no-reboot -m "${VMTEST_MEM:-1G}" -smp 2 \
		-kernel "$image" -initrd "$out/initrd-$tag.cpio.gz" \
		-serial "file:$console" -serial "file:$tapraw" \
		-append "console=ttyS0 reboot=t panic=-1 oops=panic mpctl.filter=mpctl-compare-kernels mpctl.timeout=${VMTEST_TIMEOUT:-1200}" \
		</dev/null >"$out/qemu-$tag.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || msg "$kver: qemu exited with status $rc"
	tr -d '\r' <"$tapraw" | sed -n 's/^# report: /  /p' >&2 || true
	tr -d '\r' <"$tapraw" |
		sed -n '/^# MPCTL-REPORT-BEGIN/,/^# MPCTL-REPORT-END/p' |
		sed -n 's/^# MPCTL-REPORT //p' | base64 -d >"$out/report-$tag.json" ||
		die "$kver: no report in '$tapraw' (console: '$console')"
	[ -s "$out/report-$tag.json" ] ||
		die "$kver: no report in '$tapraw' (console: '$console')"
	"$mpctl" report --input "$out/report-$tag.json" \
		--svg "$out/report-$tag.svg" >"$out/report-$tag.txt" ||
		die "$kver: '$out/report-$tag.json' is not a report"
	msg "$kver: $(sed -n 2p "$out/report-$tag.txt")"
}

# The base kernel boots twice and its two reports are pooled: the runs of
# both boots are the base's samples, so that the noise between boots (a
# TCG guest's speed changes with the host's load) is in the base's sample
# ranges, and --compare does not call it a change of the kernel.
if [ "$base" = "$new" ] && [ -z "$new_series" ]; then
	ntag=$new-3
else
	ntag=$new${new_series:+-test}
fi
boot "$base" "$base-1"
boot "$base" "$base-2"
btag=$base-pooled
jq -s '.[0] as $a | .[1] as $b | $a | .scenarios |= map(. as $s |
	.runs += ([$b.scenarios[] | select(.name == $s.name) | .runs[]]) |
	del(.metrics))' "$out/report-$base-1.json" "$out/report-$base-2.json" \
	>"$out/report-$btag.raw.json" || die "cannot pool the base reports"
"$mpctl" report --input "$out/report-$btag.raw.json" --json \
	-o "$out/report-$btag.json" || die "cannot summarize the pooled base"
cmp_args=()
[ -z "$threshold" ] || cmp_args=(--threshold "$threshold")
# compare_with TAG NAME: the pooled base against report-TAG.json, the table
# in $out/NAME.txt and the JSON in $out/NAME.json; --compare's status
compare_with() {
	local rc=0
	"$mpctl" report --compare "${cmp_args[@]}" "$out/report-$btag.json" \
		"$out/report-$1.json" >"$out/$2.txt" || rc=$?
	"$mpctl" report --compare --json "${cmp_args[@]}" \
		"$out/report-$btag.json" "$out/report-$1.json" >"$out/$2.json" ||
		true
	return $rc
}
crc=0
if [ "$control" = 1 ]; then
	boot "$base" "$base-control"
	compare_with "$base-control" control || crc=$?
	case $crc in
	0) msg "control: a third run of $base is not flagged" ;;
	1) msg "control: a third run of $base is FLAGGED (see '$out/control.txt')" ;;
	*) msg "control: --compare failed with status $crc"; exit 2 ;;
	esac
fi
boot "$new" "$ntag" "$new_series"

rc=0
compare_with "$ntag" compare || rc=$?
cat "$out/compare.txt"
case $rc in
0) msg "no regression from $btag to $ntag" ;;
1) msg "REGRESSION from $btag to $ntag (see '$out/compare.txt')" ;;
*) msg "--compare failed with status $rc"; exit 2 ;;
esac
[ "$crc" = 0 ] || exit 3
exit "$rc"
