# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The harness scripts' shared shell, sourced first by the scripts of
# scripts/ and kernel-patch/scripts/ (one place for what each of them
# used to define for itself; for scripts that are run, not sourced by
# another script that uses it):
#
#   top            the checkout's top directory
#   here           the directory of the script that sourced this file
#   prog           what messages start with: the script's name without
#                  .sh; a script may set it (run-vm: "run-vm 6.1/plain")
#   die_status     die's exit status, 1 unless the script sets another
#   msg TEXT...    "PROG: TEXT" on stderr
#   die TEXT...    msg, then exit $die_status
#   usage          the script's header comment, from its line 4 to the
#                  line before its "set -eu...", on stderr; exit 64
#   uint NAME VALUE  a decimal number of 0 or more, else "NAME 'VALUE':
#                  a number" and usage
# shellcheck disable=SC2034 # for the scripts that source this file
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
prog=$(basename "${BASH_SOURCE[1]}" .sh)
die_status=1

msg() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { msg "$*"; exit "$die_status"; }
usage() {
	sed -n '4,/^set -eu/p' "${BASH_SOURCE[-1]}" | sed '$d; s/^# \{0,1\}//' >&2
	exit 64
}
uint() { case $2 in '' | *[!0-9]*) msg "$1 '$2': a number"; usage ;; esac; }
