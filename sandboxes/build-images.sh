#!/usr/bin/env bash
# Builds the images Genesis runs in, either way a machine allows, and says which way it took:
#   --from registry  from the official images (node:20-bookworm-slim, redis:7): where a registry answers
#   --from debian    with no registry: a Debian 12 base from debootstrap (sandboxes/debian), then
#                    images on it with `docker build --network host` and Debian's packages
#   --from auto      (default) registry when registry-1.docker.io answers, else debian
# Always: the gate images genesis/node:20 (Node 20, npm, git) and genesis/python:3 (python3, pytest,
# git); neither binds the host's /usr. A world names its image in verify.image (default genesis/node:20).
# With --compose, also what docker-compose.yml runs: the orchestrator image genesis/genesis and,
# from debian, genesis/redis:7 (docker-compose.offline.yml names them).
# With --agents, also the agent image genesis/agent:latest (the docker agent sandbox's default):
# genesis/node:20 with the pinned agent CLIs of sandboxes/agent/clis.txt, installed from npm.
# Every image is skipped when up to date (its genesis.build-key label matches its inputs); --force
# rebuilds. Works from any directory. Environment: GENESIS_IMAGES_FROM sets the default of --from.
set -euo pipefail
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$DIR/lib.sh"

FROM="${GENESIS_IMAGES_FROM:-auto}" COMPOSE=0 AGENTS=0 FORCE_ARG=()
while [ $# -gt 0 ]; do
  case "$1" in
  --from) FROM="${2:-}"; shift ;;
  --from=*) FROM="${1#--from=}" ;;
  --compose) COMPOSE=1 ;;
  --agents) AGENTS=1 ;;
  --force) FORCE_ARG=(--force) ;;
  -h | --help) sed -n '2,14p' "${BASH_SOURCE[0]}"; exit 0 ;;
  *) echo "build-images.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

registry_answers() {
  command -v curl >/dev/null 2>&1 || return 1
  local code
  code="$(curl -s -m 5 -o /dev/null -w '%{http_code}' https://registry-1.docker.io/v2/ 2>/dev/null || true)"
  [ -n "$code" ] && [ "$code" != 000 ]
}
case "$FROM" in
auto)
  if registry_answers; then FROM=registry; why="a registry answers"; else FROM=debian; why="no registry answers"; fi
  ;;
registry | debian) why="asked for" ;;
*) echo "build-images.sh: --from must be auto, registry or debian (got '$FROM')" >&2; exit 2 ;;
esac
say images "from $FROM ($why)"

if [ "$FROM" = debian ]; then
  bash "$DIR/debian/build.sh" "${FORCE_ARG[@]}"
fi
bash "$DIR/node/build.sh" --from "$FROM" "${FORCE_ARG[@]}"
bash "$DIR/python/build.sh" --from "$FROM" "${FORCE_ARG[@]}"
GATE_IMAGES=("${GENESIS_NODE_IMAGE:-genesis/node:20}" "${GENESIS_PYTHON_IMAGE:-genesis/python:3}")
if [ "$COMPOSE" -eq 1 ]; then
  [ "$FROM" = debian ] && bash "$DIR/redis/build.sh" "${FORCE_ARG[@]}"
  bash "$DIR/genesis/build.sh" --from "$FROM" "${FORCE_ARG[@]}"
fi
if [ "$AGENTS" -eq 1 ]; then
  bash "$DIR/agent/build.sh" "${FORCE_ARG[@]}"
fi
# Which programs a gate gets in each image (its genesis.toolchain label): what verify.image chooses.
for image in "${GATE_IMAGES[@]}"; do
  say image "$image carries $(docker image inspect --format '{{index .Config.Labels "genesis.toolchain"}}' "$image" 2>/dev/null || echo 'not built')"
done
