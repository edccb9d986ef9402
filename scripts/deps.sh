#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages that building and testing mpctl need, when
# they are missing. Idempotent; needs root (or sudo) only to install.
#   scripts/deps.sh           everything (build, host tests, VM tests)
#   scripts/deps.sh --host    build and host tests only
set -euo pipefail

host=(build-essential pkg-config libjansson-dev zlib1g-dev bats bats-assert bats-support
      stress-ng jq mandoc util-linux librsvg2-bin procps clang-format python3-jsonschema)
vm=(qemu-system-x86 linux-source-6.12 linux-source-6.1 busybox-static
    bash-static flex bison bc libelf-dev libssl-dev cpio xz-utils gzip
    rsync kmod)

pkgs=("${host[@]}")
[ "${1:-}" = --host ] || pkgs+=("${vm[@]}")

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
