import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openRegularFile, readRegularFile } from '../../../src/sandbox/gate/regular-file.js';
import { readJUnitFiles } from '../../../src/gate/reports/files.js';
import { trimHandoff } from '../../../src/episode/trim-handoff.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** A directory holding what an agent or a test could leave where Genesis reads a file: a FIFO, a link, a directory. */
async function traps(): Promise<string> {
  const dir = await tempDir();
  await writeFile(join(dir, 'plain.txt'), 'notes\n');
  // A FIFO nobody writes: opened for reading without O_NONBLOCK, it waits for a writer for good.
  execFileSync('mkfifo', [join(dir, 'fifo')]);
  await symlink(join(dir, 'plain.txt'), join(dir, 'link'));
  await mkdir(join(dir, 'dir'));
  return dir;
}

describe('a file Genesis opens where an agent or a test writes', () => {
  it('is opened only when it is a regular file, and a FIFO, a link, a device or a directory never hold the open', async () => {
    const dir = await traps();
    expect(await readRegularFile(join(dir, 'plain.txt'))).toBe('notes\n');
    for (const path of [join(dir, 'fifo'), join(dir, 'link'), join(dir, 'dir'), join(dir, 'missing'), '/dev/zero']) {
      expect(await openRegularFile(path), path).toBeNull();
    }
  }, 5000);

  it('a JUnit report or a handoff file that is a FIFO is refused, not waited on', async () => {
    const dir = await traps();
    const read = await readJUnitFiles(dir, ['fifo']);
    expect(read).toEqual({ problem: expect.objectContaining({ reason: 'report-invalid' }) });
    expect(await trimHandoff(dir, 'fifo', 1)).toBeNull();
  }, 5000);
});
