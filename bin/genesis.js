#!/usr/bin/env node
// An installed package ships only the compiled dist/. In a checkout (src/ present) the CLI runs
// dist/ when it was built after the last change to any source (`npm run build`, which `npm test`
// runs first: a process started hundreds of times by the tests then skips tsx's loader), and the
// TypeScript source through tsx otherwise, so it is never stale.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const sourceDir = join(root, 'src');
const source = join(sourceDir, 'cli', 'main.ts');
const built = join(root, 'dist', 'cli', 'main.js');

/** The latest change under a folder: a file written, or one added, removed or renamed (its folder's time). */
function lastChange(dir) {
  let latest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? lastChange(path) : statSync(path).mtimeMs);
  }
  return latest;
}

let entry;
if (existsSync(source) && !(existsSync(built) && statSync(built).mtimeMs >= lastChange(sourceDir))) {
  const { register } = await import('tsx/esm/api');
  register();
  entry = await import(source);
} else {
  entry = await import('../dist/cli/main.js');
}
process.exitCode = await entry.main(process.argv);
