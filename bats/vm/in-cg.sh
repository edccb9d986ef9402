#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# in-cg.sh CGDIR... -- CMD...: move into every CGDIR (one per hierarchy),
# then run CMD
set -euo pipefail
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	echo "$$" >"$1/cgroup.procs"
	shift
done
shift
exec "$@"
