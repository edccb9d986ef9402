#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The multi-call binary: dispatch, help, version, links, write errors.

load helpers

@test "mpctl: --help lists every command on stdout, exit 0" {
	for h in --help -h -? help; do
		mpctl $h
		assert_success
		for c in listen register add stress report; do
			assert_line --regexp "^  $c +"
		done
	done
	refute_output --partial example.org
}

@test "mpctl: help COMMAND is COMMAND --help; help of nothing known is 64" {
	for c in listen register add stress report; do
		mpctl help "$c"
		assert_success
		assert_line --index 0 --partial "Usage: mpctl $c"
	done
	mpctl help nope
	assert_failure 64
	assert_line --index 0 "mpctl: unknown command 'nope'"
	mpctl help __stress-engine
	assert_failure 64
}

@test "mpctl: no command is a usage error on stderr (64)" {
	run -64 --separate-stderr "$MPCTL_BIN"
	[ -z "$output" ]
	[[ "$stderr" == *"Usage: mpctl <command>"* ]]
}

@test "mpctl: a mistyped link names the command it does not know" {
	local d=$BATS_TEST_TMPDIR/bin
	mkdir "$d"
	ln -s "$MPCTL_BIN" "$d/mpctl-lsten"
	run "$d/mpctl-lsten" -t 1s
	assert_failure 64
	assert_line --index 0 "mpctl: unknown command 'lsten'"
	run "$d/mpctl-lsten"
	assert_failure 64
	assert_line --index 0 "mpctl: unknown command 'lsten'"
	# a renamed copy given a command is still mpctl
	run "$d/mpctl-lsten" listen --help
	assert_success
	run "$d/mpctl-lsten" --version
	assert_success
}

@test "mpctl: unknown commands and prefixes are refused (64)" {
	for c in lis listener LISTEN frob; do
		mpctl "$c"
		assert_failure 64
		assert_line --index 0 "mpctl: unknown command '$c'"
		assert_line --index 1 "Try 'mpctl --help' for more information."
	done
	mpctl --bogus
	assert_failure 64
	assert_line --index 0 "mpctl: unknown option '--bogus'"
}

@test "mpctl: --version, and every command's --version" {
	mpctl --version
	assert_success
	assert_line --index 0 --regexp '^mpctl [0-9]+\.[0-9]+\.[0-9]+$'
	assert_line --index 1 --regexp '^libraries: jansson [0-9.]+ \(built with [0-9.]+\), zlib [0-9.]+ '
	assert_line --index 2 --regexp '^built: '
	v=$output
	for c in listen register add stress report; do
		mpctl "$c" --version
		assert_success
		assert_output "$v"
	done
}

@test "mpctl: every command has --help and --usage on stdout" {
	for c in listen register add stress report; do
		mpctl "$c" --help
		assert_success
		assert_line --index 0 --partial "Usage: mpctl $c"
		mpctl "$c" --usage
		assert_success
		assert_output --partial "Usage: mpctl $c"
	done
}

@test "mpctl: mpctl-<command> links dispatch on argv[0]" {
	d=$BATS_TEST_TMPDIR/bin
	mkdir "$d"
	for c in listen register add stress report; do
		ln -s "$MPCTL_BIN" "$d/mpctl-$c"
		run "$d/mpctl-$c" --help
		assert_success
		assert_line --index 0 --partial "Usage: mpctl $c"
	done
	# any other mpctl-NAME is mpctl itself, as busybox falls back to argv[1]
	ln -s "$MPCTL_BIN" "$d/mpctl-copy"
	run "$d/mpctl-copy" listen --help
	assert_success
	assert_line --index 0 --partial "Usage: mpctl listen"
	run --separate-stderr "$d/mpctl-copy" nope
	assert_failure 64
	[ "${stderr_lines[0]}" = "mpctl: unknown command 'nope'" ]
	ln -s "$MPCTL_BIN" "$d/mpctl-__stress-engine"
	run "$d/mpctl-__stress-engine"
	assert_failure 64
	# a bare verb is not a link we make: under any other name it is mpctl
	ln -s "$MPCTL_BIN" "$d/listen"
	run "$d/listen" --help
	assert_success
	assert_line --index 0 "Usage: mpctl <command> [options]"
}

@test "mpctl: an option error names the command and exits 64" {
	mpctl listen --no-such-option
	assert_failure 64
	assert_line --index 0 --regexp "^mpctl listen: (unrecognized|unknown) option '--no-such-option'$"
}

@test "mpctl: a write error on stdout fails (1)" {
	[ -w /dev/full ] || skip "no /dev/full"
	run bash -c "'$MPCTL_BIN' --help > /dev/full"
	assert_failure 1
	assert_output --partial "mpctl: write error: No space left on device"
	run bash -c "'$MPCTL_BIN' listen --help > /dev/full"
	assert_failure 1
	assert_output --partial "write error"
}

@test "mpctl: make install honours DESTDIR and PREFIX" {
	d=$BATS_TEST_TMPDIR/dest
	run make -C "$ROOT" --no-print-directory install DESTDIR="$d" PREFIX=/opt/mp
	assert_success
	[ -x "$d/opt/mp/bin/mpctl" ]
	for c in listen register add stress report; do
		[ "$(readlink "$d/opt/mp/bin/mpctl-$c")" = mpctl ]
		[ -e "$d/opt/mp/share/bash-completion/completions/mpctl-$c" ]
	done
	[ -f "$d/opt/mp/share/man/man1/mpctl.1" ]
	[ -f "$d/opt/mp/share/man/man1/mpctl-listen.1" ]
	[ -f "$d/opt/mp/share/man/man7/mempressure.7" ]
	[ -f "$d/opt/mp/share/bash-completion/completions/mpctl" ]
	run "$d/opt/mp/bin/mpctl-listen" --version
	assert_success
}

@test "mpctl: make install puts no generic program on PATH, uninstall removes all" {
	d=$BATS_TEST_TMPDIR/dest2
	run make -C "$ROOT" --no-print-directory install DESTDIR="$d" PREFIX=/usr
	assert_success
	run ls "$d/usr/bin"
	assert_output "$(printf 'mpctl\nmpctl-add\nmpctl-info\nmpctl-listen\nmpctl-register\nmpctl-report\nmpctl-stress')"
	run make -C "$ROOT" --no-print-directory uninstall DESTDIR="$d" PREFIX=/usr
	assert_success
	run find "$d" -type f -o -type l
	assert_output ""
}

@test "mpctl: -Werror only with WERROR=1" {
	run make -C "$ROOT" --no-print-directory -n -B build/obj/common/mp_err.o
	refute_output --partial -- "-Werror"
	run make -C "$ROOT" --no-print-directory -n -B WERROR=1 build/obj/common/mp_err.o
	assert_output --partial -- "-Werror"
	# make check-host sets it for its build
	run make -C "$ROOT" --no-print-directory -n -B check-host
	assert_output --partial -- "-Werror"
}

@test "mpctl: make check-format names each file clang-format would change, make format fixes it" {
	requires prog:clang-format
	local t=$BATS_TEST_TMPDIR/fmt
	mkdir -p "$t"
	cp "$ROOT/.clang-format" "$t/"
	printf 'int good(void)\n{\n\treturn 0;\n}\n' >"$t/good.c"
	printf 'int bad(void) { return 0; }\n' >"$t/bad.c"
	cp "$t/bad.c" "$t/bad2.c"
	run make -C "$ROOT" --no-print-directory check-format \
		FORMAT_SRCS="$t/good.c $t/bad.c $t/bad2.c"
	assert_failure
	assert_line "$t/bad.c: not formatted"
	assert_line "$t/bad2.c: not formatted"
	refute_line --partial "good.c"
	assert_line --partial "check-format: 2 files differ from clang-format"
	assert_line --partial "run 'make format'"
	run make -C "$ROOT" --no-print-directory format FORMAT_SRCS="$t/bad.c"
	assert_success
	run make -C "$ROOT" --no-print-directory check-format \
		FORMAT_SRCS="$t/good.c $t/bad.c"
	assert_success
	assert_output ""
	# a missing binary is named, not taken for a misformatted tree
	run make -C "$ROOT" --no-print-directory check-format \
		CLANG_FORMAT=no-such-clang-format FORMAT_SRCS="$t/good.c"
	assert_failure
	assert_output --partial "no 'no-such-clang-format'"
}

@test "mpctl: builds with the packager's CFLAGS and CPPFLAGS on the command line (dpkg-buildflags)" {
	local b=$BATS_TEST_TMPDIR/b
	run make -C "$ROOT" --no-print-directory O="$b" CFLAGS="-O1 -g" \
		CPPFLAGS="-D_FORTIFY_SOURCE=2" "$b/mpctl"
	assert_success
	# CPPFLAGS reached the compiler: fortified calls are linked
	nm -D "$b/mpctl" | grep -q '_chk@'
	run "$b/mpctl" --version
	assert_success
}

@test "info: the machine as mpctl sees it, text and JSON from one document, nothing written" {
	requires jq
	local t=$BATS_TEST_TMPDIR/root
	cp -a "$ROOT/bats/fixtures/sysroot/v2-systemd" "$t"
	local before
	before=$(find "$t" -newer "$t" | wc -l; find "$t" -type d | wc -l)
	mpctl info --json --sysroot "$t"
	assert_success
	echo "$output" | jq -e '.cgroup_mode == "v2" and
		.commands.listen == "psi" and .commands.shrinker == "emulated" and
		(.backends[] | select(.name == "memcg") | .present == false) and
		.memory.limit_bytes == 536870912 and
		(.hierarchies[0].cgroup | endswith("session-2.scope"))'
	mpctl info --sysroot "$t"
	assert_success
	assert_line --regexp '^commands +listen=psi register=psi stress=psi shrinker=emulated$'
	assert_line --regexp '^memory +limit 512(\.0)? MiB'
	# a patched kernel: the kernel's shrinker is what register would use
	mpctl info --json --sysroot "$ROOT/bats/fixtures/sysroot/patched-v2"
	echo "$output" | jq -e '.commands.register == "mempressure" and .commands.shrinker == "kernel"'
	# no interface at all: reported, not a failure
	mpctl info --json --sysroot "$ROOT/bats/fixtures/sysroot/bare"
	assert_success
	echo "$output" | jq -e '.commands.listen == null and .commands.shrinker == "none"'
	[ "$before" = "$(find "$t" -newer "$t" | wc -l; find "$t" -type d | wc -l)" ]
	mpctl info extra
	assert_failure 64
}

@test "numbers: one grammar for every option; a bad value is one line naming the option, 64" {
	# hex, exponents, signs, blanks, inf/nan: refused by sizes, fractions,
	# counts and durations alike (--overcommit took 0x10 and 1e1)
	for v in 0x10 1e1 +1 ' 1' inf nan 1,5 ''; do
		for o in --overcommit --limit --threads --duration --target; do
			mpctl stress "$o" "$v"
			assert_failure 64
			assert_line --index 0 --partial "mpctl stress: invalid $o '$v': "
			assert_line --index 1 "Try 'mpctl stress --help' for more information."
			[ "${#lines[@]}" -eq 2 ]
		done
		mpctl report --alpha "$v"
		assert_failure 64
		assert_line --index 0 --partial "mpctl report: invalid --alpha '$v': "
		mpctl register --chunks "$v"
		assert_failure 64
		assert_line --index 0 --partial "mpctl register: invalid --chunks '$v': "
	done
	mpctl stress --hog ''
	assert_line --index 0 "mpctl stress: invalid --hog '': must not be empty"
	mpctl info --cgroup ''
	assert_failure 64
	assert_line --index 0 "mpctl info: invalid --cgroup '': must not be empty"
	mpctl stress --limit 101% -d 1s
	assert_failure 64
	assert_line --index 0 "mpctl stress: invalid --limit '101%': too large"
	mpctl register --chunk 10% -- true
	assert_failure 64
	assert_line --index 0 "mpctl register: invalid --chunk '10%': a percentage has no meaning here"
	mpctl stress --chunk 10% --cgroup / -d 1s
	assert_failure 64
	assert_line --index 0 --partial "invalid --chunk '10%': a percentage of --limit"
}

@test "numbers: systemd.time(7) durations; infinity where a run may have no end" {
	# taken: a later error proves the duration parsed
	for t in 1m30s '2h 30min' 1d 1w 1.5s 500ms 90 1y 2M; do
		mpctl stress --duration "$t" extra
		assert_failure 64
		assert_line --index 0 "mpctl stress: unexpected argument 'extra'"
	done
	mpctl listen --timeout infinity extra
	assert_failure 64
	assert_line --index 0 "mpctl listen: unexpected argument 'extra'"
	mpctl add 1 --timeout infinity
	assert_failure 64
	assert_line --index 0 "mpctl add: --timeout and --json go with --wait"
	mpctl register --chunk 1M --timeout infinity -- true
	assert_failure 64
	assert_line --index 0 --partial "are for the monitor"
	# a run, a miss cost and a report's runs must end
	for a in "stress --duration" "stress --miss-cost" "report --duration"; do
		mpctl $a infinity
		assert_failure 64
		assert_line --index 0 "mpctl ${a% *}: invalid ${a#* } 'infinity': must end (infinity has no meaning here)"
	done
	mpctl stress --duration 1m30
	assert_failure 64
	assert_line --index 0 --partial "not a duration"
}

@test "numbers: sizes as stress-ng and systemd write them, N% of the host's RAM and of the limit" {
	requires root memcg jq
	local total page
	total=$(( $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024 ))
	page=$(getconf PAGESIZE)
	# 1% of RAM, 1% of that a chunk, an overcommit of 150%
	mpctl stress --limit 1% --chunk 1% --overcommit 150% --threads 1 \
		--duration 1s --json
	assert_success
	jq -e --argjson t "$total" --argjson p "$page" '
		.parameters.limit_bytes == (($t / 100) | round) and
		.parameters.chunk_size_bytes ==
			((.parameters.limit_bytes / 100 / $p | floor) * $p) and
		.parameters.overcommit == 1.5' <<<"$output"
	for s in 1.5G 64KiB 2gb 1t 1P 512k; do
		mpctl stress --chunk "$s" --limit 1E extra
		assert_failure 64
		assert_line --index 0 "mpctl stress: unexpected argument 'extra'"
	done
}
