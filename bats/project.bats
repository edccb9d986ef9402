#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# First contact with the tree, as a packager and a new user meet it: the
# licence, NEWS, one version everywhere, make run and make test without
# the VM's packages or apt.

load helpers

@test "project: COPYING is the GPL-2.0 the SPDX headers name" {
	[ -f "$ROOT/COPYING" ]
	if [ -f /usr/share/common-licenses/GPL-2 ]; then
		cmp "$ROOT/COPYING" /usr/share/common-licenses/GPL-2
	else
		grep -q "GNU GENERAL PUBLIC LICENSE" "$ROOT/COPYING"
		grep -q "Version 2, June 1991" "$ROOT/COPYING"
	fi
	# every C source says so
	run grep -L "SPDX-License-Identifier: GPL-2.0" \
		"$ROOT"/cmd/*.c "$ROOT"/common/*.[ch] "$ROOT"/stress/*.[ch]
	assert_output ""
}

@test "project: one version, from VERSION: --version, the man pages, NEWS" {
	local v m
	v=$(cat "$ROOT/VERSION")
	[[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]
	mpctl --version
	assert_line --index 0 "mpctl $v"
	for m in "$ROOT"/man/*.[17]; do
		grep -q "^\.TH .* \"mpctl $v\" " "$m" ||
			{ echo "$m: not mpctl $v" >&2; return 1; }
		# this is the release: nothing is "before" it
		! grep -qi "before\( mpctl\)\? $v was released" "$m" ||
			{ echo "$m: 'before $v was released'" >&2; return 1; }
	done
	# NEWS starts with this version
	grep -m1 '^mpctl [0-9]' "$ROOT/NEWS" | grep -q "^mpctl $v "
}

@test "project: make test runs the host suite and installs nothing" {
	run make -n -C "$ROOT" test
	assert_success
	assert_output --partial "scripts/check.sh --host-only"
	refute_output --partial "deps.sh"
	refute_output --partial "apt-get"
}

@test "project: make run installs only what the report needs: no qemu, no kernel source" {
	run make -n -C "$ROOT" run
	assert_success
	assert_output --partial "scripts/deps.sh --run"
	run "$ROOT/scripts/deps.sh" --run --list
	assert_success
	assert_line libjansson-dev
	assert_line stress-ng
	refute_line --regexp '^(qemu|linux-source|bats|clang-format|mandoc)'
	# the host tests' list has the test tools, still no VM
	run "$ROOT/scripts/deps.sh" --host --list
	assert_line bats
	refute_line --regexp '^(qemu|linux-source)'
	run "$ROOT/scripts/deps.sh" --list
	assert_line qemu-system-x86
}
