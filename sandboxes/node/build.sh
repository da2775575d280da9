#!/usr/bin/env bash
# Builds the gate image genesis/node:20, which carries its own toolchain (Node 20, npm, git, sh
# and coreutils): a gate judges a change with the same programs on every host.
#   --from debian    (no registry) FROM genesis/debian:bookworm, Node copied from this machine
#   --from registry  FROM the official node:20-bookworm-slim (Dockerfile)
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
  *) echo "node/build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
IMAGE="${GENESIS_NODE_IMAGE:-genesis/node:20}"
BASE="${GENESIS_DEBIAN_IMAGE:-genesis/debian:bookworm}"

if [ "$FROM" = registry ]; then
  KEY="$(build_key "$DIR/Dockerfile" registry)"
  up_to_date "$IMAGE" "$KEY" && { say image "$IMAGE up to date"; exit 0; }
  docker build --quiet --label "$BUILD_KEY_LABEL=$KEY" -t "$IMAGE" "$DIR" >/dev/null
  say image "$IMAGE built from node:20-bookworm-slim (registry)"
  exit 0
fi

node_bin="$(readlink -f "$(command -v node)")"
npm_dir="$(dirname "$node_bin")/../lib/node_modules/npm"
[ -d "$npm_dir" ] || npm_dir="$(dirname "$(readlink -f "$(command -v npm)")")/.."
version="$("$node_bin" --version)"
case "$version" in
v20.*) ;;
*) say image "$IMAGE needs Node 20 on this machine to copy in; found $version at $node_bin"; exit 1 ;;
esac
ca_dir=/usr/local/share/ca-certificates
KEY="$(build_key "$DIR/Dockerfile.debian" "$(image_id "$BASE")" "$version" "$(stat -c %s "$node_bin")" "$(npm --version)" "$ca_dir")"
up_to_date "$IMAGE" "$KEY" && { say image "$IMAGE up to date"; exit 0; }

context="$(mktemp -d "${TMPDIR:-/var/tmp}/genesis-node-image-XXXXXX")"
trap 'rm -rf "$context"' EXIT
cp "$DIR/Dockerfile.debian" "$context/Dockerfile"
cp "$node_bin" "$context/node"
cp -r "$(readlink -f "$npm_dir")" "$context/npm"
mkdir -p "$context/ca"
find "$ca_dir" -name '*.crt' -exec cp {} "$context/ca/" \; 2>/dev/null || true
started=$(date +%s)
if ! docker build --quiet --network host --build-arg "BASE=$BASE" --build-arg "TOOLCHAIN=node $version, npm $(npm --version), git (Debian 12)" \
  --label "$BUILD_KEY_LABEL=$KEY" -t "$IMAGE" "$context" >"$context.log" 2>&1; then
  say image "$IMAGE: docker build failed; last lines of $context.log:"
  tail -n 20 "$context.log" >&2
  exit 1
fi
rm -f "$context.log"
say image "$IMAGE built from $BASE with node $version in $(($(date +%s) - started)) s (no host /usr)"
