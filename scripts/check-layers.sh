#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# common/ is a stack: its include graph has no cycle, and nothing in it
# includes from cmd/ or stress/ (the layers above it). stress/ is one
# above it: no cycle in its own graph (a workload never reaches back into
# the run that starts it) and nothing from cmd/. lib/ (the vendorable
# shrinker client) is below it all: it includes its own header and
# libc's, nothing else.
#
#   scripts/check-layers.sh    exit 0, or 1 with what breaks the rule
#
# A module is a .c and its .h (mp_target.c and mp_target.h), and its _int.h
# if it has one (mp_pressure_int.h: the inside it shows the module above it
# in common/, never cmd/ or stress/); an edge is an
# #include "..." of another module's header, read from the sources (the
# cycle) and from the compiler's dependencies, gcc -MM (the layering).
set -euo pipefail

cd "$(dirname "$0")/.."
CC=${CC:-cc}
rc=0

# upward: what the compiler opens for each file, transitively
# upward FILE PATTERN: FILE includes nothing matching the directories
upward() {
	local deps
	deps=$($CC -MM -D_GNU_SOURCE -Ilib -Icommon -Icmd -Istress \
		$(pkg-config --cflags jansson 2>/dev/null) "$1" |
		tr ' \\' '\n\n' | grep -E "^($2)/" || true)
	if [ -n "$deps" ]; then
		echo "$1 includes from a higher layer: $deps" >&2
		rc=1
	fi
}
for f in common/*.c; do
	upward "$f" 'cmd|stress'
done
for f in stress/*.c; do
	upward "$f" cmd
done

# a module's _int.h (its inside) is for common/ alone
deps=$(grep -l '^#include "[^"]*_int\.h"' cmd/*.[ch] stress/*.[ch] 2>/dev/null || true)
if [ -n "$deps" ]; then
	echo "a module's inside (_int.h) included outside common/: $deps" >&2
	rc=1
fi

# lib/ stands alone: compiled with nothing but its own directory
for f in lib/*.c; do
	if ! deps=$($CC -MM -D_GNU_SOURCE "$f" 2>&1) ||
		deps=$(echo "$deps" | tr ' \\' '\n\n' | grep -E '^(cmd|common|stress)/'); then
		echo "$f does not stand alone: $deps" >&2
		rc=1
	fi
done

# cycles: module -> module edges, ordered by tsort (which names a loop)
# cycles DIR: DIR's include graph, among its own modules
cycles() {
	local edges out
	edges=$(for f in "$1"/*.[ch]; do
		from=$(basename "${f%.[ch]}")
		from=${from%_int}
		sed -n 's/^#include "\([^"]*\)\.h".*/\1/p' "$f" |
			while read -r to; do
				to=${to%_int}
				[ "$to" = "$from" ] || [ ! -e "$1/$to.h" ] ||
					echo "$to $from"
			done
	done)
	if ! out=$(echo "$edges" | tsort 2>&1 >/dev/null) || [ -n "$out" ]; then
		echo "$1/ include graph has a cycle:" >&2
		echo "$out" >&2
		rc=1
	fi
}
cycles common
cycles stress
exit $rc
