import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { startCli } from '../../helpers/cli-process.js';
import { checkWorldInvariants, fastClusterEnv, makeTaskWorld } from '../../helpers/distributed-world.js';
import { genesis } from '../../helpers/genesis-cli.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

const REDIS = 'redis://127.0.0.1:6379';
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms))]);

describe('steering a distributed run', () => {
  itWith('redis')(
    'a scheduler whose episodes run on workers takes an amendment from a stale clone between landings and goes on',
    async () => {
      const { f, tasks } = await makeTaskWorld(3, 4000, 1);
      const env = fastClusterEnv();
      const clone = join(await tempDir('genesis-fleet-steer-'), 'clone');
      execFileSync('git', ['clone', '-q', f.world.path, clone]);
      const worker = startCli(['worker', '--redis', REDIS, '--json'], env);
      await worker.waitFor(/"type":"ready"/);
      const run = startCli(['run', '--world', f.world.path, '--redis', REDIS, '--json'], env);
      // The clone falls behind: a change lands on the workers' side before the person amends.
      await run.waitFor(/"type":"episode-end".*"outcome":"accepted"/, 90_000);
      await writeFile(join(clone, 'NOTES.md'), 'a note\n');
      const amend = await genesis(['amend', '--world', f.world.path, '--from', clone, '--message', 'notes'], { env });
      expect(amend.status, amend.stderr).toBe(0);
      expect(amend.stderr).toMatch(/waiting for the running scheduler to take the amendment \(pid \d+\)/);
      expect(amend.stderr).toMatch(/merged three-way onto the head/);
      const landed = await run.waitFor(/"type":"steering".*"state":"done"/);
      expect(JSON.parse(landed)).toMatchObject({ kind: 'amend', commit: expect.stringMatching(/^[0-9a-f]{40}$/) });
      expect(await within(run.exited, 120_000)).toBe(0);
      const history = await readAcceptedHistory(f.world.path, 'main');
      expect(history.map((c) => c.task ?? c.subject)).toEqual(expect.arrayContaining([...tasks, 'notes']));
      // Nothing that landed before the amendment was undone by the clone's older tree.
      for (const t of tasks) expect(await f.world.readFile(history[0]!.commit, `src/${t}.js`)).not.toBeNull();
      expect(await checkWorldInvariants(f, tasks)).toEqual([]);
      worker.child.kill('SIGTERM');
    },
    240_000,
  );
});
