#!/usr/bin/env bash
# Builds every local sandbox image (each sandboxes/<name>/build.sh); arguments such as --force
# are passed on. Works from any directory.
set -euo pipefail

DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for builder in "$DIR"/*/build.sh; do
  bash "$builder" "$@"
done
