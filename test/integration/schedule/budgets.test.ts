import { describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { startCli } from '../../helpers/cli-process.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, makeWorld, type RecordingSteps } from '../../helpers/world-fixture.js';

const TASKS = ['t1', 't2', 't3', 't4', 't5', 't6'];

function sleepyWorld(sleepMs: number, stop: Record<string, number>, parallelism: number) {
  const recording: RecordingSteps = {};
  for (const t of TASKS) recording[t] = [{ write: { [`src/${t}.js`]: 'export {};\n' }, sleepMs }];
  const manifest = baseManifest({
    goal: { outcome: 'x', stop },
    parallelism,
    tasks: TASKS.map((t) => ({ id: t, title: t, paths: [`src/${t}.js`] })),
  });
  return makeWorld({ sandbox: 'bwrap', manifest, recording });
}

describe('budgets are hard', () => {
  itWith('bwrap')('never starts more than 3 episodes with a budget of 3, even with parallelism 4', async () => {
    const f = await sleepyWorld(300, { maxEpisodes: 3 }, 4);
    let running = 0;
    let most = 0;
    const summary = await runEmbedded({
      world: f.world,
      sandbox: f.sandbox,
      onEvent: (e) => {
        if (e.type === 'episode-start') most = Math.max(most, ++running);
        if (e.type === 'episode-end') running--;
      },
    });
    expect(summary.stop).toMatchObject({ kind: 'budget', budget: 'maxEpisodes', limit: 3 });
    expect(await new GitLedger(f.world.path).readAll()).toHaveLength(3);
    expect(most).toBe(3);
    const again = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(again.episodes).toBe(0);
    expect(await new GitLedger(f.world.path).readAll()).toHaveLength(3);
  });

  itWith('bwrap')('counts maxHours from the first episode across a killed run and its restart', async () => {
    // 6 s of budget; each episode takes ~1.5 s, one at a time.
    const f = await sleepyWorld(1500, { maxHours: 6 / 3600 }, 1);
    const first = startCli(['run', '--world', f.world.path, '--json']);
    await first.waitFor(/"type":"episode-end"/, 30_000);
    first.child.kill('SIGKILL');
    await first.exited;
    const restarted = Date.now();
    const second = startCli(['run', '--world', f.world.path, '--json']);
    expect(await second.exited).toBe(4);
    const summary = JSON.parse(second.lines.find((l) => l.includes('"type":"summary"'))!) as { stop: { kind: string; budget: string } };
    expect(summary.stop).toMatchObject({ kind: 'budget', budget: 'maxHours' });
    const episodes = await new GitLedger(f.world.path).readAll();
    const span = Date.parse(episodes.at(-1)!.endedAt!) - Date.parse(episodes[0]!.startedAt);
    // Stopped about 6 s after the first episode began, not 6 s after the restart.
    expect(span).toBeLessThan(6_000 + 4_000);
    expect(Date.now() - restarted).toBeLessThan(12_000);
    expect(episodes.every((e) => e.status === 'final')).toBe(true);
  });
});
