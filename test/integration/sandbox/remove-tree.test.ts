import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { discardTree, removeTree, TRASH_DIR } from '../../../src/sandbox/process/remove-tree.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** `depth` nested directories made with relative steps, as an agent's `mkdir a; cd a` loop would: deeper than PATH_MAX. */
function nest(root: string, depth: number): void {
  const script = `const fs = require('node:fs'); for (let i = 0; i < ${depth}; i++) { fs.mkdirSync('deep'); process.chdir('deep'); } fs.writeFileSync('leaf', 'x');`;
  execFileSync(process.execPath, ['-e', script], { cwd: root });
}

describe('removing a tree an agent or a check left', () => {
  it('removes 2,100 nested directories, past the path length Node can handle', async () => {
    const dir = join(await tempDir(), 'ws');
    await mkdir(dir);
    nest(dir, 2100);
    await removeTree(dir);
    expect(existsSync(dir)).toBe(false);
  });

  it('removes directories whose owner took away its own write and search permission', async () => {
    const dir = join(await tempDir(), 'ws');
    await mkdir(join(dir, 'locked', 'inner'), { recursive: true });
    await writeFile(join(dir, 'locked', 'inner', 'f'), 'x');
    await chmod(join(dir, 'locked', 'inner'), 0o000);
    await chmod(join(dir, 'locked'), 0o500);
    await removeTree(dir);
    expect(existsSync(dir)).toBe(false);
  });

  it('removes a symlink, never what it points at', async () => {
    const root = await tempDir();
    await mkdir(join(root, 'kept'));
    await writeFile(join(root, 'kept', 'f'), 'x');
    await mkdir(join(root, 'ws'));
    execFileSync('ln', ['-s', join(root, 'kept'), join(root, 'ws', 'link')]);
    await removeTree(join(root, 'ws'));
    expect(existsSync(join(root, 'kept', 'f'))).toBe(true);
  });

  it('does nothing to a path that does not exist', async () => {
    await expect(removeTree(join(await tempDir(), 'none'))).resolves.toBeUndefined();
    await expect(discardTree(join(await tempDir(), 'none'))).resolves.toBe(true);
  });

  // A read-only bind mount inside stands for what no rm can remove (an immutable file); mounting needs root.
  it.skipIf(process.getuid?.() !== 0)('frees the path of a tree it cannot remove by moving it into the trash beside it, without throwing', async () => {
    const root = await tempDir();
    const dir = join(root, 'ws');
    await mkdir(join(dir, 'mnt'), { recursive: true });
    execFileSync('mount', ['--bind', '-o', 'ro', '/usr/share', join(dir, 'mnt')], { stdio: 'ignore' });
    try {
      await expect(removeTree(dir)).rejects.toMatchObject({ code: 'remove-failed' });
      expect(await discardTree(dir)).toBe(false);
      expect(existsSync(dir)).toBe(false);
      expect(await readdir(join(root, TRASH_DIR))).toEqual([expect.stringMatching(/^ws-\d+-[0-9a-f]{6}$/)]);
    } finally {
      execFileSync('sh', ['-c', `umount "$1"/ws/mnt "$1"/${TRASH_DIR}/*/mnt 2>/dev/null; true`, 'sh', root]);
    }
  });
});
