#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages that building and testing mpctl need, when
# they are missing. Idempotent; needs root (or sudo) only to install.
#   scripts/deps.sh           everything (build, host tests, VM tests)
#   scripts/deps.sh --host    build and host tests only
#   scripts/deps.sh --run     build and mpctl report on this host (make run):
#                             no test tools, no qemu, no kernel source
#   --list                    print the packages, one a line; install nothing
set -euo pipefail

# building mpctl, and the report's hog scenario
run=(build-essential pkg-config libjansson-dev zlib1g-dev stress-ng)
# the host tests
host=(bats bats-assert bats-support jq mandoc util-linux librsvg2-bin procps
      clang-format python3-jsonschema
      # the metrics' checkers: promtool and an OpenMetrics parser
      prometheus python3-prometheus-client)
# the VM tests: the patched kernels and their initramfs
vm=(qemu-system-x86 linux-source-6.12 linux-source-6.1 busybox-static
    bash-static flex bison bc libelf-dev libssl-dev cpio xz-utils gzip
    rsync kmod)

level=all list=0
for a; do
	case $a in
	--host) level=host ;;
	--run) level=run ;;
	--list) list=1 ;;
	*) echo "usage: $0 [--run | --host] [--list]" >&2; exit 64 ;;
	esac
done
pkgs=("${run[@]}")
[ $level = run ] || pkgs+=("${host[@]}")
[ $level != all ] || pkgs+=("${vm[@]}")
if [ $list = 1 ]; then
	printf '%s\n' "${pkgs[@]}"
	exit 0
fi

missing=()
for p in "${pkgs[@]}"; do
	s=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$s" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}" >&2
sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
	"${sudo[@]}" apt-get update
	"${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
