#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Not part of the suite: a stock-kernel memcg problem the harness works
# around.  Run it with (any kernel, series or not):
#
#   VMTEST_BOOTS=repro make vmtest KVER=6.1
#
# kmem (slab objects, page tables) charged while the memory controller is on
# cgroup2 is not counted in memcg->kmem (that counter is v1 only); when the
# controller has moved to a v1 hierarchy by the time it is freed, the
# uncharge is counted and the counter underflows: "page_counter underflow"
# and a WARNING in page_counter_cancel() (6.1.192 and 6.12.118 both).  The
# in-VM suites therefore run the cgroup2 and v1 suites in separate boots
# (mpctl.boot=v2 and v1).  This test fails while the kernel has the problem.

load ../vm/helpers

@test "kmem charged on cgroup2 and freed after memory moved to v1 does not underflow" {
	requires vm root memory
	mp_v2_enable memory
	mkdir "$MP_V2/rep" /tmp/many
	# 20000 empty tmpfs files: dentries and inodes charged to rep, no pages
	"$BATS_TEST_DIRNAME/../vm/in-cg.sh" "$MP_V2/rep" -- sh -c 'cd /tmp/many && i=0
		while [ $i -lt 20000 ]; do : >f$i; i=$((i + 1)); done'
	rmdir "$MP_V2/rep"
	echo -memory >"$MP_V2/cgroup.subtree_control"
	mp_v1_mount memory memory
	rm -rf /tmp/many
	sleep 3
	mp_v1_umount memory
	run dmesg
	refute_output --partial 'page_counter underflow'
}
