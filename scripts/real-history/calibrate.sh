#!/usr/bin/env bash
# Calibrates Genesis on real projects' histories: for each project of projects.txt, a git history
# built from its successive published versions (scripts/build-npm-history.sh, one commit per
# version, kept as a bundle in the cache), adopted into a new world with <name>.world.yaml (beside
# this script, or in tape/ for the tape projects, which are many), then
# every commit replayed through the gate (f) and mutants of the head gated (d).
#   bash scripts/real-history/calibrate.sh [name...]      (default: every project)
#   MUTANTS=10 JOBS=2 SANDBOX=auto                          (the defaults)
# Prints each project's f, d and time, a Markdown row per project, and f over all their commits
# together; each report is kept as JSON in $OUT (default: a new temporary folder, printed). f counts
# the rejections Genesis's own rules and readers make; a version whose own tests fail (or its
# parent's) is listed apart with the tests that failed, and f over every rejection is printed too
# (report-table.ts). Exits 1 when a project could not be adopted or calibrated (its row says so).
# Nothing of the projects' code is written into this repository: worlds live in a temporary folder.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${GENESIS_TEST_CACHE:-$HOME/.cache/genesis}/real-history
mutants=${MUTANTS:-10}
jobs=${JOBS:-2}
sandbox=${SANDBOX:-auto}
out=${OUT:-$(mktemp -d -t real-history.XXXXXX)}
worlds=$(mktemp -d -t real-history-worlds.XXXXXX)
trap 'rm -rf "$worlds"' EXIT
mkdir -p "$cache" "$out"
genesis() { node "$root/bin/genesis.js" "$@"; }

wanted=" $* "
: >"$out/projects.tsv"
failed=0
while read -r name package runner versions; do
  [[ -z $name || $name == \#* ]] && continue
  [[ $# -gt 0 && $wanted != *" $name "* ]] && continue
  read -ra list <<<"$versions"
  # The bundle's name holds its versions, so a changed list builds a new one.
  bundle="$cache/$name-$(echo "$package ${list[*]}" | sha1sum | cut -c1-12).bundle"
  [[ -s $bundle ]] || bash "$root/scripts/build-npm-history.sh" "$package" "$bundle" "${list[@]}" >&2
  commits=$((${#list[@]} - 1))
  world="$worlds/$name"
  echo "== $name ($package ${list[0]}–${list[-1]}, $runner): adopting" >&2
  start=$(date +%s%N)
  # A project that fails is a row that says so; the others still run.
  manifest=$here/$name.world.yaml
  [[ -f $manifest ]] || manifest=$here/tape/$name.world.yaml
  if genesis init --world "$world" --adopt "$bundle" --manifest "$manifest" --sandbox "$sandbox" >&2; then
    echo "== $name: calibrating $commits commits and $mutants mutants" >&2
    genesis calibrate --world "$world" --commits "$commits" --mutants "$mutants" --jobs "$jobs" --sandbox "$sandbox" --json >"$out/$name.json" ||
      rm -f "$out/$name.json"
  fi
  [[ -s $out/$name.json ]] || failed=1
  seconds=$((($(date +%s%N) - start) / 1000000000))
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$package ${list[0]}–${list[-1]} (${#list[@]})" "$runner" "$seconds" \
    "bash scripts/real-history/calibrate.sh $name" >>"$out/projects.tsv"
done <"$here/projects.txt"

node --import tsx "$here/report-table.ts" "$out"
echo "reports: $out" >&2
exit "$failed"
