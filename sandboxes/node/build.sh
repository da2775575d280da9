#!/usr/bin/env bash
# Builds the local sandbox image genesis/node:20 with no registry, in well under a second:
# `docker import` of a skeleton root filesystem (symlinks bin/sbin/lib/lib64 -> usr/..., a passwd
# with the uid-1000 user `genesis`, empty usr, tmp and work). The image carries the label
# genesis.bind-host-usr=1, which tells DockerSandbox to bind the host's /usr and /etc/alternatives
# read-only at run time, so the host's Node and tools run inside. The portable equivalent, for
# machines that reach a registry, is the Dockerfile next to this script.
#
# Usage: build.sh [--force]   (without --force an existing image is kept)
set -euo pipefail

IMAGE="${GENESIS_NODE_IMAGE:-genesis/node:20}"
force=0
[ "${1:-}" = --force ] && force=1

if [ "$force" -eq 0 ] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
  printf '%-9s %s\n' "image:" "$IMAGE already built"
  exit 0
fi

rootfs="$(mktemp -d)"
trap 'rm -rf "$rootfs"' EXIT
mkdir -p "$rootfs"/{usr,etc,tmp,work,proc,sys,dev}
chmod 1777 "$rootfs/tmp"
chmod 0777 "$rootfs/work"
ln -s usr/bin "$rootfs/bin"
ln -s usr/sbin "$rootfs/sbin"
ln -s usr/lib "$rootfs/lib"
ln -s usr/lib64 "$rootfs/lib64"
printf 'root:x:0:0:root:/root:/bin/sh\ngenesis:x:1000:1000:genesis:/tmp:/bin/sh\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\ngenesis:x:1000:\n' >"$rootfs/etc/group"

tar --numeric-owner --owner=0 --group=0 -C "$rootfs" -c . |
  docker import \
    --change 'LABEL genesis.bind-host-usr=1' \
    --change 'LABEL org.opencontainers.image.description="Genesis sandbox, skeleton rootfs"' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV HOME=/tmp' \
    --change 'USER 1000:1000' \
    --change 'WORKDIR /work' \
    --change 'CMD ["/bin/sh"]' \
    - "$IMAGE" >/dev/null
printf '%-9s %s\n' "image:" "$IMAGE built (skeleton rootfs, binds host /usr)"
