import { execFileSync } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { borrowedObjectStores, collectCandidateTree, createWorkspace, removeWorkspace } from '../../../src/episode/workspace.js';
import { git, gitValue } from '../../../src/git/git.js';
import type { WorldRepo } from '../../../src/world/world-repo.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** A bare world with two commits on main, as genesis init and one landing leave it. */
async function twoCommitWorld(): Promise<{ world: WorldRepo; first: string; second: string }> {
  const root = await tempDir('genesis-ws-');
  const source = join(root, 'src');
  const path = join(root, 'w.world');
  const run = (cwd: string, args: string[]) =>
    execFileSync('git', args, {
      cwd,
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
    });
  execFileSync('git', ['init', '--quiet', '--bare', '-b', 'main', path]);
  execFileSync('git', ['init', '--quiet', '-b', 'main', source]);
  await writeFile(join(source, 'a.txt'), 'first\n');
  run(source, ['add', '-A']);
  run(source, ['commit', '--quiet', '-m', 'first']);
  await writeFile(join(source, 'a.txt'), 'second\n');
  await writeFile(join(source, 'b.txt'), 'only in the second\n');
  run(source, ['add', '-A']);
  run(source, ['commit', '--quiet', '-m', 'second']);
  run(source, ['push', '--quiet', path, 'main']);
  const world = LocalWorld.at(path);
  return { world, first: await gitValue(['rev-parse', 'main~1'], { cwd: path }), second: await world.head('main') };
}

describe('an episode workspace', () => {
  it("borrows the world's object stores, as the world's own git directory names them, whatever the workspace's alternates say", async () => {
    const { world, second } = await twoCommitWorld();
    // The world itself borrows from another store (a scratch world of genesis calibrate does), by a relative path.
    const other = join(world.path, '..', 'other.git');
    execFileSync('git', ['init', '--quiet', '--bare', other]);
    await writeFile(join(world.path, 'objects', 'info', 'alternates'), '../../other.git/objects\n');
    const ws = await createWorkspace(world, 'ws-borrowed', second);
    await writeFile(join(ws.dir, '.git', 'objects', 'info', 'alternates'), '/\n/etc\n', { flag: 'a' });
    expect(await borrowedObjectStores(world)).toEqual([join(world.path, 'objects'), join(other, 'objects')]);
    await removeWorkspace(ws);
  });

  it('holds exactly its base, whether the base is the head of the branch (one clone) or an older commit (clone and checkout)', async () => {
    const { world, first, second } = await twoCommitWorld();
    for (const [base, files] of [
      [second, { 'a.txt': 'second\n', 'b.txt': 'only in the second\n' }],
      [first, { 'a.txt': 'first\n' }],
    ] as const) {
      const ws = await createWorkspace(world, `ws-${base.slice(0, 7)}`, base);
      expect(await gitValue(['rev-parse', 'HEAD'], { cwd: ws.dir })).toBe(base);
      // The head of the branch was checked out by the clone itself (on the branch); an older commit by name (detached).
      const attached = await git(['symbolic-ref', '-q', 'HEAD'], { cwd: ws.dir, okExitCodes: [1] });
      expect(attached.stdout.trim()).toBe(base === second ? 'refs/heads/main' : '');
      expect((await readdir(ws.dir)).filter((n) => n !== '.git').sort()).toEqual(Object.keys(files).sort());
      for (const [name, content] of Object.entries(files)) expect(await readFile(join(ws.dir, name), 'utf8')).toBe(content);
      // Nothing changed: the collected tree is the base's own.
      expect(await collectCandidateTree(world, ws, base)).toBe(await world.treeOf(base));
      // No template: no sample hooks to write now and remove later.
      expect(await readdir(join(ws.dir, '.git')).then((n) => n.includes('hooks'))).toBe(false);
      expect(await removeWorkspace(ws)).toBe(true);
    }
  });
});
