#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# libmpctl-shrinker (lib/, mpctl_shrinker(3)) on the host: it builds
# alone, it takes mpctl register's emulated registration, it refuses bad
# ones, its request path allocates nothing, and the example program
# (examples/cooperate.c) frees chunks when the emulator asks.

load helpers
load shrinker

COOP=$ROOT/build/cooperate

setup() {
	export MPCTL=$MPCTL_BIN
	unset MPCTL_SHRINKER_FD MPCTL_SHRINKER_EFD MPCTL_SHRINKER_CHUNK \
		MPCTL_SHRINKER_ABI MPCTL_SHRINKER_BACKEND MPCTL_SHRINKER_AFD
	[ -x "$COOP" ] || skip "build/cooperate not built"
}

@test "shrinker-lib: the library and the example build from lib/ alone, and install" {
	local t=$BATS_TEST_TMPDIR
	cp "$ROOT/lib/mpctl-shrinker.c" "$ROOT/lib/mpctl-shrinker.h" \
		"$ROOT/examples/cooperate.c" "$t/"
	run -0 cc -std=gnu11 -Wall -Wextra -Werror -o "$t/coop" \
		"$t/cooperate.c" "$t/mpctl-shrinker.c"
	run -0 nm -u "$ROOT/build/libmpctl-shrinker.a"
	refute_output --regexp '(^| )mp_'
	run -0 make -C "$ROOT" --no-print-directory install DESTDIR="$t/root" \
		PREFIX=/usr
	[ -f "$t/root/usr/lib/libmpctl-shrinker.a" ]
	[ -f "$t/root/usr/include/mpctl-shrinker.h" ]
	[ -f "$t/root/usr/share/man/man3/mpctl_shrinker.3" ]
	run -0 make -C "$ROOT" --no-print-directory uninstall \
		DESTDIR="$t/root" PREFIX=/usr
	[ ! -e "$t/root/usr/lib/libmpctl-shrinker.a" ]
	[ ! -e "$t/root/usr/include/mpctl-shrinker.h" ]
}

@test "shrinker-lib: the example takes mpctl register's emulated registration" {
	requires root
	mpctl register --chunk 64K -- "$COOP" -n 4 -c 65536 -d 1
	[ "$status" -ne 69 ] || skip "no shrinker interface: $output"
	assert_success
	assert_line --regexp '^registered (emulated|kernel-v1|kernel-v2) chunk 65536 chunks 4$'
	assert_line 'held 4 freed 0 requests 0 lost 0'
}

@test "shrinker-lib: bad registrations are refused with a reason" {
	# no registration and no mempressure controller: the kernel's file
	run -1 --separate-stderr "$COOP" -g "$BATS_TEST_TMPDIR" -n 1
	assert_equal "$stderr" "cooperate: cannot open '$BATS_TEST_TMPDIR/mempressure.shrinker': No such file or directory"
	# an inherited chunk size that is not the program's
	run -1 --separate-stderr "$MPCTL_BIN" register --chunk 64K -- \
		"$COOP" -n 1 -c 8192 -d 1
	[[ "$stderr" == *"cooperate: the inherited shrinker's chunk size is not 8192"* ]] ||
		[[ "$stderr" == *"no shrinker interface"* ]] ||
		fail "stderr: $stderr"
	# malformed and mistyped variables, each named
	run -1 --separate-stderr env MPCTL_SHRINKER_FD=1 MPCTL_SHRINKER_EFD=x \
		MPCTL_SHRINKER_CHUNK=65536 MPCTL_SHRINKER_ABI=v1 "$COOP" -c 65536
	assert_equal "$stderr" "cooperate: invalid MPCTL_SHRINKER_EFD 'x'"
	run -1 --separate-stderr env MPCTL_SHRINKER_FD=1 MPCTL_SHRINKER_EFD=2 \
		MPCTL_SHRINKER_CHUNK=65536 MPCTL_SHRINKER_ABI=v3 "$COOP" -c 65536
	assert_equal "$stderr" "cooperate: invalid MPCTL_SHRINKER_ABI 'v3'"
	run -1 --separate-stderr env MPCTL_SHRINKER_FD=1 MPCTL_SHRINKER_EFD=2 \
		MPCTL_SHRINKER_CHUNK=0 MPCTL_SHRINKER_ABI=v1 "$COOP" -c 65536
	assert_equal "$stderr" "cooperate: invalid MPCTL_SHRINKER_CHUNK '0'"
	run -1 --separate-stderr env MPCTL_SHRINKER_FD=1 MPCTL_SHRINKER_EFD=2 \
		MPCTL_SHRINKER_CHUNK=65536 MPCTL_SHRINKER_ABI=v1 \
		MPCTL_SHRINKER_BACKEND=nope "$COOP" -c 65536
	assert_equal "$stderr" "cooperate: invalid MPCTL_SHRINKER_BACKEND 'nope'"
	# stderr is not an eventfd, stdin not the emulator's pipe
	run -1 --separate-stderr env MPCTL_SHRINKER_FD=0 MPCTL_SHRINKER_EFD=2 \
		MPCTL_SHRINKER_CHUNK=65536 MPCTL_SHRINKER_ABI=v1 "$COOP" -c 65536
	assert_equal "$stderr" "cooperate: invalid MPCTL_SHRINKER_EFD '2': not an eventfd"
	# the example's own usage errors
	run -64 "$COOP" -c 6000
	run -64 "$COOP" -n 0
	run -64 "$COOP" extra
}

@test "shrinker-lib: the request path allocates nothing, from 4 threads at once" {
	requires root
	mpctl register --chunk 64K -- "$ROOT/build/shrinker-noalloc"
	[ "$status" -ne 69 ] || skip "no shrinker interface: $output"
	assert_success
	assert_line 'allocations 0'
	assert_line 'failed 0'
	assert_line --regexp '^calls [1-9][0-9]{4,}$'
}

@test "shrinker-lib: under pressure in its cgroup the example frees the chunks asked for" {
	requires root memcg
	shrinker_cg lib-coop 64M
	# the filler runs until the example was asked once (-r 1)
	mpctl register --chunk 1M --cgroup "$SCG" --join -- sh -c "
		$(fill_loop_cmd) &
		'$COOP' -n 16 -r 1 -d 60; rc=\$?
		touch '$BATS_TEST_TMPDIR/stop'; wait; exit \$rc"
	assert_success
	assert_line --regexp '^registered (emulated|kernel-v1|kernel-v2) chunk 1048576 chunks 16$'
	assert_line --regexp '^asked [1-9][0-9]* freed [1-9][0-9]*$'
	# what it was asked for, up to what it held, is what it freed
	local asked freed
	asked=$(awk '/^asked/ { print $2 }' <<<"$output")
	freed=$(awk '/^asked/ { print $4 }' <<<"$output")
	[ "$freed" -eq "$((asked < 16 ? asked : 16))" ]
	assert_line "held $((16 - freed)) freed $freed requests 1 lost 0"
}

@test "shrinker-lib: an offered chunk whose page reclaim dropped is lost, and held once taken" {
	run -0 "$ROOT/build/shrinker-noalloc" offer
	assert_output "offered 0
lost 0
take 0
dropped: lost 1
dropped: take 1
taken: lost 0
unaligned -1"
}
