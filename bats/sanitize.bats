#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The sanitizer run: build/asan/mpctl (make asan: ASan, UBSan, LSan, any
# report fatal) on a corpus of nasty inputs under bats/fixtures/fuzz/ and
# a few short live runs. Every run must end with a clean status and no
# sanitizer report. About a minute; part of make check-host.

load helpers

ASAN=$ROOT/build/asan
FUZZ=$ROOT/bats/fixtures/fuzz
export ASAN_OPTIONS=detect_leaks=1:exitcode=99:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=98

# values the command line tests give every option (the whole list goes
# through every parser in one process: fuzz-parse)
NASTY=("" " 1" "-1" "0" "0x10" "nan" "inf" "1e3" "1.5.M" "." "1k" "6000"
	"18446744073709551616" "99999999999999999999999999999999999999"
	"1.7976931348623157e308" "2147483648" "9223372036854775808" "8785h"
	"some" "some -1 1000000" "some 18446744073709551616 1000000"
	"%s%n" $'bad\xff' $'1\tM')

setup_file() {
	make -C "$ROOT" --no-print-directory asan >"$BATS_FILE_TMPDIR/make.log" 2>&1 ||
		{ cat "$BATS_FILE_TMPDIR/make.log" >&2; return 1; }
}

# san CMD...: run under bats' run, then fail on a sanitizer report or a
# status outside 0, 1, 64, 65 (--compare: nothing to compare), 69, 77
san() {
	run "$@"
	if [[ $output == *"Sanitizer"* || $output == *"runtime error"* ]] ||
	   ! [[ " 0 1 64 65 69 77 " == *" $status "* ]]; then
		echo "$* (status=$status)" >&2
		echo "$output" >&2
		return 1
	fi
}

@test "sanitize: every value parser on the corpus, in one process" {
	run "$ASAN/fuzz-parse" <"$FUZZ/values.txt"
	assert_success
	refute_output --partial "Sanitizer"
	refute_output --partial "runtime error"
	assert_line "[] size=- chunk=- duration=- long=- psi=- backend=- level=- mode=- base64=ok json=ok"
	assert_line "[4096] size=ok chunk=ok duration=ok long=- psi=- backend=- level=- mode=- base64=ok json=ok"
	assert_line "[6000] size=ok chunk=- duration=ok long=- psi=- backend=- level=- mode=- base64=ok json=ok"
	assert_line --partial "[18446744073709551616] size=- chunk=- duration=- long=-"
	assert_line --partial "[some 100ms 1s] size=- chunk=- duration=- long=- psi=ok"
	# base64: padding, a digit after it, stray bits, too long for 32 bytes
	assert_line --partial "[c29tZQ==] size=- chunk=- duration=- long=- psi=- backend=- level=- mode=- base64=ok"
	assert_line --partial "[c29tZQ=x] size=- chunk=- duration=- long=- psi=- backend=- level=- mode=- base64=-"
	assert_line --partial "[c29tZR==] size=- chunk=- duration=- long=- psi=- backend=- level=- mode=- base64=-"
	assert_line --partial "[c29tZSAyMDAwMDAgMjAwMDAwMCBzb21lIDIwMDAwMCAyMDAwMDAw] size=- chunk=- duration=- long=- psi=- backend=- level=- mode=- base64=-"
	[ "${#lines[@]}" -eq "$(grep -vc '^#' "$FUZZ/values.txt")" ]
}

@test "sanitize: report --input, --svg, --html and --compare on the corpus" {
	local f d=$BATS_TEST_TMPDIR
	for f in "$FUZZ"/report/*.json; do
		san "$ASAN/mpctl" report --input "$f" --svg "$d/r.svg" --html "$d/r.html"
		san "$ASAN/mpctl" report --input "$f" --json -o "$d/r.json"
		san "$ASAN/mpctl" report --compare "$FUZZ/report/00-minimal-valid.json" "$f"
		san "$ASAN/mpctl" report --compare --json "$f" "$FUZZ/report/00-minimal-valid.json"
	done
}

@test "sanitize: sizes, durations, counts and PSI triggers through the options" {
	local v
	for v in "${NASTY[@]}"; do
		san "$ASAN/mpctl" stress --chunk "$v" --no-such-option
		[ "$status" -eq 64 ]
		san "$ASAN/mpctl" stress --limit "$v" --overcommit "$v" --no-such-option
		san "$ASAN/mpctl" listen --timeout "$v" --no-such-option
		san "$ASAN/mpctl" listen --psi "$v" --level "$v" --no-such-option
		san "$ASAN/mpctl" report --threshold "$v" --repeat "$v" --no-such-option
		san "$ASAN/mpctl" register --chunk "$v" --count "$v" --no-such-option
		san "$ASAN/mpctl" add "$v"
		MPCTL_SHRINKER_FD=$v MPCTL_SHRINKER_CHUNK=4096 MPCTL_SHRINKER_ABI=v1 \
			san "$ASAN/mpctl" add 1
		MPCTL_SHRINKER_FD=1000 MPCTL_SHRINKER_CHUNK=$v MPCTL_SHRINKER_ABI=$v \
			san "$ASAN/mpctl" add --wait --timeout 1ms
	done
}

@test "sanitize: short live runs of every command" {
	requires root memcg
	local d=$BATS_TEST_TMPDIR cg
	cg=$(make_memcg asan 64M)
	san "$ASAN/mpctl" listen -b memcg -c "$cg" -t 300ms --json
	assert_success
	san "$ASAN/mpctl" register --chunk 1M -b memcg -c "$cg" -- \
		"$ASAN/mpctl" add 3
	assert_success
	san "$ASAN/mpctl" register --chunk 1M -b memcg -c "$cg" -t 300ms --json
	assert_success
	san "$ASAN/mpctl" stress --json --duration 1s --threads 2 --limit 64M \
		-o "$d/s.json"
	jq -e '.schema.name == "mpctl-stress"' "$d/s.json"
	san "$ASAN/mpctl" report --duration 1s --repeat 1 -s shrinker -o "$d/r.json"
	jq -e '.complete == true' "$d/r.json"
}

@test "sanitize: values read from the emulator's pipe are bounded" {
	requires root memcg
	local cg
	cg=$(make_memcg asan-pipe 64M)
	# shellcheck disable=SC2016
	san "$ASAN/mpctl" register --emulate --chunk 1M -b memcg -c "$cg" -v -- \
		bash -c 'for v in -9223372036854775808 9223372036854775807 \
			99999999999999999999 -99999999999999999999 -1 +1 x; do
			echo "$MPCTL_SHRINKER_EFD $v" >&"$MPCTL_SHRINKER_FD"
		done; sleep 0.3'
	assert_success
}

@test "sanitize: an overlong MPCTL_SYSROOT or --sysroot is a usage error" {
	local long
	long=/$(printf 'x%.0s' $(seq 4090))
	MPCTL_SYSROOT=$long san "$ASAN/mpctl" info
	[ "$status" -eq 64 ]
	assert_output "mpctl info: invalid MPCTL_SYSROOT: longer than 1024 bytes"
	local c
	for c in info listen register; do
		san "$ASAN/mpctl" "$c" --sysroot "$long"
		[ "$status" -eq 64 ]
		assert_line --index 0 "mpctl $c: invalid --sysroot: longer than 1024 bytes"
	done
}
