#!/usr/bin/env bash
# Builds the gate image genesis/python:3 for Python worlds: python3, pytest and git (no Node).
#   --from debian    (no registry) FROM genesis/debian:bookworm with Debian's python3 and python3-pytest
#   --from registry  FROM the official python:3.11-slim-bookworm, pytest from PyPI (Dockerfile)
# Skipped when the image is up to date (same build key). Usage: build.sh --from debian|registry [--force]
set -euo pipefail
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib.sh
. "$DIR/../lib.sh"
FROM=debian FORCE=0
while [ $# -gt 0 ]; do
  case "$1" in
  --from) FROM="$2"; shift ;;
  --force) FORCE=1 ;;
  *) echo "python/build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
IMAGE="${GENESIS_PYTHON_IMAGE:-genesis/python:3}"
BASE="${GENESIS_DEBIAN_IMAGE:-genesis/debian:bookworm}"

if [ "$FROM" = registry ]; then
  KEY="$(build_key "$DIR/Dockerfile" registry)"
  up_to_date "$IMAGE" "$KEY" && { say image "$IMAGE up to date"; exit 0; }
  docker build --quiet --label "$BUILD_KEY_LABEL=$KEY" -t "$IMAGE" "$DIR" >/dev/null
  say image "$IMAGE built from python:3.11-slim-bookworm (registry)"
  exit 0
fi

KEY="$(build_key "$DIR/Dockerfile.debian" "$(image_id "$BASE")")"
up_to_date "$IMAGE" "$KEY" && { say image "$IMAGE up to date"; exit 0; }
started=$(date +%s)
log="$(mktemp "${TMPDIR:-/var/tmp}/genesis-python-image-XXXXXX.log")"
# The toolchain label names the versions Debian installed, read back from a first build.
if ! docker build --quiet --network host --build-arg "BASE=$BASE" --label "$BUILD_KEY_LABEL=$KEY" \
  -t "$IMAGE" -f "$DIR/Dockerfile.debian" "$DIR" >"$log" 2>&1; then
  say image "$IMAGE: docker build failed; last lines of $log:"
  tail -n 20 "$log" >&2
  exit 1
fi
versions="$(docker run --rm --network none "$IMAGE" sh -c 'echo "$(python3 --version | cut -d" " -f2) $(python3 -m pytest --version 2>&1 | awk "{print \$2}")"')"
toolchain="python ${versions% *}, pytest ${versions#* }, git (Debian 12)"
if ! docker build --quiet --network host --build-arg "BASE=$BASE" --build-arg "TOOLCHAIN=$toolchain" --label "$BUILD_KEY_LABEL=$KEY" \
  -t "$IMAGE" -f "$DIR/Dockerfile.debian" "$DIR" >"$log" 2>&1; then
  say image "$IMAGE: docker build failed; last lines of $log:"
  tail -n 20 "$log" >&2
  exit 1
fi
rm -f "$log"
say image "$IMAGE built from $BASE with $toolchain in $(($(date +%s) - started)) s (no host /usr)"
