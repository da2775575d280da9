#!/usr/bin/env node
// In a checkout (src/ present) the CLI runs from the TypeScript source through tsx, so it can never
// be stale; an installed package ships only the compiled dist/.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
let entry;
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  entry = await import(source);
} else {
  entry = await import('../dist/cli/main.js');
}
process.exitCode = await entry.main(process.argv);
