import { lstat, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareWorkDir } from '../../../src/sandbox/gate/work-dir.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** A gate's work dir: nested directories, links to a file and a directory outside it, and `files` files. */
async function workDir(files: number): Promise<{ dir: string; outside: string }> {
  const root = await tempDir('genesis-work-dir-');
  const dir = join(root, 'gate');
  const outside = join(root, 'outside');
  await mkdir(join(dir, 'src', 'deep'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(outside, 'host.txt'), 'host');
  await writeFile(join(dir, 'src', 'deep', 'a.js'), '');
  await symlink(join(outside, 'host.txt'), join(dir, 'file-out'));
  await symlink(outside, join(dir, 'dir-out'));
  await mkdir(join(dir, 'many'));
  await Promise.all(Array.from({ length: files }, (_, i) => writeFile(join(dir, 'many', `f${i}`), '')));
  return { dir, outside };
}

const owner = async (path: string) => `${(await lstat(path)).uid}:${(await lstat(path)).gid}`;

describe.runIf(process.getuid?.() === 0)('handing a work dir to the sandbox user', () => {
  for (const [size, files] of [
    ['a small tree (walked in process)', 10],
    ['a tree past the in-process budget (by find)', 2_100],
  ] as const) {
    it(`gives every entry of ${size} to the user, links themselves and never their targets`, async () => {
      const { dir, outside } = await workDir(files);
      await prepareWorkDir(dir, { uid: 1000, gid: 1000 });
      for (const path of [dir, join(dir, 'src', 'deep', 'a.js'), join(dir, 'file-out'), join(dir, 'dir-out'), join(dir, 'many', `f${files - 1}`)])
        expect([path, await owner(path)]).toEqual([path, '1000:1000']);
      for (const path of [outside, join(outside, 'host.txt')]) expect([path, await owner(path)]).toEqual([path, '0:0']);
    });
  }

  it('leaves entries already owned untouched (their ctime stays, so git does not re-hash a workspace)', async () => {
    const { dir } = await workDir(10);
    await prepareWorkDir(dir, { uid: 1000, gid: 1000 });
    const before = (await lstat(join(dir, 'many', 'f3'))).ctimeMs;
    await writeFile(join(dir, 'new.txt'), '');
    await new Promise((r) => setTimeout(r, 20));
    await prepareWorkDir(dir, { uid: 1000, gid: 1000 });
    expect((await lstat(join(dir, 'many', 'f3'))).ctimeMs).toBe(before);
    expect(await owner(join(dir, 'new.txt'))).toBe('1000:1000');
  });
});
