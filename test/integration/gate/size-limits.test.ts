import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { open, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectCandidateTree, createWorkspace } from '../../../src/episode/workspace.js';
import { checkChange, DEFAULT_PRE_GATE_LIMITS } from '../../../src/gate/pre-gate.js';
import { exportTree } from '../../../src/git/tree/export.js';
import { git, gitValue } from '../../../src/git/git.js';
import { diffText, listChanges } from '../../../src/git/tree/diff.js';
import type { WorldRepo } from '../../../src/world/world-repo.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { tempDir } from '../../helpers/temp-dir.js';

const LIMITS = { maxFileBytes: 1024 * 1024, maxChangeBytes: 4 * 1024 * 1024 };

/** A bare world with one commit, as genesis init leaves it (without a manifest: these tests need none). */
async function bareWorld(): Promise<{ world: WorldRepo; base: string }> {
  const root = await tempDir('genesis-size-');
  const path = join(root, 'w.world');
  execFileSync('git', ['init', '--quiet', '--bare', path]);
  const world = LocalWorld.at(path);
  const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: path, input: 'hello\n' });
  const tree = await makeTree(path, [['100644', blob, 'src/a.js']]);
  return { world, base: await world.commitTree(tree, [], 'base\n') };
}

/** A tree of the given entries (mode, blob, path; paths with '/' welcome), through a private index. */
async function makeTree(repo: string, entries: Array<[string, string, string]>): Promise<string> {
  const env = { GIT_INDEX_FILE: join(repo, `test-${entries.length}-${Date.now()}.index`) };
  await git(['update-index', '--add', '-z', '--index-info'], {
    cwd: repo,
    env,
    input: entries.map(([mode, sha, path]) => `${mode} ${sha}\t${path}\0`).join(''),
  });
  return gitValue(['write-tree'], { cwd: repo, env });
}

async function objectBytes(repo: string): Promise<number> {
  const out = (await git(['count-objects', '-v'], { cwd: repo })).stdout;
  const kb = (key: string) => Number(new RegExp(`^${key}: (\\d+)`, 'm').exec(out)?.[1] ?? 0);
  return (kb('size') + kb('size-pack')) * 1024;
}

describe('size limits before anything is read', () => {
  it('rejects a 2 GB sparse file as size-limit without putting a byte of it in the world', async () => {
    const { world, base } = await bareWorld();
    const ws = await createWorkspace(world, 'sparse', base);
    const handle = await open(join(ws.dir, 'src', 'huge.bin'), 'w');
    await handle.truncate(2 * 1024 ** 3);
    await handle.close();
    const before = await objectBytes(world.path);
    const rss = process.memoryUsage().rss;
    await expect(collectCandidateTree(world, ws, base, [], LIMITS)).rejects.toMatchObject({
      code: 'size-limit',
      message: expect.stringContaining('src/huge.bin (2147483648 bytes)'),
      paths: ['src/huge.bin'],
    });
    expect(await objectBytes(world.path)).toBe(before);
    expect(process.memoryUsage().rss - rss).toBeLessThan(100 * 1024 * 1024);
  });

  it('counts a tracked file that grew past the change limit, and the total of many files under the per-file limit', async () => {
    const { world, base } = await bareWorld();
    const ws = await createWorkspace(world, 'grow', base);
    await writeFile(join(ws.dir, 'src', 'a.js'), Buffer.alloc(5 * 1024 * 1024, 'a'));
    await expect(collectCandidateTree(world, ws, base, [], LIMITS)).rejects.toMatchObject({ code: 'size-limit', paths: ['src/a.js'] });
    const ws2 = await createWorkspace(world, 'many', base);
    for (let i = 0; i < 5; i++) await writeFile(join(ws2.dir, 'src', `part${i}.bin`), Buffer.alloc(1000 * 1024, i));
    await expect(collectCandidateTree(world, ws2, base, [], LIMITS)).rejects.toMatchObject({
      code: 'size-limit',
      message: expect.stringContaining('in total, over the limit of 4194304'),
    });
  });

  it('leaves ignored files out of the count, as git add does', async () => {
    const { world, base } = await bareWorld();
    const ws = await createWorkspace(world, 'ignored', base);
    await writeFile(join(ws.dir, '.gitignore'), 'node_modules/\n');
    execFileSync('mkdir', ['-p', join(ws.dir, 'node_modules', 'big')]);
    await writeFile(join(ws.dir, 'node_modules', 'big', 'blob.bin'), Buffer.alloc(3 * 1024 * 1024, 1));
    await writeFile(join(ws.dir, 'src', 'b.js'), 'export const b = 1;\n');
    const tree = await collectCandidateTree(world, ws, base, [], LIMITS);
    expect((await listChanges(world.path, await world.treeOf(base), tree)).map((c) => c.path).sort()).toEqual(['.gitignore', 'src/b.js']);
  });

  it('builds a diff no larger than its cut, leaving out blobs larger than it unread', async () => {
    const { world, base } = await bareWorld();
    const big = await gitValue(['hash-object', '-w', '--stdin'], { cwd: world.path, input: Buffer.alloc(3 * 1024 * 1024, 'x') });
    const small = await gitValue(['hash-object', '-w', '--stdin'], { cwd: world.path, input: 'line\n'.repeat(12_000) });
    const tree = await makeTree(world.path, [
      ['100644', big, 'src/big.bin'],
      ['100644', small, 'src/lines.txt'],
    ]);
    const diff = await diffText(world.path, await world.treeOf(base), tree, 64 * 1024);
    expect(diff.length).toBeLessThan(66 * 1024);
    expect(diff).toContain('[diff cut at 65536 bytes]');
    expect(diff).toContain('[src/big.bin: 3145728 bytes, left out of the diff]');
    expect(diff).not.toContain('xxxxxxxx');
  });

  it('never reads a symlink target longer than any path, and the pre-gate rejects the link', async () => {
    const { world, base } = await bareWorld();
    const target = await gitValue(['hash-object', '-w', '--stdin'], { cwd: world.path, input: 'a/'.repeat(5000) });
    const tree = await makeTree(world.path, [['120000', target, 'src/link']]);
    const changes = await listChanges(world.path, await world.treeOf(base), tree);
    const link = changes.find((c) => c.path === 'src/link');
    expect(link).toMatchObject({ mode: '120000', size: 10000 });
    expect(link?.symlinkTarget).toBeUndefined();
    const verdict = checkChange(changes, { protected: [], taskPaths: ['src'], ...DEFAULT_PRE_GATE_LIMITS });
    expect(verdict).toMatchObject({ ok: false, reason: 'symlink-escape' });
  });

  it('still reads a file over the per-file limit alone, so the pre-gate names its reason in its order', async () => {
    const { world, base } = await bareWorld();
    const ws = await createWorkspace(world, 'medium', base);
    await writeFile(join(ws.dir, 'src', 'medium.bin'), Buffer.alloc(2 * 1024 * 1024, 'm'));
    const tree = await collectCandidateTree(world, ws, base, [], LIMITS);
    const changes = await listChanges(world.path, await world.treeOf(base), tree);
    expect(checkChange(changes, { protected: [], taskPaths: ['src'], ...LIMITS, maxFiles: 10 })).toMatchObject({ ok: false, reason: 'size-limit' });
  });

  it('streams a large tree into a gate dir without holding it in memory, and names no host path when it fails', async () => {
    const { world } = await bareWorld();
    const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: world.path, input: randomBytes(96 * 1024 * 1024) });
    const tree = await makeTree(world.path, [['100644', blob, 'big.bin']]);
    const out = join(await tempDir(), 'gate');
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    await exportTree(world.path, tree, out);
    clearInterval(sampler);
    expect((await stat(join(out, 'big.bin'))).size).toBe(96 * 1024 * 1024);
    expect(peak - before).toBeLessThan(48 * 1024 * 1024);
    const failed = exportTree(world.path, 'f'.repeat(40), join(out, 'again'));
    await expect(failed).rejects.toMatchObject({ code: 'export-failed' });
    await expect(failed).rejects.not.toMatchObject({ message: expect.stringContaining(out) });
  });

  it('measures a file the head holds from its size there: a page the project regenerates may grow past the per-file limit, a new file or a swollen small one may not', async () => {
    const { world, base } = await bareWorld();
    const blob = (bytes: number, fill: string) => gitValue(['hash-object', '-w', '--stdin'], { cwd: world.path, input: Buffer.alloc(bytes, fill) });
    const small = await gitValue(['hash-object', '-w', '--stdin'], { cwd: world.path, input: 'hello\n' });
    // array-includes 3.1.1 ships an 801,477-byte test.html, which 3.1.2 regenerates at 1,130,699 bytes.
    const head = await world.commitTree(
      await makeTree(world.path, [
        ['100644', small, 'src/a.js'],
        ['100644', await blob(801_477, 'a'), 'test.html'],
      ]),
      [base],
      'page\n',
    );
    const grown = await makeTree(world.path, [
      ['100644', small, 'src/a.js'],
      ['100644', await blob(1_130_699, 'b'), 'test.html'],
    ]);
    const rules = { protected: [], taskPaths: ['**'], ...DEFAULT_PRE_GATE_LIMITS };
    const regenerated = await listChanges(world.path, await world.treeOf(head), grown);
    expect(regenerated).toEqual([{ path: 'test.html', change: 'modified', mode: '100644', size: 1_130_699, baseSize: 801_477 }]);
    expect(checkChange(regenerated, rules)).toMatchObject({ ok: true });
    const added = await listChanges(world.path, await world.treeOf(base), grown);
    expect(checkChange(added, rules)).toMatchObject({ ok: false, reason: 'size-limit', paths: ['test.html'] });
    const swollen = await makeTree(world.path, [
      ['100644', await blob(1_130_699, 'c'), 'src/a.js'],
      ['100644', await blob(801_477, 'a'), 'test.html'],
    ]);
    const verdict = checkChange(await listChanges(world.path, await world.treeOf(head), swollen), rules);
    expect(verdict).toMatchObject({ ok: false, reason: 'size-limit', paths: ['src/a.js'] });
  });

  it('collects a normal change under the limits', async () => {
    const { world, base } = await bareWorld();
    const ws = await createWorkspace(world, 'normal', base);
    await symlink('a.js', join(ws.dir, 'src', 'alias.js'));
    await writeFile(join(ws.dir, 'src', 'a.js'), 'changed\n');
    const tree = await collectCandidateTree(world, ws, base, [], LIMITS);
    expect((await listChanges(world.path, await world.treeOf(base), tree)).map((c) => c.path).sort()).toEqual(['src/a.js', 'src/alias.js']);
  });
});
