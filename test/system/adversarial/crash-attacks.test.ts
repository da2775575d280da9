import { describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { startCli } from '../../helpers/cli-process.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

/**
 * A change whose gate takes `genesis run` down (a report that runs it out of memory did, before
 * reports were bounded): the crashed episode is nobody's failure the first time, so without more
 * every next run takes the same episode up and dies the same way. Here the run is killed while
 * the gate of task a runs, twice; task b's agent is at work each time.
 */
describe('a gate that takes the orchestrator down', () => {
  itWith('bwrap')('is charged and its task blocked the second time in a row, and the next run lands the rest', async () => {
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest: baseManifest({
        parallelism: 2,
        retry: { maxAttempts: 5 },
        verify: { sandbox: 'bwrap', test: 'sleep 3 && node --test test/base.test.js', timeoutSec: 60, limits: { cpus: 1, memoryMb: 256, pids: 64 } },
      }),
      recording: {
        a: [1, 2, 3, 4].map(() => ({ write: { 'src/a.js': GOOD_A } })),
        b: [1, 2, 3].map(() => ({ write: { 'src/b.js': GOOD_B }, sleepMs: 6_000 })),
      },
    });
    for (let crash = 1; crash <= 2; crash++) {
      const run = startCli(['run', '--world', f.world.path, '--json']);
      await run.waitFor(/"type":"episode-phase".*"task":"a".*"phase":"gate"/, 120_000);
      run.child.kill('SIGKILL');
      await run.exited;
    }
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    const episodes = await new GitLedger(f.world.path).readAll();
    const of = (task: string) => episodes.filter((e) => e.task === task).map((e) => [e.outcome, e.reason]);
    expect(of('a')).toEqual([
      ['abandoned', 'gate-crashed'],
      ['failed', 'poison-pill'],
    ]);
    // b's agent was working when the run died: not its gate, not its failure; it landed after.
    expect(of('b').at(-1)).toEqual(['accepted', null]);
    expect(
      of('b')
        .slice(0, -1)
        .every(([outcome, reason]) => outcome === 'abandoned' && reason === 'orchestrator-stopped'),
    ).toBe(true);
    expect(summary.stop.kind).toBe('blocked');
    expect(await f.world.readFile('main', 'src/b.js')).toBe(GOOD_B);
  });
});
