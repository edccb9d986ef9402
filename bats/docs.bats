#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Documentation: lint-clean man pages with the agreed sections, and --help,
# the man page and bash completion naming the same options (as bpftool's
# test does).

load helpers

COMMANDS="listen register add stress report info"

# long options a command's --help lists, without argp's own
help_opts() {
	"$MPCTL_BIN" "$1" --help | grep -oE -- '--[a-z][a-z0-9-]*' |
		grep -vxE -- '--(help|usage|version)' | sort -u
}

@test "docs: every man page is lint-clean" {
	command -v mandoc >/dev/null || skip "no mandoc"
	for m in "$ROOT"/man/*.[17]; do
		run mandoc -Tlint -W warning "$m"
		echo "$m: $output" >&2
		assert_success
		assert_output ""
	done
}

@test "docs: mpctl(1), a page per command and mempressure(7) exist" {
	[ -f "$ROOT/man/mpctl.1" ]
	[ -f "$ROOT/man/mempressure.7" ]
	for c in $COMMANDS; do
		[ -f "$ROOT/man/mpctl-$c.1" ] || fail "no man/mpctl-$c.1"
	done
}

@test "docs: man pages have the agreed sections" {
	for m in "$ROOT"/man/*.1; do
		for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES "SEE ALSO"; do
			grep -qx "\.SH \"*$s\"*" "$m" || fail "$m: no $s section"
		done
		# every exit status STYLE.md defines is documented
		for st in 0 1 64 69 77; do
			grep -qx "\.B $st" "$m" || fail "$m: exit status $st undocumented"
		done
	done
	for c in $COMMANDS; do
		if "$MPCTL_BIN" "$c" --help | grep -q -- '--json'; then
			grep -qx '\.SH "*JSON OUTPUT"*' "$ROOT/man/mpctl-$c.1" ||
				fail "mpctl-$c.1: --json without a JSON OUTPUT section"
		fi
	done
}

@test "docs: --help, man page and completion name the same options" {
	source "$ROOT/completion/mpctl.bash"
	for c in $COMMANDS; do
		page=$ROOT/man/mpctl-$c.1
		comp=_mpctl_opts_$c
		for o in $(help_opts "$c"); do
			grep -qF -- "\\-\\${o#-}" "$page" ||
				fail "mpctl $c: $o is in --help but not in $page"
			[[ " ${!comp} " == *" $o "* ]] ||
				fail "mpctl $c: $o is in --help but not in the completion"
		done
		for o in ${!comp}; do
			case $o in --help|--usage|--version) continue ;; esac
			help_opts "$c" | grep -qx -- "$o" ||
				fail "mpctl $c: $o is in the completion but not in --help"
		done
	done
}

@test "docs: the README's commands exist" {
	grep -q '^make check$' "$ROOT/README.md" || grep -q 'make check' "$ROOT/README.md"
	for c in $COMMANDS; do
		grep -q "mpctl $c" "$ROOT/README.md" || fail "README does not show mpctl $c"
	done
}

# complete WORD...: what the bash completion offers for the last word
complete_words() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_mpctl
	echo "${COMPREPLY[*]}"
}

@test "docs: -h and --usage work for mpctl and every command, status 0" {
	for c in "" $COMMANDS; do
		run "$MPCTL_BIN" $c -h
		assert_success
		assert_line --index 0 --partial "Usage: mpctl"
		run "$MPCTL_BIN" $c --usage
		assert_success
		assert_output --partial "Usage: mpctl"
	done
	# no placeholder address: no "Report bugs" line at all
	run "$MPCTL_BIN" stress --help
	refute_output --partial "Report bugs"
}

@test "docs: one option vocabulary: -o output, -n count, -t timeout, no -O or -J" {
	run "$MPCTL_BIN" stress --help
	assert_line --regexp '^ +-o, --output=FILE'
	assert_line --regexp '^ +-C, --chunk=SIZE'
	run "$MPCTL_BIN" register --help
	assert_line --regexp '^ +-n, --count=N'
	assert_line --regexp '^ +--join'
	run "$MPCTL_BIN" report --help
	assert_line --regexp '^ +-o, --output=FILE'
	assert_line --regexp '^ +-L, --limit=SIZE'
	assert_line --regexp '^ +--threshold=PCT'
	for c in listen register add; do
		"$MPCTL_BIN" $c --help | grep -qE '^ +-t, --timeout=TIME' ||
			fail "mpctl $c: no -t, --timeout"
	done
	run "$MPCTL_BIN" stress -O x
	[ "$status" -eq 64 ]
	run "$MPCTL_BIN" register -J --chunk 1M true
	[ "$status" -eq 64 ]
}

@test "docs: bash completion offers values, files, scenarios and cgroups" {
	source "$ROOT/completion/mpctl.bash"
	run complete_words mpctl listen --level =  ""
	assert_output "low medium critical oom"
	run complete_words mpctl listen --level ""
	assert_output "low medium critical oom"
	run complete_words mpctl report --scenario ""
	assert_output "$("$MPCTL_BIN" report --list | awk '{ print $1 }' | tr '\n' ' ' | sed 's/ $//')"
	cd "$BATS_TEST_TMPDIR"
	touch base.json new.json
	run complete_words mpctl stress -o ""
	assert_output --partial "base.json"
	run complete_words mpctl report --compare base.json n
	assert_output "new.json"
	run complete_words mpctl report --input b
	assert_output "base.json"
	run complete_words mpctl help st
	assert_output "stress"
	run complete_words mpctl h
	assert_output "help"
	# after register's --, the command line is bash-completion's to complete
	_command_offset() { COMPREPLY=("offset=$1"); }
	run complete_words mpctl register -C 1M -- sl
	assert_output "offset=5"
	if [ -n "$(memcg_root)$(v2_root)" ]; then
		run complete_words mpctl listen -c /
		assert_output --regexp '^/( |$)'
	fi
}

@test "docs: completion of --cgroup walks cgroupfs paths under the mounts, a directory at a time" {
	requires root memcg
	local cg root
	source "$ROOT/completion/mpctl.bash"
	cg=$(make_memcg comp)
	mkdir "$cg/inner"
	MP_CGROUPS=("$cg/inner" "$cg")
	root=${cg%/*}
	# the mount point from a prefix of it
	run complete_words mpctl stress -c "${root%/*}/"
	assert_output --partial "$root/"
	# its directories, with a slash and no space, one level at a time
	run complete_words mpctl listen --cgroup "$cg"
	assert_output "$cg/"
	run complete_words mpctl info -c "$cg/"
	assert_output "$cg/inner/"
	run complete_words mpctl stress --parent "$cg/in"
	assert_output "$cg/inner/"
	# hierarchy paths as before
	run complete_words mpctl stress -c "/${cg##*/}"
	assert_output --partial "/${cg##*/}/inner"
}
