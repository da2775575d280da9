import { lstat, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { handOverAgentDirs } from '../../../src/agents/agent-hand-over.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** A workspace with nested directories, a link to a file outside it, and `files` files. */
async function tree(files: number): Promise<{ workspace: string; home: string; outside: string }> {
  const root = await tempDir('genesis-hand-over-');
  const workspace = join(root, 'ws');
  const home = join(root, 'home');
  const outside = join(root, 'outside.txt');
  await mkdir(join(workspace, '.git', 'objects', 'info'), { recursive: true });
  await mkdir(join(home, '.config'), { recursive: true });
  await writeFile(outside, "not the agent's\n");
  await writeFile(join(workspace, '.git', 'objects', 'info', 'alternates'), '/elsewhere\n');
  await writeFile(join(home, '.config', 'x'), '');
  await symlink(outside, join(workspace, 'link-out'));
  await mkdir(join(workspace, 'many'));
  await Promise.all(Array.from({ length: files }, (_, i) => writeFile(join(workspace, 'many', `f${i}`), '')));
  return { workspace, home, outside };
}

async function owners(paths: string[]): Promise<string[]> {
  return Promise.all(paths.map(async (p) => `${(await lstat(p)).uid}:${(await lstat(p)).gid}`));
}

describe.runIf(process.getuid?.() === 0)("handing an agent's directories to uid 1000", () => {
  for (const [size, files] of [
    ['a small tree (walked in process)', 10],
    ['a tree past the in-process budget (finished by find)', 2_100],
  ] as const) {
    it(`gives every entry of ${size} to 1000:1000, links themselves and never their targets`, async () => {
      const { workspace, home, outside } = await tree(files);
      await handOverAgentDirs([workspace, home]);
      const inside = [
        workspace,
        join(workspace, '.git'),
        join(workspace, '.git', 'objects', 'info', 'alternates'),
        join(workspace, 'link-out'),
        join(workspace, 'many'),
        ...Array.from({ length: files }, (_, i) => join(workspace, 'many', `f${i}`)),
        home,
        join(home, '.config', 'x'),
      ];
      expect(new Set(await owners(inside))).toEqual(new Set(['1000:1000']));
      expect(await owners([outside])).toEqual(['0:0']);
    });
  }

  it('leaves entries already owned untouched (their ctime stays, so git does not re-hash them)', async () => {
    const { workspace, home } = await tree(10);
    await handOverAgentDirs([workspace, home]);
    const before = (await lstat(join(workspace, 'many', 'f3'))).ctimeMs;
    await new Promise((r) => setTimeout(r, 20));
    await handOverAgentDirs([workspace, home]);
    expect((await lstat(join(workspace, 'many', 'f3'))).ctimeMs).toBe(before);
  });
});
