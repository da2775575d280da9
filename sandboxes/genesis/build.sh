#!/usr/bin/env bash
# Builds the orchestrator image genesis/genesis:latest that docker-compose.yml runs:
#   --from registry  scripts/docker/Dockerfile (FROM node:20-bookworm-slim)
#   --from debian    sandboxes/genesis/Dockerfile.debian (FROM genesis/node:20, no registry)
# Docker's layer cache makes a rebuild cheap: npm ci runs again only when the lockfile changes.
# Usage: build.sh --from debian|registry [--force]
set -euo pipefail
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$DIR/../.." && pwd)"
# shellcheck source=../lib.sh
. "$DIR/../lib.sh"
FROM=debian NO_CACHE=()
while [ $# -gt 0 ]; do
  case "$1" in
  --from) FROM="$2"; shift ;;
  --force) NO_CACHE=(--no-cache) ;;
  *) echo "genesis/build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
IMAGE="${GENESIS_IMAGE:-genesis/genesis:latest}"
BASE_ARG=()
if [ "$FROM" = registry ]; then
  dockerfile="$ROOT/scripts/docker/Dockerfile"
else
  dockerfile="$DIR/Dockerfile.debian"
  BASE_ARG=(--build-arg "BASE=${GENESIS_NODE_IMAGE:-genesis/node:20}")
fi
before="$(image_id "$IMAGE")"
started=$(date +%s)
log="$(mktemp "${TMPDIR:-/var/tmp}/genesis-orchestrator-image-XXXXXX.log")"
if ! docker build --quiet --network host "${NO_CACHE[@]}" "${BASE_ARG[@]}" -t "$IMAGE" -f "$dockerfile" "$ROOT" >"$log" 2>&1; then
  say image "$IMAGE: docker build failed; last lines of $log:"
  tail -n 20 "$log" >&2
  exit 1
fi
rm -f "$log"
if [ "$(image_id "$IMAGE")" = "$before" ]; then
  say image "$IMAGE up to date"
else
  say image "$IMAGE built from $(basename "$dockerfile") ($FROM) in $(($(date +%s) - started)) s"
fi
