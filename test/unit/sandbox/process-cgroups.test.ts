import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cgroupsOf } from '../../../src/sandbox/process/cgroups.js';

describe('cgroupsOf', () => {
  it('finds the directories that list this very process, on whichever hierarchy holds each controller', async () => {
    const cgroups = await cgroupsOf(process.pid);
    const listed = async (dir: string) => (await readFile(join(dir, 'cgroup.procs'), 'utf8')).split('\n').includes(String(process.pid));
    for (const controller of ['memory', 'pids', 'freezer']) {
      const dir = cgroups.v1Controllers.has(controller) ? cgroups.v1[controller] : cgroups.unified;
      expect(dir, controller).toBeTruthy();
      expect(await listed(dir!), controller).toBe(true);
    }
  });

  it('knows nothing of a process that does not exist', async () => {
    const cgroups = await cgroupsOf(2 ** 22 + 1);
    expect(cgroups).toEqual({ v1: {}, v1Controllers: new Set(), unified: null });
  });
});
