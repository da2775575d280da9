#!/usr/bin/env bash
# What running deploy/kubernetes on this machine takes, with no cluster (docs/guides/kubernetes.md,
# Checked here): kubectl (its kustomize renders the manifests offline), Debian's podman (plays
# them with `podman kube play`) with catatonit (the pause process of its pods), a containers.conf
# of our own, and the orchestrator and Redis images copied from Docker into podman. Idempotent:
# prints one line per part and does only what is missing. Run it after
# `bash sandboxes/build-images.sh --compose`, which builds the images in Docker.
#
# Prints, last, the line `CONTAINERS_CONF=<file>`: podman commands here must run with it, since
# root on the project's machines lacks CAP_SYS_RESOURCE and podman's default ulimits (NOFILE,
# NPROC) then fail every container with "error setting rlimit type 6: operation not permitted".
# Usage: setup-kubernetes.sh [--packages]   (--packages: only what rendering and validating the
# manifests needs, before any image is built; `npm test` runs it so)
# Environment: GENESIS_STATE_DIR (default /var/tmp/genesis) holds that file.
set -euo pipefail
PACKAGES_ONLY=0
[ "${1:-}" = --packages ] && PACKAGES_ONLY=1
STATE_DIR="${GENESIS_STATE_DIR:-/var/tmp/genesis}"
mkdir -p "$STATE_DIR"
say() { printf '%-9s %s\n' "$1:" "$2"; }
failed=0

if [ "$(id -u)" -eq 0 ]; then SUDO=(); elif sudo -n true 2>/dev/null; then SUDO=(sudo -n); else SUDO=(none); fi
missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v catatonit >/dev/null 2>&1 || [ -x /usr/libexec/podman/catatonit ] || missing+=(catatonit)
# kubectl comes from Kubernetes' (or Google Cloud's) apt repository where one is configured;
# Debian's own kubernetes-client is 1.20, whose kustomize cannot read these kustomizations.
command -v kubectl >/dev/null 2>&1 || missing+=(kubectl)
if [ "${#missing[@]}" -eq 0 ]; then
  say packages "podman, catatonit and kubectl present"
elif [ "${SUDO[0]:-}" = none ]; then
  say packages "missing ${missing[*]}; run: sudo apt-get install -y --no-install-recommends ${missing[*]}"
  failed=1
elif "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$STATE_DIR/apt-kubernetes.log" 2>&1 ||
  { "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >>"$STATE_DIR/apt-kubernetes.log" 2>&1 &&
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$STATE_DIR/apt-kubernetes.log" 2>&1; }; then
  say packages "installed ${missing[*]}"
else
  say packages "could not install ${missing[*]} (kubectl: https://kubernetes.io/docs/tasks/tools/); last lines of $STATE_DIR/apt-kubernetes.log:"
  tail -n 10 "$STATE_DIR/apt-kubernetes.log" >&2
  failed=1
fi

[ "$PACKAGES_ONLY" -eq 1 ] && exit "$failed"

CONF="$STATE_DIR/containers.conf"
printf '[containers]\n# root here lacks CAP_SYS_RESOURCE: no default NOFILE/NPROC limits to set\ndefault_ulimits = []\n' >"$CONF"
export CONTAINERS_CONF="$CONF"

# Images: podman keeps its own store; an image is copied only when Docker's differs from podman's.
if command -v podman >/dev/null 2>&1; then
  for image in "${GENESIS_IMAGE:-genesis/genesis:latest}" "${GENESIS_REDIS_IMAGE:-genesis/redis:7}"; do
    id="$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)"
    if [ -z "$id" ]; then
      say image "$image is not built in Docker; run: bash sandboxes/build-images.sh --compose"
      failed=1
      continue
    fi
    if [ "$(podman image inspect --format '{{.Id}}' "localhost/$image" 2>/dev/null || true)" = "${id#sha256:}" ]; then
      say image "localhost/$image up to date in podman"
      continue
    fi
    started=$(date +%s)
    if docker save "$image" | podman load -q >/dev/null; then
      say image "localhost/$image copied from Docker into podman in $(($(date +%s) - started)) s"
    else
      say image "could not copy $image into podman"
      failed=1
    fi
  done
fi
echo "CONTAINERS_CONF=$CONF"
exit "$failed"
