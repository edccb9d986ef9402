#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Issue 36's "files and environment" review, the items that are not about
# output files (bats/output.bats) or the service manager (systemd.bats):
# what report passes to stress, cgroups shared with others, a failed hog,
# a truncated config.gz.

load helpers

@test "report: a --stress-arg that would override report's own options is refused" {
	local a
	for a in --duration=5s --dur=5s -d5s -jd5s --limit=1G -L1G --json -j \
		--pretty -p --output=/tmp/x -o/tmp/x --cgroup=/ -c/ --parent=/ \
		--hog=--vm --quiet -q --help --version -V --usage; do
		mpctl report --stress-arg="$a" -s shrinker -d 1s -r 1
		assert_failure 64
		assert_line --index 0 --partial "--stress-arg '$a' would override report's own"
	done
	# what report does not set passes (and is checked by stress itself)
	mpctl report --stress-arg=--no-such-option -s shrinker -d 1s -r 1 --json
	refute_output --partial "would override"
}
