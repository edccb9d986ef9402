#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# export-series.sh - write a kernel git tree's series into kernel-patch/KVER
#
# usage: export-series.sh KVER GITDIR [BASE]
#
# For working on the series as commits: a git tree of linux-source-KVER
# (or the parts of it the series touches) with the series applied as
# commits on BASE (default: the root commit). The patches of
# kernel-patch/KVER but the cover letter are replaced by "git format-patch
# BASE..HEAD" and each one is checked with GITDIR's checkpatch.pl --strict.
set -euo pipefail

kver=${1:?usage: export-series.sh KVER GITDIR [BASE]}
git=${2:?usage: export-series.sh KVER GITDIR [BASE]}
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
dir=$(cd "$here/../$kver" && pwd)
base=${3:-$(git -C "$git" rev-list --max-parents=0 HEAD)}

find "$dir" -name '0*.patch' ! -name '0000-cover-letter.patch' -delete
git -C "$git" format-patch -q --no-signature --abbrev=9 --zero-commit \
	-o "$dir" "$base..HEAD"
rc=0
for p in "$dir"/0*.patch; do
	[ "${p##*/}" = 0000-cover-letter.patch ] && continue
	# outside any git work tree: checkpatch reads a patch file as a patch
	if [ -x "$git/scripts/checkpatch.pl" ] &&
	   ! (cd / && "$git/scripts/checkpatch.pl" --strict --no-tree -q "$p"); then
		rc=1
	fi
done
ls "$dir"
exit $rc
