#!/usr/bin/env bash
# Installs the Prometheus server the metrics test scrapes `genesis serve` with: Debian's
# `prometheus` package, through apt. Only the binary is used (the test starts its own server with
# its own configuration and data directory; apt starts no service here). Idempotent and instant
# when prometheus is there; prints one line. When it lacks the rights to install, it prints the
# command to run and exits 1.
#
# Environment: GENESIS_PROMETHEUS names another prometheus binary to use instead (then nothing is
# installed); GENESIS_STATE_DIR (default /var/tmp/genesis) holds the apt log.
set -euo pipefail

STATE_DIR="${GENESIS_STATE_DIR:-/var/tmp/genesis}"
if [ -z "${GENESIS_STATE_DIR:-}" ] && [ -d "$STATE_DIR" ] && [ ! -w "$STATE_DIR" ]; then
  STATE_DIR="/var/tmp/genesis-$(id -u)"
fi
mkdir -p "$STATE_DIR"
say() { printf '%-11s %s\n' "prometheus:" "$1"; }

# The same places test/integration/server/prometheus.ts looks, in the same order.
find_prometheus() {
  for candidate in "${GENESIS_PROMETHEUS:-}" /usr/bin/prometheus; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

if found="$(find_prometheus)"; then
  say "at $found"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  say "missing; run: sudo apt-get update && sudo apt-get install -y --no-install-recommends prometheus"
  exit 1
fi

if "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$STATE_DIR/apt-prometheus.log" 2>&1 &&
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus \
    >>"$STATE_DIR/apt-prometheus.log" 2>&1 && found="$(find_prometheus)"; then
  say "installed at $found"
else
  say "could not install it; last lines of $STATE_DIR/apt-prometheus.log:"
  tail -n 20 "$STATE_DIR/apt-prometheus.log" >&2
  exit 1
fi
