#!/usr/bin/env bash
# Helpers shared by the image builders in sandboxes/ (sourced, not run).
# Every image Genesis builds carries the label genesis.build-key: a hash of everything that went
# into it (its Dockerfile, the files copied in, the image it starts from). A builder whose key
# matches the existing image's skips the build, so `npm test` pays for an image once per machine.

BUILD_KEY_LABEL=genesis.build-key

say() { printf '%-9s %s\n' "$1:" "$2"; }

# The hash of the arguments (strings) and, for arguments that are files or directories, their content.
build_key() {
  local item
  for item in "$@"; do
    if [ -d "$item" ]; then
      (cd "$item" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum)
    elif [ -f "$item" ]; then
      sha256sum <"$item"
    else
      printf '%s\n' "$item"
    fi
  done | sha256sum | cut -c1-32
}

image_id() { docker image inspect --format '{{.Id}}' "$1" 2>/dev/null || true; }
image_key() { docker image inspect --format "{{index .Config.Labels \"$BUILD_KEY_LABEL\"}}" "$1" 2>/dev/null || true; }

# True when the image exists with this build key (and --force was not given).
up_to_date() { [ "${FORCE:-0}" -eq 0 ] && [ "$(image_key "$1")" = "$2" ]; }
