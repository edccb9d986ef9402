#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The kernels users run (make compare-stock, by hand): compare-stock.sh's
# checks before anything is built or downloaded, debian-source.sh's view of
# the point releases apt has, build-kernel.sh's other source, and the
# series' KCIDB patchset_hash. The comparisons themselves boot VMs for
# tens of minutes and are not run here.

load helpers

KS=$ROOT/kernel-patch/scripts

@test "compare-stock: a bad kernel spec or option is one line and 64, before anything is built" {
	local d=$BATS_TEST_TMPDIR/out
	for a in "5.4 6.12" "6.12=bad\$ 6.12" "6.12+patches 6.1"; do
		# shellcheck disable=SC2086
		run "$KS/compare-stock.sh" -o "$d" $a
		mp_trace "compare-stock.sh $a"
		[ "$status" -eq 64 ]
		assert_line --index 0 --regexp "^compare-stock: '[^']*': "
		[ ! -e "$d" ]
	done
	run "$KS/compare-stock.sh" -o "$d" 6.1 6.12 -d 3s
	[ "$status" -eq 64 ]
	assert_line --index 0 "compare-stock: '-d': compare-kernels.sh's options go after --"
	[ ! -e "$d" ]
}

@test "compare-stock -B: a stock kernel not built is one line and 2, nothing downloaded or booted" {
	local d=$BATS_TEST_TMPDIR/out
	run "$KS/compare-stock.sh" -B -o "$d" 6.12=6.12.113-1~deb12u1 6.12
	mp_trace "compare-stock.sh -B"
	[ "$status" -eq 2 ]
	assert_output --partial "build/linux-6.12-6.12.113-1~deb12u1-stock/bzImage-plain' missing"
	[ ! -e "$ROOT/build/debian-src" ] ||
		[ -z "$(ls "$ROOT/build/debian-src")" ]
}

@test "debian-source.sh: the point releases apt has, newest first; one it lacks is 64" {
	run "$KS/debian-source.sh" 6.12 6.12.0-nope
	[ "$status" -eq 64 ]
	assert_output --partial "not in apt's sources"
	run "$KS/debian-source.sh" 5.10 list
	[ "$status" -eq 64 ]
	run "$KS/debian-source.sh" 6.12 list
	[ "$status" -eq 0 ] || skip "apt knows no linux-source-6.12 (apt-get update)"
	[ "${#lines[@]}" -ge 1 ]
	[ "$(printf '%s\n' "${lines[@]}" | sort -rV)" = "$(printf '%s\n' "${lines[@]}")" ]
	# the installed one is the harness's tarball, without a download
	v=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null) ||
		skip "linux-source-6.12 not installed"
	run "$KS/debian-source.sh" 6.12 "$v"
	assert_success
	assert_output /usr/src/linux-source-6.12.tar.xz
}

@test "build-kernel.sh: KPATCH_SOURCE that is not there is one line, no tree made" {
	run env KPATCH_SOURCE=/nonexistent.tar.xz KPATCH_BUILD_NAME=$MP_RUN_ID \
		"$KS/build-kernel.sh" 6.12 0
	[ "$status" -eq 1 ]
	assert_output --partial "KPATCH_SOURCE '/nonexistent.tar.xz': no such file"
	[ ! -e "$ROOT/build/linux-$MP_RUN_ID" ]
}

@test "series-hash.sh: the schema's patchset_hash of a series without its cover letter; empty for none" {
	local d=$BATS_TEST_TMPDIR/series
	mkdir "$d"
	cp "$ROOT"/kernel-patch/6.1/0*.patch "$d"
	rm -f "$d/0000-cover-letter.patch"
	# the schema's own command, on the patches build-kernel.sh applies
	want=$(cd "$d" && sha256sum *.patch | cut -c-64 | sha256sum | cut -c-64)
	run "$KS/series-hash.sh" "$ROOT/kernel-patch/6.1"
	assert_success
	assert_output "$want"
	run "$KS/series-hash.sh" "$ROOT/kernel-patch/6.12"
	assert_success
	[ "$output" != "$want" ]
	[[ $output =~ ^[0-9a-f]{64}$ ]]
	mkdir "$d/empty"
	run "$KS/series-hash.sh" "$d/empty"
	assert_success
	assert_output ""
	run "$KS/series-hash.sh" "$d/nonexistent"
	[ "$status" -eq 1 ]
}
