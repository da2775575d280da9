import { describe, expect } from 'vitest';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { startCli } from '../../helpers/cli-process.js';
import { checkWorldInvariants, fastClusterEnv } from '../../helpers/distributed-world.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, GOOD_A, makeWorld } from '../../helpers/world-fixture.js';

const REDIS = 'redis://127.0.0.1:6379';
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms))]);
const SLOW_AGENT_MS = 60_000;

/** Task a raced by two: racer 1 passes after `winnerMs`, racer 2's agent would work for a minute. */
function raceWorld(winnerMs: number) {
  return makeWorld({
    sandbox: 'bwrap',
    manifest: baseManifest({
      parallelism: 2,
      // Long enough that only a stop, not the agent's timeout, ends the slow racer early.
      agent: { kind: 'script', script: '.genesis/recording.yaml', timeoutSec: 180 },
      tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js', race: 2 }],
    }),
    recording: {
      a: [
        { write: { 'src/a.js': GOOD_A }, sleepMs: winnerMs },
        { write: { 'src/a.js': `${GOOD_A}// slow\n` }, sleepMs: SLOW_AGENT_MS },
      ],
    },
  });
}

describe('a race on remote workers', () => {
  itWith('redis')(
    'stops the losing racer on its worker once the race is decided: the run ends long before its agent would have',
    async () => {
      // Racer 1 passes at once.
      const f = await raceWorld(0);
      const env = fastClusterEnv();
      // One episode each: the two racers run on two workers.
      const workers = [0, 1].map(() => startCli(['worker', '--redis', REDIS, '--json', '--concurrency', '1'], env));
      await Promise.all(workers.map((w) => w.waitFor(/"type":"ready"/)));
      const started = Date.now();
      const run = startCli(['run', '--world', f.world.path, '--redis', REDIS, '--json'], env);
      expect(await within(run.exited, 90_000), `${run.lines.join('\n')}\n${run.stderr()}`).toBe(0);
      expect(Date.now() - started).toBeLessThan(SLOW_AGENT_MS - 15_000);

      const records = (await new GitLedger(f.world.path).readAll()).sort((x, y) => x.attempt - y.attempt);
      expect(records.map((r) => [r.attempt, r.outcome, r.reason])).toEqual([
        [1, 'accepted', null],
        [2, 'outrun', 'outrun'],
      ]);
      expect(records[1]!.message).toContain(`episode ${records[0]!.id} won the race`);
      // Each worker took one racer, and the loser's worker stopped its agent: the episode came back abandoned, not run out.
      for (const w of workers) expect(w.lines.filter((l) => l.includes('"type":"start"'))).toHaveLength(1);
      const ends = workers.flatMap((w) =>
        w.lines.filter((l) => l.includes('"type":"end"')).map((l) => JSON.parse(l) as { episodeId: string; verdict: string }),
      );
      expect(Object.fromEntries(ends.map((e) => [e.episodeId, e.verdict]))).toEqual({ [records[0]!.id]: 'passed', [records[1]!.id]: 'abandoned' });
      expect(await checkWorldInvariants(f, ['a'])).toEqual([]);
      for (const w of workers) w.child.kill('SIGTERM');
    },
    150_000,
  );

  itWith('redis')(
    'a scheduler killed before it could stop the loser stops it when it restarts: the race was decided while no scheduler ran',
    async () => {
      // Racer 1 passes a few seconds in, after the scheduler is gone.
      const f = await raceWorld(4000);
      const env = fastClusterEnv();
      const workers = [0, 1].map(() => startCli(['worker', '--redis', REDIS, '--json', '--concurrency', '1'], env));
      try {
        await Promise.all(workers.map((w) => w.waitFor(/"type":"ready"/)));
        const first = startCli(['run', '--world', f.world.path, '--redis', REDIS, '--json'], env);
        await Promise.all(workers.map((w) => w.waitFor(/"type":"start"/)));
        first.child.kill('SIGKILL');
        await first.exited;
        // The winner's gate passes with no scheduler to hear it: nobody stops the loser.
        await Promise.race(workers.map((w) => w.waitFor(/"type":"end".*"verdict":"passed"/)));
        const started = Date.now();
        const again = startCli(['run', '--world', f.world.path, '--redis', REDIS, '--json'], env);
        expect(await within(again.exited, 90_000), `${again.lines.join('\n')}\n${again.stderr()}`).toBe(0);
        expect(Date.now() - started).toBeLessThan(SLOW_AGENT_MS - 15_000);
        const records = (await new GitLedger(f.world.path).readAll()).sort((x, y) => x.attempt - y.attempt);
        expect(records.map((r) => [r.attempt, r.outcome])).toEqual([
          [1, 'accepted'],
          [2, 'outrun'],
        ]);
        const ends = workers.flatMap((w) =>
          w.lines.filter((l) => l.includes('"type":"end"')).map((l) => JSON.parse(l) as { episodeId: string; verdict: string }),
        );
        expect(ends.find((e) => e.episodeId === records[1]!.id)?.verdict).toBe('abandoned');
        expect(await checkWorldInvariants(f, ['a'])).toEqual([]);
      } finally {
        for (const w of workers) w.child.kill('SIGTERM');
      }
    },
    150_000,
  );
});
