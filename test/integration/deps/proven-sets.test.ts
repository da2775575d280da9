import { execFile } from 'node:child_process';
import { chmod, mkdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ProvenSets } from '../../../src/deps/cache/proven-sets.js';
import { summarizeTree } from '../../../src/deps/fingerprint.js';
import { tempDir } from '../../helpers/temp-dir.js';

const execFileAsync = promisify(execFile);

/** A small prepared set's outputs (nested as node_modules is) and its fingerprint. */
async function preparedSet(): Promise<{ dir: string; fingerprint: string }> {
  const dir = join(await tempDir('genesis-proven-'), 'out');
  await mkdir(join(dir, 'node_modules/pkg/lib'), { recursive: true });
  await writeFile(join(dir, 'node_modules/pkg/package.json'), '{}');
  await writeFile(join(dir, 'node_modules/pkg/lib/index.js'), 'module.exports = 1;\n');
  return { dir, fingerprint: (await summarizeTree(dir)).fingerprint };
}

/** The real walk, counted. */
function countedWalk(): { walks: () => number; summarize: typeof summarizeTree } {
  let walks = 0;
  return {
    walks: () => walks,
    summarize: (root, beforeReading) => {
      walks++;
      return summarizeTree(root, beforeReading);
    },
  };
}

describe('ProvenSets', () => {
  it('walks a set once and answers from the watch while nothing changes it', async () => {
    const set = await preparedSet();
    const counted = countedWalk();
    const proven = new ProvenSets({ summarize: counted.summarize });
    for (let use = 0; use < 5; use++) expect(await proven.isUnchanged(set)).toBe(true);
    expect(counted.walks()).toBe(1);
  });

  const changes: Array<[string, (dir: string) => Promise<unknown>]> = [
    ['a file written deep in the set', (dir) => writeFile(join(dir, 'node_modules/pkg/lib/index.js'), 'module.exports = 2;\n')],
    ['a file added', (dir) => writeFile(join(dir, 'node_modules/pkg/lib/extra.js'), '')],
    ['a file removed', (dir) => rm(join(dir, 'node_modules/pkg/package.json'))],
    ['a file appended to by another process', (dir) => execFileAsync('sh', ['-c', 'echo >> "$1"', 'sh', join(dir, 'node_modules/pkg/package.json')])],
    ['a mode changed', (dir) => chmod(join(dir, 'node_modules/pkg/lib/index.js'), 0o777)],
    ['a directory renamed', (dir) => rename(join(dir, 'node_modules/pkg/lib'), join(dir, 'node_modules/pkg/dist'))],
  ];
  for (const [what, change] of changes) {
    it(`reports ${what} after the proof, and walks again on the next use`, async () => {
      const set = await preparedSet();
      const counted = countedWalk();
      const proven = new ProvenSets({ summarize: counted.summarize });
      expect(await proven.isUnchanged(set)).toBe(true);
      await change(set.dir);
      expect(await proven.isUnchanged(set)).toBe(false);
      expect(counted.walks()).toBe(2);
    });
  }

  it('leaves the verdict on a reported change to the walk, as every use had it before', async () => {
    const set = await preparedSet();
    const file = join(set.dir, 'node_modules/pkg/lib/index.js');
    const counted = countedWalk();
    const proven = new ProvenSets({ summarize: counted.summarize });
    expect(await proven.isUnchanged(set)).toBe(true);
    // Same size, time put back: reported, walked again, and passed by the walk (the fingerprint cannot tell).
    const before = await stat(file);
    await writeFile(file, 'module.exports = 3;\n');
    await utimes(file, before.atimeMs / 1000, before.mtimeMs / 1000);
    expect(await proven.isUnchanged(set)).toBe(true);
    expect(counted.walks()).toBe(2);
  });

  it('walks a set again once more sets than it keeps were proven after it', async () => {
    const sets = [await preparedSet(), await preparedSet()];
    const counted = countedWalk();
    const proven = new ProvenSets({ maxSets: 1, summarize: counted.summarize });
    for (const set of [...sets, ...sets]) expect(await proven.isUnchanged(set)).toBe(true);
    expect(counted.walks()).toBe(4);
  });

  it('answers false for a set whose fingerprint is not the one proven, and for one that is gone', async () => {
    const set = await preparedSet();
    const proven = new ProvenSets();
    expect(await proven.isUnchanged(set)).toBe(true);
    expect(await proven.isUnchanged({ ...set, fingerprint: '0'.repeat(64) })).toBe(false);
    await rm(set.dir, { recursive: true });
    expect(await proven.isUnchanged(set)).toBe(false);
  });
});
