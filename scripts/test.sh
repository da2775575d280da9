#!/usr/bin/env bash
# The whole test suite, as `npm test` and CI run it: bring up the services the tests talk to
# (Redis, Docker, bubblewrap, the sandbox image), typecheck, lint, build, then run every test.
# Extra arguments go to vitest (e.g. `npm test -- test/unit`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-services.sh
bash scripts/setup-browser.sh
# kubectl renders deploy/kubernetes; the fleet test on podman copies its images itself.
bash scripts/setup-kubernetes.sh --packages
if [ ! -d node_modules ]; then
  echo "node_modules is missing; run: npm ci" >&2
  exit 1
fi
echo "typecheck: tsc --noEmit"
npx tsc --noEmit -p tsconfig.json
echo "lint: npm run lint (biome: code rules and layers)"
npm run lint --silent
# The tests start the CLI hundreds of times; built, each start skips tsx's loader (bin/genesis.js
# runs dist/ only while it is newer than every source).
echo "build: npm run build (the CLI the tests start)"
npm run build --silent
exec npx vitest run "$@"
