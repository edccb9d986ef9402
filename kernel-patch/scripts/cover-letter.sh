#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cover-letter.sh - write kernel-patch/KVER/0000-cover-letter.patch
#
# usage: cover-letter.sh KVER GITDIR
#
# The text is kernel-patch/cover-letter.txt with @KVER@ replaced; the
# subject line counts the patches of GITDIR (the series as commits on the
# root commit, see export-series.sh), the shortlog and diffstat are
# git's.
set -euo pipefail

kver=${1:?usage: cover-letter.sh KVER GITDIR}
git=${2:?usage: cover-letter.sh KVER GITDIR}
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
base=$(git -C "$git" rev-list --max-parents=0 HEAD)
n=$(git -C "$git" rev-list --count "$base..HEAD")

{
	echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
	echo "From: mpctl developers <mpctl@example.org>"
	echo "Date: $(date -R)"
	printf 'Subject: [PATCH 00/%02d] mm: add the mempressure cgroup controller (%s)\n\n' "$n" "$kver"
	sed "s/@KVER@/$kver/g" "$top/kernel-patch/cover-letter.txt"
	echo
	git -C "$git" shortlog "$base..HEAD"
	git -C "$git" diff --stat=78 "$base..HEAD"
} >"$top/kernel-patch/$kver/0000-cover-letter.patch"
