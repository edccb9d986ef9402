#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mk-demo-patch.sh - a series plus a TEST-ONLY patch that can break the
#                    mempressure controller on purpose, for the demos of
#                    compare-kernels.sh -D
#
# usage: mk-demo-patch.sh SERIES_DIR OUT_DIR
#
# Copies SERIES_DIR/0*.patch (but the cover letter) to OUT_DIR and adds
# 0999-test-only-mempressure-demos.patch. That patch never goes to a real
# kernel: it adds the boot parameter mempressure.test_demo=N (0, the
# default, changes nothing) and
#   1  drops three shrinker requests out of four
#   2  drops one shrinker request in five
#   3  busy-waits 2 ms (mdelay) before every level notification and
#      every shrinker request
#   4  never asks shrinkers early: __mempressure_charge() (the charge
#      path near the limits) and mempressure_ask_high() (over
#      memory.high) do nothing, so only reclaim asks, as before the
#      "ask userspace shrinkers first" patch; a kernel where that
#      patch regressed must be flagged by the MGLRU + zram comparison
#
# (Demos 5 and 6 broke the kernel's wait for an answer; the series no
# longer waits for a program anywhere, so there is nothing left for them
# to break.)
#
# It is generated, not kept as a diff with line numbers, so that it keeps
# applying while the series changes: mm/mempressure.c as the series leaves
# it is rebuilt from the series' own hunks (applied to an empty tree), then
#     static void mpc_shrinker_deliver(struct mpc_listener *l, u64 nr)
# (the single delivery point of a shrinker request) is renamed ..._real and
# a function of that signature that drops or waits and then calls it is put
# in front of it, and a declaration that waits becomes the first line of
#     static void mpc_notify_levels(...)
# (every level notification), both found by their names; the parameter goes
# after the last #include. The patch is the diff of the two files. If a
# function is missing, has another signature, or its body does not open on
# a line of its own (kernel style), it fails and says which.
set -euo pipefail

series=${1:?usage: mk-demo-patch.sh SERIES_DIR OUT_DIR}
outdir=${2:?usage: mk-demo-patch.sh SERIES_DIR OUT_DIR}
file=mm/mempressure.c

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

patches=()
for p in "$series"/0*.patch; do
	[ -e "$p" ] || die "no patches in '$series'"
	case ${p##*/} in 0000-*) continue ;; esac
	patches+=("$p")
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tree"

# the hunks of one file out of a git format-patch file: from its
# "diff --git a/FILE b/FILE" line to the next "diff --git" or the "-- "
# signature line
for p in "${patches[@]}"; do
	awk -v f="$file" '
		/^diff --git / { on = ($3 == "a/" f && $4 == "b/" f) }
		/^-- $/ { on = 0 }
		on { print }' "$p" >"$work/part.diff"
	[ -s "$work/part.diff" ] || continue
	patch -s -p1 -d "$work/tree" <"$work/part.diff" ||
		die "the hunks of '$file' in '${p##*/}' do not apply on their own"
done
[ -f "$work/tree/$file" ] || die "the series does not create '$file'"
mkdir -p "$work/a/${file%/*}" "$work/b/${file%/*}"
cp "$work/tree/$file" "$work/a/$file"

# Two insertions, both valid C90 wherever the bodies start (the kernel
# warns about a statement before a declaration):
#  - mpc_notify_levels: a declaration that waits, as the body's first line
#  - mpc_shrinker_deliver: renamed mpc_shrinker_deliver_real, and a new
#    mpc_shrinker_deliver with the same signature in front of it that drops
#    or waits, then calls it
awk -v sig='static void mpc_shrinker_deliver(struct mpc_listener *l, u64 nr)' \
	-v csig='void __mempressure_charge(struct mem_cgroup *memcg)' \
	-v asig='void mempressure_ask_high(struct mem_cgroup *memcg)' '
	function fail(m) { print "mk-demo-patch: " m > "/dev/stderr"; bad = 1; exit 1 }
	{ lines[NR] = $0 }
	/^#include / { last_inc = NR }
	/^static void mpc_notify_levels\(/ && $0 !~ /;[[:space:]]*$/ { want = NR; next }
	want && /^\{$/ { insert[NR] = "\tbool mpc_demo_waited __maybe_unused = mpc_test_demo_delay();"; notify = 1; want = 0 }
	want && /;$/ { want = 0 }
	$0 == sig { deliver = NR }
	$0 == csig { charge = NR }
	$0 == asig { askhigh = NR }
	/^static void mpc_shrinker_deliver\(/ && $0 != sig && $0 !~ /;[[:space:]]*$/ {
		fail("mpc_shrinker_deliver has another signature than \"" sig "\": " $0)
	}
	END {
		if (bad) exit 1
		if (!notify)
			fail("no body of \"static void mpc_notify_levels(\" in mm/mempressure.c")
		if (!deliver)
			fail("no \"" sig "\" in mm/mempressure.c")
		if (!last_inc)
			fail("no #include in mm/mempressure.c")
		if (!charge)
			fail("no \"" csig "\" in mm/mempressure.c")
		if (!askhigh)
			fail("no \"" asig "\" in mm/mempressure.c")
		for (i = 1; i <= NR; i++) {
			if (i == charge) {
				print "static void __mempressure_charge_real(struct mem_cgroup *memcg);"
				print ""
				print csig
				print "{"
				print "\tif (mpc_test_demo == 4)"
				print "\t\treturn;"
				print "\t__mempressure_charge_real(memcg);"
				print "}"
				print ""
				print "static void __mempressure_charge_real(struct mem_cgroup *memcg)"
				continue
			}
			if (i == askhigh) {
				print "static void mempressure_ask_high_real(struct mem_cgroup *memcg);"
				print ""
				print asig
				print "{"
				print "\tif (mpc_test_demo == 4)"
				print "\t\treturn;"
				print "\tmempressure_ask_high_real(memcg);"
				print "}"
				print ""
				print "static void mempressure_ask_high_real(struct mem_cgroup *memcg)"
				continue
			}
			if (i == deliver) {
				print "static void mpc_shrinker_deliver_real(struct mpc_listener *l, u64 nr);"
				print ""
				print sig
				print "{"
				print "\tif (mpc_test_demo_drop())"
				print "\t\treturn;"
				print "\tmpc_test_demo_delay();"
				print "\tmpc_shrinker_deliver_real(l, nr);"
				print "}"
				print ""
				print "static void mpc_shrinker_deliver_real(struct mpc_listener *l, u64 nr)"
				continue
			}
			print lines[i]
			if (i in insert)
				print insert[i]
			if (i == last_inc) {
				print "#include <linux/delay.h>"
				print "#include <linux/moduleparam.h>"
				print ""
				print "/*"
				print " * TEST ONLY, never in a real kernel: break the controller on"
				print " * purpose for compare-kernels.sh -D. mempressure.test_demo="
				print " * 1 drops 3 shrinker requests of 4, 2 drops 1 in 5, 3 waits"
				print " * 2 ms before every notification and request, 4 never asks"
				print " * shrinkers early (charge path, over memory.high): only reclaim"
				print " * asks, as before the ask-first patch."
				print " */"
				print "static int mpc_test_demo;"
				print "module_param_named(test_demo, mpc_test_demo, int, 0444);"
				print ""
				print "static bool mpc_test_demo_drop(void)"
				print "{"
				print "\tstatic atomic_t n = ATOMIC_INIT(0);"
				print ""
				print "\tif (mpc_test_demo == 1)"
				print "\t\treturn atomic_inc_return(&n) % 4 != 0;"
				print "\tif (mpc_test_demo == 2)"
				print "\t\treturn atomic_inc_return(&n) % 5 == 0;"
				print "\treturn false;"
				print "}"
				print ""
				print "/* busy-waits: callers may hold spinlocks or be in reclaim */"
				print "static bool mpc_test_demo_delay(void)"
				print "{"
				print "\tif (mpc_test_demo == 3)"
				print "\t\tmdelay(2);"
				print "\treturn true;"
				print "}"
			}
		}
	}' "$work/a/$file" >"$work/b/$file" || exit 1

mkdir -p "$outdir"
rm -f "$outdir"/0*.patch
cp "${patches[@]}" "$outdir/"
{
	cat <<'EOF'
From: mpctl compare-kernels.sh <mpctl@example.org>
Subject: [TEST ONLY] mm: mempressure: demo breakages for compare-kernels.sh

Never for a real kernel: generated by kernel-patch/scripts/mk-demo-patch.sh
for "compare-kernels.sh -D", to show that "mpctl report --compare" catches
a kernel that loses or delays reclaim requests and notifications. The boot
parameter mempressure.test_demo= selects the breakage; 0 changes nothing.
---
EOF
	echo "diff --git a/$file b/$file"
	(cd "$work" && diff -u --label "a/$file" --label "b/$file" \
		"a/$file" "b/$file") || [ $? = 1 ]
} >"$outdir/0999-test-only-mempressure-demos.patch"
printf 'mk-demo-patch: wrote %s\n' "$outdir/0999-test-only-mempressure-demos.patch" >&2
