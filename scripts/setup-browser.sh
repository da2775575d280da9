#!/usr/bin/env bash
# Installs the browser the dashboard's browser test drives: Debian's chromium, through apt (no
# browser download by Playwright). Idempotent and instant when chromium is there; prints one line.
# When it lacks the rights to install, it prints the command to run and exits 1.
#
# Environment: GENESIS_CHROMIUM names another chromium binary to use instead (then nothing is
# installed); GENESIS_STATE_DIR (default /var/tmp/genesis) holds the apt log.
set -euo pipefail

STATE_DIR="${GENESIS_STATE_DIR:-/var/tmp/genesis}"
if [ -z "${GENESIS_STATE_DIR:-}" ] && [ -d "$STATE_DIR" ] && [ ! -w "$STATE_DIR" ]; then
  STATE_DIR="/var/tmp/genesis-$(id -u)"
fi
mkdir -p "$STATE_DIR"
say() { printf '%-9s %s\n' "browser:" "$1"; }

# The same places test/system/e2e/browser.ts looks, in the same order.
find_chromium() {
  for candidate in "${GENESIS_CHROMIUM:-}" /usr/lib/chromium/chromium /usr/bin/chromium; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

if found="$(find_chromium)"; then
  say "chromium at $found"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  say "chromium is missing; run: sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium"
  exit 1
fi

if "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$STATE_DIR/apt-browser.log" 2>&1 &&
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
    >>"$STATE_DIR/apt-browser.log" 2>&1 && found="$(find_chromium)"; then
  say "installed chromium at $found"
else
  say "could not install chromium; last lines of $STATE_DIR/apt-browser.log:"
  tail -n 20 "$STATE_DIR/apt-browser.log" >&2
  exit 1
fi
