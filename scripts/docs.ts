/**
 * `npm run docs`: writes the pages of docs/reference/ that are made from the code (the world.yaml
 * schema, the commands' help, the error vocabulary, the exit codes). A test fails when one is stale.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderReferences } from './docs/references.js';

const root = fileURLToPath(new URL('..', import.meta.url));
for (const page of await renderReferences()) {
  mkdirSync(dirname(join(root, page.path)), { recursive: true });
  writeFileSync(join(root, page.path), page.text);
  console.log(`wrote ${page.path}`);
}
