#!/usr/bin/env bash
# The baseline Genesis is compared with: what a hand-made agent harness does per episode today.
# A full clone of the world (as from a remote: --no-local packs and copies every object), the agent
# in it, `git commit`, the tests in a fresh `docker run --rm` container, `git push`, `rm -rf`.
# Each phase is timed with `date +%s%N`; one JSON line per episode goes to stdout, in the shape
# bench/lib/episode-timing.ts reads. Nothing here reuses anything between episodes, on purpose.
#
# usage: naive-loop.sh --world <bare repo> --episodes <n> --workdir <dir> [--image genesis/node:20]
#                      [--test 'node --test test/'] [--first <task number>] -- <agent argv...>
# The agent runs in the clone with GENESIS_EPISODE_ID and GENESIS_TASK_ID (t00001, t00002, ...) set.
set -euo pipefail

world='' episodes='' workdir='' image='genesis/node:20' test_cmd='node --test test/' first=1
while [ $# -gt 0 ]; do
  case "$1" in
    --world) world="$2"; shift 2 ;;
    --episodes) episodes="$2"; shift 2 ;;
    --workdir) workdir="$2"; shift 2 ;;
    --image) image="$2"; shift 2 ;;
    --test) test_cmd="$2"; shift 2 ;;
    --first) first="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "naive-loop.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$world" ] || [ -z "$episodes" ] || [ -z "$workdir" ] || [ $# -eq 0 ]; then
  echo "usage: naive-loop.sh --world <repo> --episodes <n> --workdir <dir> [--image I] [--test CMD] [--first K] -- <agent argv...>" >&2
  exit 2
fi
mkdir -p "$workdir"
export GIT_AUTHOR_NAME=naive GIT_AUTHOR_EMAIL=naive@localhost GIT_COMMITTER_NAME=naive GIT_COMMITTER_EMAIL=naive@localhost

# The same read-only host binds as DockerSandbox (src/sandbox/gate/docker/docker-sandbox.ts) gives the
# skeleton image genesis/node:20, so `node` exists inside. Node lives in /usr on these machines.
binds=(-v /usr:/usr:ro)
[ -d /etc/alternatives ] && binds+=(-v /etc/alternatives:/etc/alternatives:ro)

now() { date +%s%N; }
# Nanoseconds between two stamps as milliseconds with three decimals.
ms() { local us=$((($2 - $1) / 1000)); printf '%d.%03d' $((us / 1000)) $((us % 1000)); }
fail() { printf '{"episode":%d,"error":"%s"}\n' "$1" "$2"; exit 1; }

for ((i = 0; i < episodes; i++)); do
  n=$((first + i))
  task=$(printf 't%05d' "$n")
  id="naive-$(date +%Y%m%d-%H%M%S)-$n"
  clone="$workdir/$id"

  t0=$(now)
  git clone --quiet --no-local "$world" "$clone" || fail "$n" "clone failed"
  t1=$(now)
  (cd "$clone" && GENESIS_EPISODE_ID="$id" GENESIS_TASK_ID="$task" GENESIS_ATTEMPT=1 "$@") >/dev/null 2>&1 || fail "$n" "agent failed"
  t2=$(now)
  git -C "$clone" add --all && git -C "$clone" commit --quiet -m "$task: note $n" || fail "$n" "commit failed"
  t3=$(now)
  docker run --rm --network none "${binds[@]}" -v "$clone:/work" -w /work "$image" sh -c "$test_cmd" \
    >"$workdir/$id.test.log" 2>&1 || fail "$n" "tests failed, see $workdir/$id.test.log"
  t4=$(now)
  git -C "$clone" push --quiet origin HEAD:main || fail "$n" "push failed"
  t5=$(now)
  rm -rf "$clone" "$workdir/$id.test.log"
  t6=$(now)

  printf '{"episode":%d,"workspace":%s,"agent":%s,"collect":%s,"gate":%s,"integrate":%s,"other":%s,"total":%s}\n' \
    "$n" "$(ms "$t0" "$t1")" "$(ms "$t1" "$t2")" "$(ms "$t2" "$t3")" "$(ms "$t3" "$t4")" "$(ms "$t4" "$t5")" \
    "$(ms "$t5" "$t6")" "$(ms "$t0" "$t6")"
done
