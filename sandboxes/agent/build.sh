#!/usr/bin/env bash
# Builds the agent image genesis/agent:latest (sandboxes/agent/Dockerfile): the gate image
# genesis/node:20 with the agent CLIs of clis.txt installed globally from the npm registry
# (`docker build --network host`; the base image's CA certificates let npm reach it here).
# Skipped when up to date (same build key: the Dockerfile, clis.txt and the base image's id).
# Usage: build.sh [--force]
set -euo pipefail
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib.sh
. "$DIR/../lib.sh"
FORCE=0
while [ $# -gt 0 ]; do
  case "$1" in
  --force) FORCE=1 ;;
  *) echo "agent/build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
IMAGE="${GENESIS_AGENT_IMAGE:-genesis/agent:latest}"
BASE="${GENESIS_NODE_IMAGE:-genesis/node:20}"
base_id="$(image_id "$BASE")"
[ -n "$base_id" ] || { say image "$IMAGE needs $BASE first (sandboxes/build-images.sh builds it)"; exit 1; }
KEY="$(build_key "$DIR/Dockerfile" "$DIR/clis.txt" "$base_id")"
up_to_date "$IMAGE" "$KEY" && { say image "$IMAGE up to date"; exit 0; }
clis="$(grep -v '^#' "$DIR/clis.txt" | tr '\n' ' ' | sed 's/ $//')"
log="$(mktemp "${TMPDIR:-/var/tmp}/genesis-agent-image-XXXXXX.log")"
started=$(date +%s)
if ! docker build --network host --build-arg "BASE=$BASE" --build-arg "CLIS=$clis" \
  --label "$BUILD_KEY_LABEL=$KEY" -t "$IMAGE" "$DIR" >"$log" 2>&1; then
  say image "$IMAGE: docker build failed; last lines of $log:"
  tail -n 20 "$log" >&2
  exit 1
fi
rm -f "$log"
say image "$IMAGE built from $BASE with $clis in $(($(date +%s) - started)) s"
