#!/usr/bin/env bash
# Builds a git history from successive published versions of an npm package, one commit per
# version, and writes it as a git bundle: a real project's history that a test can adopt offline.
#   scripts/build-npm-history.sh <package> <out.bundle> <version>...
# Each commit holds exactly what `npm pack <package>@<version>` published (its package/ folder),
# dated when that version was published, so the replayed changes are the project's own.
set -euo pipefail
pkg=$1
out=$(realpath -m "$2")
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$work" init --quiet --initial-branch=main repo
times=$(npm view "$pkg" time --json)
for version in "$@"; do
  # npm names the tarball itself (a scoped @scope/name becomes scope-name-<version>.tgz).
  tarball=$(cd "$work" && npm pack --silent "$pkg@$version" | tail -n 1)
  find "$work/repo" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
  tar -xzf "$work/$tarball" -C "$work/repo" --strip-components=1
  rm "$work/$tarball"
  when=$(node -e 'console.log(JSON.parse(process.argv[1])[process.argv[2]])' "$times" "$version")
  git -C "$work/repo" add --all
  GIT_AUTHOR_NAME="$pkg maintainers" GIT_AUTHOR_EMAIL="$pkg@npm" GIT_AUTHOR_DATE="$when" \
    GIT_COMMITTER_NAME="$pkg maintainers" GIT_COMMITTER_EMAIL="$pkg@npm" GIT_COMMITTER_DATE="$when" \
    git -C "$work/repo" commit --quiet --allow-empty -m "$pkg $version" -m "As published to the npm registry ($pkg@$version)."
done
git -C "$work/repo" bundle create "$out" main 2>/dev/null
echo "$out: $(git -C "$work/repo" rev-list --count main) commits, $(stat -c %s "$out") bytes"
