import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { BwrapSandbox } from '../../../src/sandbox/gate/bwrap/bwrap-sandbox.js';
import { DockerSandbox } from '../../../src/sandbox/gate/docker/docker-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { removeTree } from '../../../src/sandbox/process/remove-tree.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { testPool, warmOnly } from './warm-only.js';

const FILL = 'i=0; while [ $i -lt 64 ]; do head -c 1048576 /dev/zero > fill-$i || exit 3; i=$((i+1)); done; echo never-full';
const limits = { cpus: 1, memoryMb: 512, pids: 64, diskMb: 16 };

async function mounts(under: string): Promise<string[]> {
  return (await readFile('/proc/self/mountinfo', 'utf8'))
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((p) => p.startsWith(under));
}

const pool = testPool();
const cases: Array<['docker' | 'bwrap', () => Sandbox, string]> = [
  ['bwrap', () => new BwrapSandbox(), ''],
  ['docker', () => new DockerSandbox({ image: 'genesis/node:20' }), ''],
  ['docker', () => warmOnly(pool), ' (warm pool)'],
];

for (const [kind, make, variant] of cases) {
  describe(`a ${kind}${variant} gate with limits.diskMb`, () => {
    itWith(kind)('stops a command that fills its work dir at the quota, says so, and leaves no mount once removed', async () => {
      const dir = await tempDir('genesis-quota-');
      const work = join(dir, 'work');
      await import('node:fs/promises').then((fs) => fs.mkdir(work));
      await writeFile(join(work, 'source.js'), 'kept\n');
      const started = Date.now();
      const result = await make().run({ command: `cat source.js; ${FILL}`, workDir: work, timeoutMs: 60_000, limits });
      expect(result.output).toContain('kept');
      expect(result.output).not.toContain('never-full');
      expect(result).toMatchObject({ exitCode: 3, timedOut: false, diskFull: true });
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(await mounts(work)).toEqual([work]);
      await removeTree(work);
      expect(await mounts(work)).toEqual([]);
    });

    itWith(kind)('bounds /tmp too, so it is no way around the quota', async () => {
      const work = join(await tempDir('genesis-quota-'), 'work');
      await import('node:fs/promises').then((fs) => fs.mkdir(work));
      const result = await make().run({ command: `cd /tmp && ${FILL}`, workDir: work, timeoutMs: 60_000, limits });
      expect(result.output).not.toContain('never-full');
      expect(result.exitCode).toBe(3);
      await removeTree(work);
    });

    itWith(kind)('keeps what a step wrote for the next step, and reports no full disk within the quota', async () => {
      const dir = await tempDir('genesis-quota-');
      const work = join(dir, 'work');
      await import('node:fs/promises').then((fs) => fs.mkdir(work));
      const sandbox = make();
      const first = await sandbox.run({ command: 'head -c 1048576 /dev/zero > built.bin && echo built', workDir: work, timeoutMs: 60_000, limits });
      expect(first).toMatchObject({ exitCode: 0, diskFull: false });
      const second = await sandbox.run({ command: 'wc -c < built.bin', workDir: work, timeoutMs: 60_000, limits });
      expect(second.output.trim()).toBe('1048576');
      await removeTree(work);
      expect(await mounts(work)).toEqual([]);
    });
  });
}
