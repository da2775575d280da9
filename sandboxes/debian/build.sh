#!/usr/bin/env bash
# Builds the base image genesis/debian:bookworm from Debian's packages, with no registry:
# debootstrap a minimal Debian 12 root filesystem from the apt mirror this machine already uses,
# then `docker import` it. About 25 s and 200 MB, once per machine (skipped when up to date).
# The offline images (node, redis, genesis) are built on it with `docker build --network host`.
#
# Usage: build.sh [--force]      Environment: GENESIS_DEBIAN_MIRROR overrides the mirror.
set -euo pipefail
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib.sh
. "$DIR/../lib.sh"
FORCE=0
[ "${1:-}" = --force ] && FORCE=1

IMAGE="${GENESIS_DEBIAN_IMAGE:-genesis/debian:bookworm}"
SUITE=bookworm

# The first Debian mirror apt is configured with (deb822 or one-line format).
apt_mirror() {
  local uri
  uri="$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -n 1 || true)"
  [ -n "$uri" ] || uri="$(grep -hs '^deb ' /etc/apt/sources.list | awk '{print $2}' | grep -v security | head -n 1 || true)"
  printf '%s\n' "${uri:-http://deb.debian.org/debian}"
}
MIRROR="${GENESIS_DEBIAN_MIRROR:-$(apt_mirror)}"
KEY="$(build_key "$DIR/build.sh" "$SUITE" "$MIRROR")"

if up_to_date "$IMAGE" "$KEY"; then
  say image "$IMAGE up to date"
  exit 0
fi
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
if ! command -v debootstrap >/dev/null 2>&1; then
  say image "$IMAGE needs debootstrap; run: sudo apt-get install -y debootstrap (or bash scripts/setup-services.sh)"
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  say image "$IMAGE: debootstrap needs root; run: sudo bash $DIR/build.sh"
  exit 1
fi

started=$(date +%s)
rootfs="$(mktemp -d "${TMPDIR:-/var/tmp}/genesis-debootstrap-XXXXXX")"
trap 'rm -rf "$rootfs"' EXIT
log="$rootfs.log"
if ! debootstrap --variant=minbase "$SUITE" "$rootfs" "$MIRROR" >"$log" 2>&1; then
  say image "$IMAGE: debootstrap failed; last lines of $log:"
  tail -n 20 "$log" >&2
  exit 1
fi
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
tar --numeric-owner -C "$rootfs" -c . |
  docker import \
    --change "LABEL $BUILD_KEY_LABEL=$KEY" \
    --change 'LABEL org.opencontainers.image.description="Debian bookworm minbase, debootstrapped by Genesis"' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' \
    - "$IMAGE" >/dev/null
rm -f "$log"
say image "$IMAGE built from $MIRROR with debootstrap in $(($(date +%s) - started)) s"
