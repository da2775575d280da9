import { describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { genesis } from '../../helpers/genesis-cli.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, GOOD_A, makeWorld } from '../../helpers/world-fixture.js';

const ONLY_A = [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }];

describe('a raced task in a real run', () => {
  itWith('bwrap')(
    'runs its racers at once from one base; the first to pass lands, the slow one is stopped and outrun, and every racer counts',
    async () => {
      const f = await makeWorld({
        sandbox: 'bwrap',
        manifest: baseManifest({ parallelism: 3, retry: { maxAttempts: 3 }, tasks: [{ ...ONLY_A[0], race: 3 }] }),
        // Racer 1's agent fails at once, racer 2 passes, racer 3 would take a minute: it is stopped once racer 2 wins.
        recording: {
          a: [{ exit: 1 }, { write: { 'src/a.js': GOOD_A }, sleepMs: 1_500 }, { write: { 'src/a.js': GOOD_A }, sleepMs: 60_000 }],
        },
      });
      const started = Date.now();
      const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
      expect(summary.stop.kind).toBe('done');
      expect(Date.now() - started).toBeLessThan(45_000);
      expect((await readAcceptedHistory(f.world.path, 'main')).map((c) => c.task)).toEqual(['a', null]);
      const ledger = new GitLedger(f.world.path);
      const records = (await ledger.readAll()).sort((x, y) => x.attempt - y.attempt);
      expect(records.map((r) => [r.attempt, r.outcome, r.reason])).toEqual([
        [1, 'failed', 'agent-exit'],
        [2, 'accepted', null],
        [3, 'outrun', 'outrun'],
      ]);
      // One race from one base, each racer its own attempt (a rotation gives each another agent).
      expect(new Set(records.map((r) => r.race))).toEqual(new Set([records[0]!.id]));
      expect(new Set(records.map((r) => r.base)).size).toBe(1);
      expect(records[2]!.message).toContain(`episode ${records[1]!.id} won the race`);
      expect(summary).toMatchObject({ episodes: 3, accepted: 1, failed: 1, outrun: 1 });
      const stats = await genesis(['stats', '--world', f.world.path, '--json']);
      expect(JSON.parse(stats.stdout).races).toEqual({ races: 1, decided: 1, byAgent: [{ agent: 'script', model: null, raced: 1, won: 1 }] });
      expect((await genesis(['stats', '--world', f.world.path])).stdout).toMatch(/Races: +1 \(1 won by a racer\)/);
    },
    120_000,
  );

  itWith('bwrap')(
    'keeps the work of a racer that passed too late in the ledger, outrun, when race.stopOnWin is off',
    async () => {
      const f = await makeWorld({
        sandbox: 'bwrap',
        manifest: baseManifest({
          parallelism: 2,
          agent: { kind: 'script', script: '.genesis/recording.yaml', timeoutSec: 30, race: 2 },
          race: { stopOnWin: false },
          tasks: ONLY_A,
        }),
        recording: { a: [{ write: { 'src/a.js': GOOD_A } }, { write: { 'src/a.js': `${GOOD_A}// slower\n` }, sleepMs: 2_000 }] },
      });
      const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
      expect(summary.stop.kind).toBe('done');
      const ledger = new GitLedger(f.world.path);
      const records = (await ledger.readAll()).sort((x, y) => x.attempt - y.attempt);
      expect(records.map((r) => [r.attempt, r.outcome])).toEqual([
        [1, 'accepted'],
        [2, 'outrun'],
      ]);
      // It ran to its end: its change passed its own gate and stays in the ledger.
      expect(records[1]).toMatchObject({ gate: { ok: true }, changedFiles: ['src/a.js'] });
      expect((await ledger.readArtifacts(records[1]!.id)).diff).toContain('// slower');
    },
    120_000,
  );
});
