#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# series-hash.sh - the KCIDB patchset_hash of a patch series
#
# usage: series-hash.sh [DIR]
#
# Prints the hash KCIDB's schema defines for the patches applied to a
# checkout ("sha256sum *.patch | cut -c-64 | sha256sum | cut -c-64": the
# sha256 over the newline-terminated sha256 of each patch, in the order of
# application) for the series build-kernel.sh applies from DIR: its
# 0*.patch but the cover letter, in name order. No DIR, or one without a
# patch, is a stock kernel: an empty line, the schema's "no patches".
# For "mpctl report --kcidb-set patchset_hash=..." (mpctl-report(1)).
set -euo pipefail

dir=${1:-}
[ -z "$dir" ] || [ -d "$dir" ] || { echo "series-hash: '$dir': no such directory" >&2; exit 1; }
patches=()
if [ -n "$dir" ]; then
	for p in "$dir"/0*.patch; do
		[ -e "$p" ] || continue
		[ "${p##*/}" != 0000-cover-letter.patch ] || continue
		patches+=("$p")
	done
fi
if [ ${#patches[@]} = 0 ]; then
	echo
	exit 0
fi
sha256sum "${patches[@]}" | cut -c-64 | sha256sum | cut -c-64
