import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect } from 'vitest';
import { judgeSimWorld } from '../../../../src/agents/sim/hidden-check.js';
import { replaySimRun } from '../../../../src/agents/sim/replay.js';
import { runEmbedded } from '../../../../src/compose/embedded-run.js';
import { initWorld } from '../../../../src/operations/init-world.js';
import { GitLedger } from '../../../../src/ledger/git-ledger.js';
import { ledgerOf } from '../../../../src/ledger/git-ledger.js';
import { readWorldHold } from '../../../../src/schedule/run/carry-out/world-hold.js';
import { itWith } from '../../../helpers/services.js';
import { tempDir } from '../../../helpers/temp-dir.js';
import { bwrapSandbox, runSimFixture } from './sim-fixture.js';

// Each test runs real worlds; a loaded machine can make them several times slower than idle.
const SLOW = 120_000;
const TEMPLATE = fileURLToPath(new URL('../../../../worlds/sim-chain', import.meta.url));

async function episodes(path: string) {
  return (await new GitLedger(path).readAll()).map((e) => [e.task, e.attempt, e.outcome, e.reason]);
}

describe('a sim-chain world under the real orchestrator', () => {
  itWith('bwrap')(
    'holds the world through a usage limit and retries an overloaded model, uncharged, then lands the step',
    async () => {
      const { world, summary } = await runSimFixture({
        steps: 1,
        e: 0,
        w: 0,
        f: 0,
        attempts: 1,
        refusals: [{ kind: 'usage-limit', resetSec: 2 }, { kind: 'overloaded' }],
      });
      expect(summary).toMatchObject({ stop: { kind: 'done' }, accepted: 1, abandoned: 2, failed: 0 });
      const episodes = await ledgerOf(world).readAll();
      expect(episodes.map((e) => [e.outcome, e.reason, e.attempt])).toEqual([
        ['abandoned', 'agent-usage-limit', 1],
        ['abandoned', 'agent-overloaded', 1],
        ['accepted', null, 1],
      ]);
      // The second episode started only after the limit's reset.
      expect(Date.parse(episodes[1]!.startedAt) - Date.parse(episodes[0]!.endedAt!)).toBeGreaterThanOrEqual(1000);
      // The run wrote the hold where genesis status --world and the dashboard read it; it has passed since.
      expect(await readWorldHold(world.scratchDir, Date.parse(episodes[0]!.endedAt!))).toMatchObject({ message: expect.stringContaining('429 (simulated)') });
      expect(await readWorldHold(world.scratchDir)).toBeNull();
    },
    SLOW,
  );

  itWith('bwrap')(
    'stops at refused credentials with agent-auth-failed, the circuit open',
    async () => {
      const { summary } = await runSimFixture({ steps: 2, e: 0, w: 0, f: 0, refusals: [{ kind: 'auth' }] });
      expect(summary).toMatchObject({ stop: { kind: 'circuit-open', reason: 'agent-auth-failed' }, accepted: 0 });
    },
    SLOW,
  );

  itWith('bwrap')(
    'is done in one episode per step when the agent never errs, and the hidden check passes',
    async () => {
      const { world, summary } = await runSimFixture({ steps: 3, e: 0, w: 0, f: 0 });
      expect(summary).toMatchObject({ stop: { kind: 'done' }, accepted: 3, episodes: 3 });
      expect(await judgeSimWorld(world)).toEqual({ steps: 3, done: 3, wrong: [], success: true });
      expect(await world.readFile('main', 'steps/t03.txt')).toMatch(/^answer: 6\n/);
    },
    SLOW,
  );

  itWith('bwrap')(
    'accepts wrong answers the check misses, and only the hidden check sees them',
    async () => {
      const { world, summary } = await runSimFixture({ steps: 2, e: 0, w: 1, d: 0, f: 0 });
      expect(summary).toMatchObject({ stop: { kind: 'done' }, accepted: 2, rejected: 0 });
      expect(await judgeSimWorld(world)).toEqual({ steps: 2, done: 2, wrong: ['t01', 't02'], success: false });
    },
    SLOW,
  );

  itWith('bwrap')(
    'rejects a caught wrong answer in the gate and blocks the step after maxAttempts, which stops the run',
    async () => {
      const { world, summary } = await runSimFixture({ steps: 3, e: 0, w: 1, d: 1, f: 0, attempts: 2 });
      expect(summary.stop).toMatchObject({ kind: 'blocked', blocked: [{ task: 't01', reason: 'test-failed' }] });
      expect(await episodes(world.path)).toEqual([
        ['t01', 1, 'rejected', 'test-failed'],
        ['t01', 2, 'rejected', 'test-failed'],
      ]);
      expect((await new GitLedger(world.path).readAll())[0]!.message).toContain('t01 last digit');
    },
    SLOW,
  );

  itWith('bwrap')(
    'records a visible error as a failed episode and retries it',
    async () => {
      const { world, summary } = await runSimFixture({ steps: 2, e: 1, w: 0, f: 0, attempts: 2 });
      expect(summary.stop.kind).toBe('blocked');
      expect(await episodes(world.path)).toEqual([
        ['t01', 1, 'failed', 'agent-exit'],
        ['t01', 2, 'failed', 'agent-exit'],
      ]);
    },
    SLOW,
  );

  itWith('bwrap')(
    "rejects a right answer when the world's brittle check misjudges it, in the gate",
    async () => {
      const { world } = await runSimFixture({ steps: 2, e: 0, w: 0, f: 1, attempts: 1 });
      const [only] = await new GitLedger(world.path).readAll();
      expect(only).toMatchObject({ task: 't01', outcome: 'rejected', reason: 'test-failed' });
      expect(only!.message).toContain('t01 brittle');
    },
    SLOW,
  );

  itWith('bwrap')(
    'does exactly what the replay of its draws and checks says, run after run',
    async () => {
      for (const seed of [11, 12]) {
        const options = { steps: 3, e: 0.25, w: 0.25, d: 0.5, f: 0.2, attempts: 2, seed };
        const { world, summary } = await runSimFixture(options);
        const replay = replaySimRun(options);
        const judgement = await judgeSimWorld(world);
        expect({ episodes: summary.episodes, done: judgement.done, wrong: judgement.wrong.length, success: judgement.success }, `seed ${seed}`).toEqual({
          episodes: replay.episodes,
          done: replay.done,
          wrong: replay.wrong,
          success: replay.success,
        });
      }
    },
    SLOW,
  );

  itWith('bwrap')(
    'starts from worlds/sim-chain as genesis init --from does, and runs it to its end',
    async () => {
      const root = await tempDir('genesis-sim-');
      const sandbox = await bwrapSandbox();
      const { world } = await initWorld({ worldPath: join(root, 'w.world'), from: TEMPLATE, sandbox: async () => sandbox });
      const summary = await runEmbedded({ world, sandbox });
      const replay = replaySimRun({});
      expect(summary.episodes).toBe(replay.episodes);
      expect((await judgeSimWorld(world)).success).toBe(replay.success);
    },
    SLOW,
  );
});
