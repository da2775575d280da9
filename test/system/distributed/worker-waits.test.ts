import { describe, expect } from 'vitest';
import { startCli } from '../../helpers/cli-process.js';
import { checkWorldInvariants, fastClusterEnv, makeTaskWorld } from '../../helpers/distributed-world.js';
import { itWith } from '../../helpers/services.js';

const REDIS = 'redis://127.0.0.1:6379';

describe('a distributed run with fewer worker slots than episodes', () => {
  itWith('redis')('tells that an episode no worker has taken yet waits for a free worker, and when that wait ends', async () => {
    // Two episodes at once, one worker that runs one at a time: the second waits in the queue.
    const { f, tasks } = await makeTaskWorld(2, 2500, 2);
    const env = fastClusterEnv();
    const worker = startCli(['worker', '--redis', REDIS, '--json', '--concurrency', '1'], env);
    try {
      await worker.waitFor(/"type":"ready"/);
      const run = startCli(['run', '--world', f.world.path, '--redis', REDIS, '--json'], env);
      expect(await Promise.race([run.exited, new Promise((r) => setTimeout(() => r('timeout'), 120_000))]), run.stderr()).toBe(0);
      const told = run.lines.filter((l) => l.includes('"type":"wait"')).map((l) => JSON.parse(l) as { id: string; task: string; what: string | null });
      const waited = told.filter((w) => w.id.endsWith(':worker') && w.what !== null);
      expect(waited.length, JSON.stringify(told)).toBeGreaterThan(0);
      for (const w of waited) {
        expect(w.what).toBe('a free worker: every worker is busy, or none runs (genesis worker --redis <url>)');
        expect(told.some((x) => x.id === w.id && x.what === null)).toBe(true);
      }
      expect(await checkWorldInvariants(f, tasks)).toEqual([]);
    } finally {
      worker.child.kill('SIGTERM');
    }
  });
});
