#!/usr/bin/env bash
# Builds genesis/redis:7 from Debian's packages on genesis/debian:bookworm (no registry); skipped
# when up to date. Usage: build.sh [--force]
set -euo pipefail
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib.sh
. "$DIR/../lib.sh"
FORCE=0
[ "${1:-}" = --force ] && FORCE=1
IMAGE="${GENESIS_REDIS_IMAGE:-genesis/redis:7}"
BASE="${GENESIS_DEBIAN_IMAGE:-genesis/debian:bookworm}"
KEY="$(build_key "$DIR/Dockerfile.debian" "$(image_id "$BASE")")"
up_to_date "$IMAGE" "$KEY" && { say image "$IMAGE up to date"; exit 0; }
started=$(date +%s)
log="$(mktemp "${TMPDIR:-/var/tmp}/genesis-redis-image-XXXXXX.log")"
if ! docker build --quiet --network host --build-arg "BASE=$BASE" --label "$BUILD_KEY_LABEL=$KEY" \
  -t "$IMAGE" -f "$DIR/Dockerfile.debian" "$DIR" >"$log" 2>&1; then
  say image "$IMAGE: docker build failed; last lines of $log:"
  tail -n 20 "$log" >&2
  exit 1
fi
rm -f "$log"
say image "$IMAGE built from $BASE with Debian's redis-server in $(($(date +%s) - started)) s"
