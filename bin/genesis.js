#!/usr/bin/env node
// Runs the compiled CLI when it exists (fast start), else the TypeScript source through tsx.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const compiled = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
let entry;
if (existsSync(compiled) && !process.env.GENESIS_FROM_SOURCE) {
  entry = await import(compiled);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  entry = await import('../src/cli/main.ts');
}
process.exitCode = await entry.main(process.argv);
