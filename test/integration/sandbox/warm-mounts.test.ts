import { execFileSync } from 'node:child_process';
import { lstat, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mountsUnder, mountTree, prepareSlot, removeSlot, slotPaths, unmountSlot } from '../../../src/sandbox/warm/mounts.js';
import { tempDir } from '../../helpers/temp-dir.js';

// Slots are mounts: only root makes them (the pool is off otherwise, see sharedWarmPool).
const asRoot = process.getuid?.() === 0 ? it : it.skip;

async function tree(): Promise<string> {
  const dir = join(await tempDir('genesis-warm-tree-'), 'gate');
  await mkdir(join(dir, 'test'), { recursive: true });
  await writeFile(join(dir, 'test', 'a.test.js'), 'original');
  await writeFile(join(dir, 'notes.txt'), 'mine');
  return dir;
}

describe('a warm slot on the host', () => {
  asRoot('is made with FIFOs only its user may use, a private slot and a shared work dir', async () => {
    const slot = slotPaths(join(await tempDir('genesis-warm-slot-'), 's'));
    await prepareSlot(slot, '1000:1000');
    try {
      expect((await stat(slot.dir)).mode & 0o777).toBe(0o700);
      for (const [fifo, mode] of [
        [slot.command, 0o400],
        [slot.output, 0o200],
      ] as const) {
        const info = await lstat(fifo);
        expect(info.isFIFO()).toBe(true);
        expect([info.mode & 0o777, info.uid, info.gid]).toEqual([mode, 1000, 1000]);
      }
      const info = await readFile('/proc/self/mountinfo', 'utf8');
      const line = (point: string) => info.split('\n').find((l) => l.split(' ')[4] === point) ?? '';
      expect(line(slot.work)).toMatch(/ shared:\d+/);
      expect(line(slot.dir)).not.toMatch(/ shared:| master:/);
    } finally {
      expect(await removeSlot(slot)).toBe(true);
    }
  });

  asRoot('mounts a tree read-only where asked, hands it over, and frees it at once when unmounted', async () => {
    const slot = slotPaths(join(await tempDir('genesis-warm-slot-'), 's'));
    await prepareSlot(slot, '1000:1000');
    const dir = await tree();
    try {
      expect(await mountTree(slot, dir, [{ source: join(dir, 'test'), target: 'test', readOnly: true }], { uid: 1000, gid: 1000 })).toBe('mounted');
      expect(await readFile(join(slot.work, 'notes.txt'), 'utf8')).toBe('mine');
      expect((await lstat(join(dir, 'test', 'a.test.js'))).uid).toBe(1000);
      expect(() => execFileSync('sh', ['-c', `echo x > '${join(slot.work, 'test', 'a.test.js')}'`], { stdio: 'pipe' })).toThrow(/Read-only/);
      await unmountSlot(slot);
      // The slot's own mounts stay until it is removed; nothing of the tree does.
      expect((await mountsUnder(slot.dir)).sort()).toEqual([slot.dir, slot.work]);
      // No dentry of the tree is a mount point any more: it can be removed at once.
      execFileSync('rm', ['-rf', dir]);
      await expect(lstat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      expect(await removeSlot(slot)).toBe(true);
    }
  });

  asRoot('hands a tree over whatever its size: links themselves, never what they point to', async () => {
    const outside = await tempDir('genesis-warm-outside-');
    await writeFile(join(outside, 'host.txt'), 'host');
    for (const files of [3, 2100]) {
      const slot = slotPaths(join(await tempDir('genesis-warm-slot-'), 's'));
      await prepareSlot(slot, '1000:1000');
      const dir = await tree();
      await mkdir(join(dir, 'many'));
      for (let i = 0; i < files; i++) await writeFile(join(dir, 'many', `${i}.txt`), '');
      await symlink(join(outside, 'host.txt'), join(dir, 'file-link'));
      await symlink(outside, join(dir, 'dir-link'));
      try {
        expect(await mountTree(slot, dir, [], { uid: 1000, gid: 1000 })).toBe('mounted');
        for (const path of ['.', 'test/a.test.js', `many/${files - 1}.txt`, 'file-link', 'dir-link']) {
          const info = await lstat(join(dir, path));
          expect([path, info.uid, info.gid]).toEqual([path, 1000, 1000]);
        }
        for (const path of [outside, join(outside, 'host.txt')]) expect((await lstat(path)).uid, path).toBe(process.getuid?.());
      } finally {
        expect(await removeSlot(slot)).toBe(true);
      }
    }
  });

  asRoot('is removed whatever state it was left in, and never deletes a tree through it', async () => {
    const root = await tempDir('genesis-warm-slot-');
    // Never made; made; made with a tree still mounted in it; half made (only its work dir mounted).
    const never = slotPaths(join(root, 'never'));
    const made = slotPaths(join(root, 'made'));
    await prepareSlot(made, '1000:1000');
    const holding = slotPaths(join(root, 'holding'));
    await prepareSlot(holding, '1000:1000');
    const dir = await tree();
    expect(await mountTree(holding, dir, [{ source: join(dir, 'test'), target: 'test', readOnly: true }])).toBe('mounted');
    const half = slotPaths(join(root, 'half'));
    await mkdir(half.work, { recursive: true });
    await mkdir(half.stage);
    execFileSync('mount', ['--bind', half.work, half.work]);
    for (const slot of [never, made, holding, half]) {
      expect(await removeSlot(slot), slot.dir).toBe(true);
      expect(await mountsUnder(slot.dir)).toEqual([]);
      await expect(lstat(slot.dir)).rejects.toMatchObject({ code: 'ENOENT' });
    }
    expect(await readdir(root)).toEqual([]);
    expect(await readFile(join(dir, 'test', 'a.test.js'), 'utf8')).toBe('original');
  });
});
