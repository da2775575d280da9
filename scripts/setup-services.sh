#!/usr/bin/env bash
# Brings up what Genesis's tests and gates need on this machine: Redis on 127.0.0.1:6379, a Docker
# daemon, bubblewrap and the local sandbox image. Idempotent and fast when all is up; prints one
# line per service. Nothing here starts by itself on the project's machines (no systemd), and a
# fresh machine (CI) has none of it, so this script installs what is missing too. When it lacks
# the rights to fix something, it prints the command to run and exits 1 after checking the rest.
#
# Usage: setup-services.sh [redis] [docker] [bwrap]   (default: all three; `bwrap` alone is what
# the embedded defaults of `genesis demo` need)
# Environment: GENESIS_STATE_DIR (default /var/tmp/genesis) holds logs, pid files and Redis's dir.
set -euo pipefail

WANT=" ${*:-redis docker bwrap} "
for arg in $WANT; do
  case "$arg" in
  redis | docker | bwrap) ;;
  *)
    echo "setup-services.sh: unknown service '$arg' (choose from: redis docker bwrap)" >&2
    exit 2
    ;;
  esac
done
wants() { [[ "$WANT" == *" $1 "* ]]; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE_DIR="${GENESIS_STATE_DIR:-/var/tmp/genesis}"
# Another user's default state dir (root ran this first) is not ours to write in.
if [ -z "${GENESIS_STATE_DIR:-}" ] && [ -d "$STATE_DIR" ] && [ ! -w "$STATE_DIR" ]; then
  STATE_DIR="/var/tmp/genesis-$(id -u)"
fi
mkdir -p "$STATE_DIR"
# Daemons live in sbin, which ordinary users' PATH on Debian lacks.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

failed=0
say() { printf '%-9s %s\n' "$1:" "$2"; }
fail() {
  say "$1" "$2"
  failed=1
}

# Root, passwordless sudo, or neither (then we print what to run instead of running it).
if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  SUDO=(none)
fi
can_root() { [ "${SUDO[0]:-}" != none ]; }
as_root() { "${SUDO[@]}" "$@"; }

# Packages are judged by the commands they provide, so a docker-ce install counts as Docker.
setup_packages() {
  local missing=()
  if wants redis; then
    command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
    command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
  fi
  wants docker && ! command -v dockerd >/dev/null 2>&1 && missing+=(docker.io)
  # The offline images start from a Debian root filesystem (sandboxes/debian/build.sh), and the
  # fleet test runs docker-compose.yml with whichever compose is here (Debian's 1.29 or the plugin).
  wants docker && ! command -v debootstrap >/dev/null 2>&1 && ! PATH="$PATH:/usr/sbin:/sbin" command -v debootstrap >/dev/null 2>&1 && missing+=(debootstrap)
  if wants docker && ! command -v docker-compose >/dev/null 2>&1 && ! docker compose version >/dev/null 2>&1; then
    missing+=(docker-compose)
  fi
  wants bwrap && ! command -v bwrap >/dev/null 2>&1 && missing+=(bubblewrap)
  # Agents under bubblewrap get a network namespace of their own, joined to the outside by slirp4netns;
  # the tests stand up "the outside" in a namespace with iproute2.
  wants bwrap && ! command -v slirp4netns >/dev/null 2>&1 && missing+=(slirp4netns)
  wants bwrap && ! command -v ip >/dev/null 2>&1 && missing+=(iproute2)
  # agent.network.allow: a packet filter in the agent's namespace leaves only its proxy.
  wants bwrap && ! command -v iptables-restore >/dev/null 2>&1 && missing+=(iptables)
  command -v git >/dev/null 2>&1 || missing+=(git)
  # verify.deps with pip: the pip end-to-end test installs with Debian's python3 and its pip.
  wants bwrap && ! /usr/bin/python3 -m pip --version >/dev/null 2>&1 && missing+=(python3-pip)
  # Gates run Debian's python3 from /usr (worlds/py-ratchet): pytest must be importable there.
  if wants docker || wants bwrap; then
    /usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || missing+=(python3-pytest)
    # The go reader is proven on what Debian's go prints (`go test -json`), not on a hand-written copy.
    command -v go >/dev/null 2>&1 || missing+=(golang-go)
  fi
  if [ "${#missing[@]}" -eq 0 ]; then
    say packages "all present"
  elif ! can_root; then
    fail packages "missing ${missing[*]}; run: sudo apt-get update && sudo apt-get install -y ${missing[*]}"
  elif as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$STATE_DIR/apt.log" 2>&1 &&
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >>"$STATE_DIR/apt.log" 2>&1; then
    say packages "installed ${missing[*]}"
  else
    fail packages "could not install ${missing[*]}; last lines of $STATE_DIR/apt.log:"
    tail -n 20 "$STATE_DIR/apt.log" >&2
  fi
}

redis_up() { [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = PONG ]; }
setup_redis() {
  if redis_up; then
    say redis "already answering on 127.0.0.1:6379"
    return
  fi
  command -v redis-server >/dev/null 2>&1 || return 0 # reported with the packages
  # Tests and local runs need no persistence; a restart starts empty, which is what tests want.
  redis-server --bind 127.0.0.1 --port 6379 --daemonize yes --save '' --appendonly no \
    --dir "$STATE_DIR" --pidfile "$STATE_DIR/redis.pid" --logfile "$STATE_DIR/redis.log" || true
  for _ in $(seq 100); do redis_up && break; sleep 0.05; done
  if redis_up; then
    say redis "started on 127.0.0.1:6379 (log $STATE_DIR/redis.log)"
  else
    fail redis "did not start; last lines of $STATE_DIR/redis.log:"
    tail -n 20 "$STATE_DIR/redis.log" >&2 || true
  fi
}

docker_up() { docker version >/dev/null 2>&1; }
setup_docker() {
  if docker_up; then
    say docker "already answering"
    return
  fi
  command -v dockerd >/dev/null 2>&1 || return 0 # reported with the packages
  if [ "$(id -u)" -ne 0 ] && [[ "$(docker version 2>&1 || true)" == *"permission denied"* ]]; then
    local me
    me="$(id -un)"
    fail docker "the daemon runs but $me may not use it; run: sudo usermod -aG docker $me (then log in again)"
    return
  fi
  if ! can_root; then
    fail docker "not running; run: sudo bash $ROOT/scripts/setup-services.sh"
    return
  fi
  # Default networking: gates still run with NetworkMode none, but dependency installs, agents on
  # a network of their own and compose services reach each other only through a bridge.
  # GENESIS_DOCKERD_FLAGS adds flags (e.g. "--bridge none --iptables=false" where bridges cannot be made).
  # /run/docker is never removed: another daemon may own it.
  # shellcheck disable=SC2086
  as_root setsid -f dockerd --host unix:///var/run/docker.sock --data-root /var/lib/docker \
    --exec-root /var/run/docker ${GENESIS_DOCKERD_FLAGS:-} \
    </dev/null >>"$STATE_DIR/dockerd.log" 2>&1
  for _ in $(seq 300); do docker_up && break; sleep 0.1; done
  if docker_up; then
    say docker "started dockerd (log $STATE_DIR/dockerd.log)"
  else
    fail docker "dockerd did not answer within 30 s; last lines of $STATE_DIR/dockerd.log:"
    tail -n 30 "$STATE_DIR/dockerd.log" >&2 || true
  fi
}

bwrap_up() { bwrap --ro-bind / / --unshare-net --unshare-pid true >/dev/null 2>&1; }
setup_bwrap() {
  command -v bwrap >/dev/null 2>&1 || return 0 # reported with the packages
  if bwrap_up; then
    say bwrap "works"
    return
  fi
  # Ubuntu 24.04 forbids unprivileged user namespaces through AppArmor; CI machines are
  # disposable, so there we lift the restriction, elsewhere we say how.
  local knob=/proc/sys/kernel/apparmor_restrict_unprivileged_userns
  if [ -r "$knob" ] && [ "$(cat "$knob")" = 1 ] && [ -n "${CI:-}" ] && can_root; then
    as_root sysctl -qw kernel.apparmor_restrict_unprivileged_userns=0 || true
    bwrap_up && say bwrap "works (allowed unprivileged user namespaces for CI)" && return
  fi
  if [ -r "$knob" ] && [ "$(cat "$knob")" = 1 ]; then
    fail bwrap "blocked by AppArmor; run: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
  else
    fail bwrap "does not run here: $(bwrap --ro-bind / / true 2>&1 | head -n 1)"
  fi
}

setup_packages
if wants redis; then setup_redis; fi
if wants docker; then setup_docker; fi
if wants bwrap; then setup_bwrap; fi
if wants docker && docker_up; then
  bash "$ROOT/sandboxes/build-images.sh" || failed=1
fi
exit "$failed"
