# SPDX-License-Identifier: GPL-2.0
# VM test harness, included by the top-level Makefile.
#
#   make kernel     KVER=6.12 DEBUG=0   patched kernel: build/linux-$(KVER)/bzImage-*
#   make initramfs  KVER=6.12 DEBUG=0   build/vm-$(KVER)/initramfs-*.cpio.gz
#   make vmtest     KVER=6.12 DEBUG=0   boot it under qemu, run bats/vm, print TAP
#   make vmtest-all           DEBUG=0   vmtest for every KERNEL_VERSIONS
#   make bench-kernel-shrinker KVER=6.12 BENCH_ARGS="-r 10 -g y -p full"
#                                       the kernel's shrinker alone, measured
#                                       in the VM (bench-kernel-shrinker.sh)
#   make kernel-configs KVER=6.12       compile the series' directories with
#                                       MEMCG=n, MEMCG_V1=n, LRU_GEN=n, SWAP=n
#                                       and for i386 (build-configs.sh; by hand)
#   make kernel-clean                   remove the kernel trees and VM images
#
# VMTEST_IMAGE=FILE (initramfs, vmtest): boot that prebuilt bzImage, build
# no kernel; VMTEST_MODE=det: the deterministic icount mode (qemu-cmd.sh).
#
# DEBUG=1 adds kernel-patch/config/debug.config (lockdep, KASAN, list and
# atomic-sleep checks).  See kernel-patch/README-harness.md.

KVER ?= 6.12
DEBUG ?= 0
KERNEL_VERSIONS ?= 6.1 6.12
KSCRIPTS := kernel-patch/scripts

kernel:
	$(KSCRIPTS)/build-kernel.sh $(KVER) $(DEBUG)

# VMTEST_IMAGE=path/to/bzImage boots a prebuilt kernel: no kernel build
# (run-vm.sh reads it from the environment)
KERNEL_DEP := $(if $(VMTEST_IMAGE),,kernel)
export VMTEST_IMAGE

# mpctl is optional in the VM: without a static build its tests skip
initramfs: $(KERNEL_DEP)
	@mkdir -p build; if grep -q '^static:' Makefile 2>/dev/null; then \
		$(MAKE) --no-print-directory static >build/static-make.log 2>&1 || \
		echo "warning: make static failed (build/static-make.log)," \
			"the initramfs goes without a fresh mpctl" >&2; \
	fi
	$(KSCRIPTS)/mk-initramfs.sh $(KVER) $(DEBUG)

vmtest: initramfs
	$(KSCRIPTS)/run-vm.sh $(KVER) $(DEBUG)

bench-kernel-shrinker: initramfs
	$(KSCRIPTS)/bench-kernel-shrinker.sh $(BENCH_ARGS) $(KVER) $(DEBUG)

vmtest-all:
	@rc=0; for v in $(KERNEL_VERSIONS); do \
		$(MAKE) --no-print-directory vmtest KVER=$$v DEBUG=$(DEBUG) || rc=1; \
	done; exit $$rc

kernel-configs: kernel
	$(KSCRIPTS)/build-configs.sh $(KVER)

kernel-clean:
	rm -rf $(foreach v,$(KERNEL_VERSIONS),build/linux-$(v) build/vm-$(v)) \
		build/kvm-verdict

.PHONY: kernel initramfs vmtest vmtest-all kernel-clean kernel-configs bench-kernel-shrinker
