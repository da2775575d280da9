import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');

function subfolders(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}

/** The folders block of docs/architecture.md: the fenced tree that starts with `src/`. */
function folderTree(page: string): string {
  const tree = page.match(/^```\nsrc\/\n([\s\S]*?)^```$/m)?.[1];
  expect(tree, 'docs/architecture.md has a fenced tree starting with src/').toBeTruthy();
  return tree!;
}

describe("docs/architecture.md's tree of src/", () => {
  const tree = folderTree(readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8'));

  it('names every folder of src/ on a line of its own', () => {
    const missing = subfolders(join(ROOT, 'src')).filter((folder) => !new RegExp(`^  ${folder}/ `, 'm').test(tree));
    expect(missing).toEqual([]);
  });

  it('names every subfolder of those, one command folder of cli/ aside', () => {
    const missing = subfolders(join(ROOT, 'src'))
      .filter((folder) => folder !== 'cli')
      .flatMap((folder) => subfolders(join(ROOT, 'src', folder)).map((sub) => `${folder}/${sub}`))
      .filter((path) => !tree.includes(`${path.split('/')[1]}/`));
    expect(missing).toEqual([]);
  });
});
