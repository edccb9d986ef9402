# SPDX-License-Identifier: GPL-2.0
# mpctl: memory pressure events and user-space shrinkers.
#
#   make              build build/mpctl and its mpctl-<command> links
#   make run          install what the report needs (scripts/deps.sh --run:
#                     no qemu, no kernel source), build, run mpctl report
#   make test         the host tests, installing nothing (= check-host)
#   make check        install what the tests need, run the host tests, the
#                     VM suites on the patched 6.1 and 6.12, the comparison
#   make check-host   the host tests only
#   make check-vm     the VM suites and the comparison only
#   make install      PREFIX=/usr/local DESTDIR=; make uninstall (with
#                     libmpctl-shrinker.a, its header and man page)
#   WERROR=1          warnings are errors (make check sets it)
#   make deps         install the Debian packages the build and tests need
#                     (make deps-host: the host tests'; make deps-run: the
#                     report's)
#   make static       build/static/mpctl, for the VM's initramfs
#   make bench        run the benchmarks, write build/bench/*.json
#   make asan         build/asan/mpctl with ASan and UBSan (bats/sanitize.bats)
#   make format       clang-format mpctl's C in place; make check-format
#                     fails on a file it would change (part of make check)
#   make compare-kernels, make regression-demo, make compare-matrix,
#   make compare-v2pure (cgroup2 alone, stock for memcg),
#   make compare-scenarios (the kernel-shrinker ones, MGLRU on, off),
#   make compare-noise (the det mode's noise profile, by hand),
#   make compare-stock STOCK="6.1 6.12" (Debian's kernels without the
#                     series, or two point releases, by hand): see
#                     kernel-patch/README-harness.md

# one version for the binary, the man pages (bats/project.bats) and NEWS
VERSION := $(shell cat VERSION)
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
COMPDIR ?= $(PREFIX)/share/bash-completion/completions
DOCDIR ?= $(PREFIX)/share/doc/mpctl
# systemd looks in /usr/local/lib/systemd/system too
UNITDIR ?= $(PREFIX)/lib/systemd/system
DESTDIR ?=

CC ?= cc
# V=1 shows the commands
ifeq ($(V),1)
Q :=
quiet = @:
else
Q := @
quiet = @printf "  %-8s %s\n"
endif
PKG_CONFIG ?= pkg-config
O := build

COMMANDS := listen register add stress report info

JANSSON_CFLAGS := $(shell $(PKG_CONFIG) --cflags jansson 2>/dev/null)
JANSSON_LIBS := $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null || echo -ljansson)

# CFLAGS, CPPFLAGS, LDFLAGS and LDLIBS are the user's (dpkg-buildflags,
# "make CFLAGS=..." on the command line): what the build needs goes into
# MP_* beside them, so that neither replaces the other
CFLAGS ?= -O2 -g
# -Werror only where the compiler is known: CI (make check), WERROR=1;
# expanded when used, so that check's target-specific WERROR applies
WERROR_FLAGS = $(if $(filter 1,$(WERROR)),-Werror)
# no stack frame above 16 KB (an object that big wants an owner and a
# pointer: a cgroup, a target, an output file, a result are on the heap).
# Not under the sanitizers, whose red zones grow every frame
FRAME_FLAGS = $(if $(SANFLAGS),,-Wframe-larger-than=16384)
MP_CFLAGS = $(WERROR_FLAGS) $(FRAME_FLAGS) -std=gnu11 -Wall -Wextra -Wno-missing-field-initializers \
	  -Wshadow -Wformat=2 -Wno-format-truncation -D_GNU_SOURCE -DMPCTL_VERSION='"$(VERSION)"' \
	  -Ilib -Icommon -Icmd -Istress $(JANSSON_CFLAGS) $(SANFLAGS)
MP_LDFLAGS = $(SANFLAGS)
MP_LDLIBS = $(JANSSON_LIBS) -lz -lpthread -lm
ALL_CFLAGS = $(CPPFLAGS) $(MP_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(MP_LDFLAGS) $(LDFLAGS)
ALL_LDLIBS = $(LDLIBS) $(MP_LDLIBS)

# ASan + UBSan; any undefined behaviour is fatal (halt at the first report)
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
	      -fno-omit-frame-pointer

# stress/ holds the engine linked into mpctl and standalone programs with
# their own main() (listed in STANDALONE)
STANDALONE := stress/mempressure_test.c
# lib/ is the vendorable shrinker client (libc only), below common/
LIB_OBJS := $(O)/obj/lib/mpctl-shrinker.o
SHRLIB := $(O)/libmpctl-shrinker.a
SRCS := $(wildcard cmd/*.c common/*.c) \
	$(filter-out $(STANDALONE),$(wildcard stress/*.c))
OBJS := $(SRCS:%.c=$(O)/obj/%.o) $(LIB_OBJS)
COMMON_OBJS := $(filter $(O)/obj/common/%,$(OBJS)) $(LIB_OBJS)
PROGS := $(patsubst stress/%.c,$(O)/%,$(wildcard $(STANDALONE)))
# programs on the library alone: the example, the allocation check
EXAMPLES := $(O)/cooperate
STATIC_PROGS := $(patsubst $(O)/%,$(O)/static/%,$(PROGS) $(EXAMPLES))
MANPAGES := $(wildcard man/*.1 man/*.3 man/*.7)

all: $(O)/mpctl $(addprefix $(O)/mpctl-,$(COMMANDS)) $(PROGS) $(O)/notify-recv \
	$(O)/rank-check $(SHRLIB) $(EXAMPLES) $(O)/shrinker-noalloc

$(SHRLIB): $(LIB_OBJS)
	$(quiet) AR $@
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(EXAMPLES): $(O)/%: $(O)/obj/examples/%.o $(SHRLIB)
	$(quiet) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

# the library's request path under a counting malloc (bats/shrinker-lib.bats)
$(O)/shrinker-noalloc: $(O)/obj/bats/shrinker-noalloc.o $(SHRLIB)
	$(quiet) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

# -MMD -MP: each object's header dependencies, written by the compiler
# beside it (.d) and included below; touching a header rebuilds the
# objects that include it, and only those
$(O)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(quiet) CC $@
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# the version is compiled in
$(O)/obj/cmd/mpctl.o: VERSION

$(O)/mpctl: $(OBJS)
	$(quiet) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(OBJS) $(ALL_LDLIBS)

$(O)/mpctl-%: $(O)/mpctl
	$(Q)ln -sf mpctl $@

$(PROGS): $(O)/%: $(O)/obj/stress/%.o $(O)/obj/stress/engine.o $(COMMON_OBJS)
	$(quiet) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(ALL_LDLIBS)

# a static binary for the initramfs (glibc's libc.a, libjansson.a): the
# objects are compiled with the same flags either way (PIE code links into
# a static executable), so -static is a link-time choice and the static
# binaries link the objects of build/obj
static: $(O)/static/mpctl $(STATIC_PROGS)

$(O)/static/mpctl: $(OBJS)
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) -static $(ALL_LDFLAGS) -o $@ $(OBJS) $(ALL_LDLIBS)

$(filter-out $(O)/static/cooperate,$(STATIC_PROGS)): $(O)/static/%: $(O)/obj/stress/%.o $(O)/obj/stress/engine.o $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) -static $(ALL_LDFLAGS) -o $@ $^ $(ALL_LDLIBS)

$(O)/static/cooperate: $(O)/obj/examples/cooperate.o $(SHRLIB)
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) -static $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

install: all $(O)/mpctl-listen.service $(O)/mpctl-listen@.service
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(COMPDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)
	install -m 0644 $(SHRLIB) $(DESTDIR)$(LIBDIR)/
	install -m 0644 lib/mpctl-shrinker.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 0755 $(O)/mpctl $(DESTDIR)$(BINDIR)/mpctl
	for c in $(COMMANDS); do \
		ln -sf mpctl $(DESTDIR)$(BINDIR)/mpctl-$$c; \
	done
	for m in $(filter %.1,$(MANPAGES)); do \
		install -m 0644 $$m $(DESTDIR)$(MANDIR)/man1/; done
	for m in $(filter %.3,$(MANPAGES)); do \
		install -m 0644 $$m $(DESTDIR)$(MANDIR)/man3/; done
	for m in $(filter %.7,$(MANPAGES)); do \
		install -m 0644 $$m $(DESTDIR)$(MANDIR)/man7/; done
	install -m 0644 completion/mpctl.bash $(DESTDIR)$(COMPDIR)/mpctl
	for c in $(COMMANDS); do \
		ln -sf mpctl $(DESTDIR)$(COMPDIR)/mpctl-$$c; \
	done
	install -d $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(UNITDIR)
	install -m 0644 $(O)/mpctl-listen.service $(DESTDIR)$(DOCDIR)/examples/
	install -m 0644 $(O)/mpctl-listen@.service $(DESTDIR)$(UNITDIR)/

FORCE:

# the units name the installed mpctl: generated with this BINDIR
$(O)/mpctl-listen.service $(O)/mpctl-listen@.service: $(O)/%: contrib/%.in FORCE
	@mkdir -p $(dir $@)
	$(Q)sed 's|@BINDIR@|$(BINDIR)|g' $< >$@.tmp && mv $@.tmp $@

# mempressure_test is a test program of the build tree, not installed
# (older versions installed it: uninstall removes that too)
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/mpctl $(addprefix $(DESTDIR)$(BINDIR)/mpctl-,$(COMMANDS))
	rm -f $(DESTDIR)$(BINDIR)/mempressure_test
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(filter %.1,$(MANPAGES))))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(filter %.3,$(MANPAGES))))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man7/,$(notdir $(filter %.7,$(MANPAGES))))
	rm -f $(DESTDIR)$(LIBDIR)/$(notdir $(SHRLIB)) $(DESTDIR)$(INCLUDEDIR)/mpctl-shrinker.h
	rm -f $(DESTDIR)$(COMPDIR)/mpctl $(addprefix $(DESTDIR)$(COMPDIR)/mpctl-,$(COMMANDS))
	rm -f $(DESTDIR)$(DOCDIR)/examples/mpctl-listen.service
	rm -f $(DESTDIR)$(UNITDIR)/mpctl-listen@.service
	-rmdir $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR) 2>/dev/null

deps:
	scripts/deps.sh

deps-host:
	scripts/deps.sh --host

deps-run:
	scripts/deps.sh --run

# lint the man pages; warnings are errors
manlint:
	@for m in $(MANPAGES); do \
		mandoc -Tlint -W warning $$m || exit 1; \
	done

# mpctl's own C, for make format and make check-format: not the kernel
# patches (kernel-patch/*/), which follow the kernel tree they apply to.
# .clang-format says how; CLANG_FORMAT=clang-format-14 picks a binary
CLANG_FORMAT ?= clang-format
FORMAT_SRCS := $(wildcard lib/*.[ch] examples/*.c cmd/*.[ch] common/*.[ch] stress/*.[ch] \
	bats/*.[ch] bats/fuzz/*.[ch] bats/vm/*.[ch] bench/*.[ch] \
	kernel-patch/tests/*.[ch])

format:
	$(Q)$(CLANG_FORMAT) --style=file -i $(FORMAT_SRCS)

# one line per file that clang-format would change
check-format:
	@command -v $(CLANG_FORMAT) >/dev/null || \
		{ echo "check-format: no '$(CLANG_FORMAT)' (make deps-host installs clang-format)" >&2; exit 1; }
	@bad=0; for f in $(FORMAT_SRCS); do \
		$(CLANG_FORMAT) --style=file --dry-run -Werror $$f >/dev/null 2>&1 || \
			{ echo "$$f: not formatted" >&2; bad=$$((bad + 1)); }; \
	done; \
	[ $$bad = 0 ] || { echo "check-format: $$bad files differ from clang-format $$($(CLANG_FORMAT) --version | sed 's/^.*version //'); run 'make format'" >&2; exit 1; }

# the main job: the standard report on this machine
run: deps-run all
	$(O)/mpctl report --output $(O)/report.json --svg $(O)/report.svg

# boot the patched 6.1 and 6.12 kernels, run mpctl report in each, compare
# (deterministic mode, 3 boots of each; COMPARE_ARGS: more options)
compare-kernels: all static
	kernel-patch/scripts/compare-kernels.sh -j 2 -n 3 -g y $(COMPARE_ARGS) 6.1 6.12

# --compare against 6.12 built once with a test-only patch whose breakage
# is chosen at boot (drop 3 of 4 shrinker requests, drop 1 in 5, delay
# every notification and request by 2 ms, never ask early): each must be
# flagged, a control boot of the real 6.12 must not be; rebuilds 6.12
# twice. MGLRU on (-g y) and cgroup v2 (-V), as in make check
regression-demo: all static
	@rc=0; kernel-patch/scripts/compare-kernels.sh -j 2 -g y -V -D all -C \
		$(COMPARE_ARGS) -o $(O)/compare-regress 6.12 6.12 || rc=$$?; \
	case $$rc in \
	1) echo "regression-demo: every demo kernel is flagged, the control is not" ;; \
	4) echo "regression-demo: a demo kernel was NOT flagged" >&2; exit 1 ;; \
	3) echo "regression-demo: the control run was flagged" >&2; exit 1 ;; \
	*) echo "regression-demo: a VM or a report failed ($$rc)" >&2; exit 1 ;; \
	esac

# the long matrix, by hand (about 1 h on 2 cores after the builds): 5 boots
# of each kernel, 5 control boots, the demos against 5 boots of 6.12
# the same on the machines people run: cgroup2 alone, stock for memcg
compare-v2pure: all static
	kernel-patch/scripts/compare-kernels.sh -P -j 2 -n 3 $(COMPARE_ARGS) \
		-o $(O)/compare-v2pure 6.1 6.12

# the five kernel-shrinker scenarios, 6.1 against 6.12 with MGLRU on, then
# off (classic LRU), every one of them in both settings: the configurations
# in which the series differs (make check runs all five with MGLRU on and
# two of them, through compare-kernels.sh -L, with MGLRU off)
KSHRINKER_SCENARIOS := -s kernel-shrinker -s kernel-shrinker-max \
	-s kernel-shrinker-late -s kernel-shrinker-noswap \
	-s kernel-shrinker-stopped
compare-scenarios: all static
	kernel-patch/scripts/compare-kernels.sh -j 2 -n 3 -g y \
		$(KSHRINKER_SCENARIOS) $(COMPARE_ARGS) \
		-o $(O)/compare-scenarios-mglru 6.1 6.12; \
	rc=$$?; [ $$rc -le 1 ] || exit $$rc; \
	kernel-patch/scripts/compare-kernels.sh -j 2 -n 3 -g n -B \
		$(KSHRINKER_SCENARIOS) $(COMPARE_ARGS) \
		-o $(O)/compare-scenarios-classic 6.1 6.12

# the noise profile of the deterministic mode, kernel-patch/noise-det.json
# (compare-kernels.sh's default -Z): 10 boots of each kernel, seeds
# 1001-1003, 1101-1106 and 1201 (-e 1000: none of them a seed make check
# boots), with make check's settings (scripts/check.sh, keep the two in
# step); about 25 min on 2 cores after the builds
NOISE_ARGS := -M det -d 2s -r 3 -g y -V -L kernel-shrinker \
	-L kernel-shrinker-noswap
# by hand: the kernels users run, stock (no series) or a Debian point
# release, under the interfaces a stock kernel has (compare-stock.sh),
# e.g. STOCK="6.12=6.12.113-1~deb12u1 6.12" for an update of 6.12
STOCK ?= 6.1 6.12
compare-stock: all static
	kernel-patch/scripts/compare-stock.sh -o $(O)/compare-stock $(STOCK)

compare-noise: all static
	@for k in 6.1 6.12; do \
		kernel-patch/scripts/compare-kernels.sh -j 2 -e 1000 -b 3 \
			-c 6 -n 1 -Z none $(NOISE_ARGS) \
			-o $(O)/compare-noise-$$k $$k $$k; \
		rc=$$?; [ $$rc -le 1 ] || [ $$rc = 3 ] || exit $$rc; \
	done; \
	kernel-patch/scripts/noise-profile.sh -o kernel-patch/noise-det.json \
		$(O)/compare-noise-6.1 $(O)/compare-noise-6.12

compare-matrix: all static
	kernel-patch/scripts/compare-kernels.sh -j 2 -g y -b 5 -n 5 -c 5 \
		$(COMPARE_ARGS) -o $(O)/compare-matrix 6.1 6.12; \
	rc=$$?; [ $$rc -le 1 ] || exit $$rc; \
	kernel-patch/scripts/compare-kernels.sh -j 2 -g y -c 5 -D all \
		-U $(O)/compare-matrix/report-6.12-pooled.json $(COMPARE_ARGS) \
		-o $(O)/compare-matrix-regress 6.12 6.12; \
	rc=$$?; [ $$rc = 1 ] || { echo "compare-matrix: demos or controls failed ($$rc)" >&2; exit 1; }

# every test: the host suite, the VM suites, the cross-kernel comparison
# (MPCTL_VM=0: host only)
check check-host check-vm test: WERROR = 1

check: deps all
	scripts/check.sh

check-host: all
	scripts/check.sh --host-only

# the host tests without apt: a missing tool skips its tests
test: check-host

# the VM suites on the patched 6.1 and 6.12 kernels, and the comparison
check-vm: deps all
	scripts/check.sh --vm-only

# a sanitizer build beside the normal one; bats/sanitize.bats runs it
asan:
	$(Q)CFLAGS="-O1 -g" $(MAKE) --no-print-directory O=$(O)/asan \
		SANFLAGS="$(ASAN_FLAGS)" all $(O)/asan/fuzz-parse

# the value parsers on every line of stdin (bats/fuzz/parse.c)
$(O)/fuzz-parse: $(O)/obj/bats/fuzz/parse.o $(COMMON_OBJS)
	$(quiet) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(ALL_LDLIBS)

# mp_rank.c's selections against the plain definitions (bats/report.bats)
$(O)/rank-check: $(O)/obj/bats/rank-check.o $(COMMON_OBJS)
	$(quiet) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(ALL_LDLIBS)

# the service manager's end of sd_notify(3), for bats/systemd.bats
$(O)/notify-recv: $(O)/obj/bats/notify-recv.o
	$(quiet) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^

bench: all
	@for b in $(wildcard bench/*.sh); do $$b || exit 1; done

clean:
	rm -rf $(O)/obj $(O)/static $(O)/static-obj $(O)/mpctl $(O)/asan \
		$(addprefix $(O)/mpctl-,$(COMMANDS)) $(PROGS) $(O)/tap \
		$(O)/notify-recv $(O)/rank-check $(SHRLIB) $(EXAMPLES) \
		$(O)/shrinker-noalloc

-include kernel-patch/kernel.mk

# the header dependencies of the objects built so far (none on a fresh
# tree, where everything is built anyway)
-include $(OBJS:.o=.d) $(PROGS:$(O)/%=$(O)/obj/stress/%.d) \
	$(O)/obj/bats/fuzz/parse.d $(O)/obj/bats/notify-recv.d \
	$(O)/obj/bats/rank-check.d $(EXAMPLES:$(O)/%=$(O)/obj/examples/%.d) \
	$(O)/obj/bats/shrinker-noalloc.d

.PHONY: FORCE asan deps-host deps-run test format check-format compare-kernels regression-demo compare-matrix compare-noise compare-stock compare-scenarios compare-v2pure run all static install uninstall deps manlint check check-host check-vm bench clean
