import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { createServerApp } from '../../../src/server/create-app.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { startCli } from '../../helpers/cli-process.js';
import { genesis } from '../../helpers/genesis-cli.js';
import { itWith } from '../../helpers/services.js';
import { slowGateSeed } from '../../helpers/slow-gate-world.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { baseManifest, GOOD_A, makeWorld } from '../../helpers/world-fixture.js';

// Passes once a's module exists, after 15 s either way: long enough to be seen waiting on.
const EVIDENCE = `node -e "setTimeout(() => process.exit(require('fs').existsSync('src/a.js') ? 0 : 1), 15000)"`;

type Waits = Array<{ task: string; what: string; ms: number }>;

describe('a run that waits says what it waits on', () => {
  itWith('bwrap')(
    "the goal's evidence, which holds the run, is named with how long so far on the run's output, in genesis status --world and on the dashboard",
    async () => {
      const f = await makeWorld({
        sandbox: 'bwrap',
        manifest: baseManifest({
          goal: { outcome: 'module a exists', evidence: EVIDENCE },
          tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }],
        }),
        recording: { a: [{ write: { 'src/a.js': GOOD_A } }] },
      });
      const { app } = createServerApp({ world: f.world });
      const waits = async (): Promise<Waits> => ((await (await app.request('/api/integration')).json()) as { waits: Waits }).waits;
      const run = startCli(['run', '--world', f.world.path, '--sandbox', 'bwrap']);
      // Before any episode: the run checks whether the goal is reached already.
      await run.waitFor(/… the run waits for the goal's evidence "node -e .*" on [0-9a-f]{12} \([5-9]s so far\)/);
      expect(run.lines.some((l) => l.includes('▶ a attempt 1'))).toBe(false);
      const seen = await waits();
      expect(seen).toEqual([{ task: 'the run', what: expect.stringMatching(/^the goal's evidence "node -e .*" on [0-9a-f]{12}$/), ms: expect.any(Number) }]);
      expect(seen[0]!.ms).toBeGreaterThanOrEqual(5000);
      const status = await genesis(['status', '--world', f.world.path]);
      expect(status.stdout).toMatch(/^waiting: the run waits for the goal's evidence "node -e .*" on [0-9a-f]{12} \(\d+s so far\)$/m);

      expect(await run.exited).toBe(0);
      expect(run.lines.join('\n')).toMatch(/stopped: the goal's evidence passes/);
      // Once the run is over nothing waits, on the dashboard or in status.
      expect(await waits()).toEqual([]);
      expect((await genesis(['status', '--world', f.world.path])).stdout).not.toMatch(/^waiting:/m);
    },
    180_000,
  );
});

describe('a change that waits in the integration queue says what it waits on', () => {
  itWith('bwrap')(
    'waiting for a verification slot, or for the change ahead, is told on the run’s output and kept for the dashboard with how long so far',
    async () => {
      const dir = await tempDir('genesis-queue-waits-');
      const worldPath = join(dir, 'w.world');
      // Ratchet: every change is verified in the queue, one at a time, so those behind wait for the slot.
      const init = startCli(['init', '--world', worldPath, '--from', await slowGateSeed(dir, { ratchet: true, slots: 1 })]);
      expect(await init.exited, init.stderr()).toBe(0);
      const { app } = createServerApp({ world: await LocalWorld.open(worldPath) });
      const waits = async (): Promise<Waits> => ((await (await app.request('/api/integration')).json()) as { waits: Waits }).waits;
      const run = startCli(['run', '--world', worldPath, '--json']);
      const shown: Waits = [];
      let code: number | null | undefined;
      void run.exited.then((c) => (code = c));
      while (code === undefined) {
        shown.push(...(await waits()));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(code, run.stderr()).toBe(0);
      const told = run.lines.filter((l) => l.includes('"type":"wait"')).map((l) => JSON.parse(l) as { id: string; task: string; what: string | null });
      const slot = told.filter((w) => w.id.endsWith(':queue') && w.what?.startsWith('a verification slot (all 1 are verifying the changes ahead)'));
      expect(slot.length, JSON.stringify(told)).toBeGreaterThan(0);
      // Each wait ended once the change got its slot (or left the queue).
      for (const w of told.filter((x) => x.id.endsWith(':queue') && x.what !== null)) expect(told.some((x) => x.id === w.id && x.what === null)).toBe(true);
      // The dashboard showed it while it lasted, with how long so far; once the run is over nothing waits.
      expect(shown.some((w) => w.what.startsWith('a verification slot') && w.ms >= 0)).toBe(true);
      expect(await waits()).toEqual([]);
    },
    180_000,
  );
});
