import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect } from 'vitest';
import { createAgent } from '../../../src/agents/create-agent.js';
import { newEpisodeId, type EpisodeJob, type EpisodeResult } from '../../../src/episode/episode-job.js';
import { runEpisode } from '../../../src/episode/run-episode.js';
import { createWorkspace, removeClosedEpisodeDirs, removeStaleWorkspaces, removeWorkspace } from '../../../src/episode/workspace.js';
import { workerError } from '../../../src/queue/memory/memory-queue.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { openRecord } from '../../helpers/open-record.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, GOOD_A, makeWorld, type FixtureWorld } from '../../helpers/world-fixture.js';

/** One run of the job as a BullMQ worker runs it: an error becomes the result the scheduler sees. */
async function runOnce(f: FixtureWorld, job: EpisodeJob, worker: string, onPhase?: (phase: string) => void): Promise<EpisodeResult> {
  const manifest = await f.world.manifestAt(job.base);
  const agent = await createAgent(manifest, f.world, job.base);
  return runEpisode(job, { world: f.world, ledger: new GitLedger(f.world.path), sandbox: f.sandbox, agent, worker, onPhase: (_j, p) => onPhase?.(p) }).catch(
    (error: unknown) => workerError(job, error),
  );
}

describe('two runners of one episode (a job handed out again while its first run still works)', () => {
  itWith('bwrap')(
    'each gates in a scratch dir of its own: the second starting its gate in the middle of the first one breaks neither',
    async () => {
      // The gate's test step sleeps 2 s, so the second runner's gate starts while the first one's test runs.
      const f = await makeWorld({
        sandbox: 'bwrap',
        manifest: baseManifest({
          verify: { sandbox: 'bwrap', test: 'sleep 2 && node --test test/base.test.js', timeoutSec: 60, limits: { cpus: 1, memoryMb: 256, pids: 64 } },
        }),
        recording: { a: [{ write: { 'src/a.js': GOOD_A }, sleepMs: 200 }] },
      });
      const id = newEpisodeId();
      const job: EpisodeJob = { episodeId: id, world: 'fixture', task: 'a', attempt: 1, base: f.commit };
      await new GitLedger(f.world.path).write(openRecord(job));
      const second: { run?: Promise<EpisodeResult> } = {};
      const first = runOnce(f, job, 'first', (phase) => {
        // 0.6 s into the first gate, plus the second runner's workspace and agent: its gate starts mid-test of the first.
        if (phase === 'gate') second.run = sleep(600).then(() => runOnce(f, job, 'second'));
      });
      const one = await first;
      expect(second.run).toBeDefined();
      const two = await second.run!;
      for (const r of [one, two]) {
        expect(r.fatal ?? false).toBe(false);
        expect(r).toMatchObject({ verdict: 'passed', reason: null });
      }
      // Nothing of either run is left in the world's scratch space.
      expect(await readdir(join(f.world.scratchDir, 'gates')).catch(() => [])).toEqual([]);
      expect(await readdir(join(f.world.scratchDir, 'episodes')).catch(() => [])).toEqual([]);
    },
    120_000,
  );

  itWith('bwrap')('gets a workspace of its own: making the second does not touch the first, and stale clean-up finds both', async () => {
    const f = await makeWorld({ sandbox: 'bwrap', recording: {} });
    const id = newEpisodeId();
    const one = await createWorkspace(f.world, id, f.commit);
    const two = await createWorkspace(f.world, id, f.commit);
    expect(two.episodeDir).not.toBe(one.episodeDir);
    expect((await readdir(one.dir)).sort()).toContain('world.yaml');
    await removeWorkspace(two);
    expect((await readdir(one.dir)).sort()).toContain('world.yaml');
    // A crash leaves the first (and a gate dir of the same episode): a run starting on this machine removes them, unless kept.
    const kept = await createWorkspace(f.world, 'kept-episode', f.commit);
    expect(await removeStaleWorkspaces(f.world, new Set(['kept-episode']))).toBe(1);
    expect(await readdir(join(f.world.scratchDir, 'episodes'))).toEqual([kept.episodeDir.split('/').at(-1)]);
    await removeWorkspace(kept);
  });

  itWith('bwrap')("leaves to a distributed run's clean-up only what runs of closed episodes left", async () => {
    const f = await makeWorld({ sandbox: 'bwrap', recording: {} });
    const [closed, open] = [newEpisodeId(), newEpisodeId()];
    const closedRun = await createWorkspace(f.world, closed, f.commit);
    const openRun = await createWorkspace(f.world, open, f.commit);
    const gates = join(f.world.scratchDir, 'gates');
    const gateDirs = [`${closed}+0a0b0c0d`, `${closed}+0a0b0c0d.tree`, `${closed}-v2+01020304-head`, `${open}+0e0f1011`, 'init'];
    for (const d of gateDirs) await mkdir(join(gates, d), { recursive: true });
    expect(await removeClosedEpisodeDirs(f.world, (id) => id === closed)).toBe(4);
    expect(await readdir(join(f.world.scratchDir, 'episodes'))).toEqual([openRun.episodeDir.split('/').at(-1)]);
    expect((await readdir(gates)).sort()).toEqual([`${open}+0e0f1011`, 'init']);
    expect(closedRun.episodeDir).not.toBe(openRun.episodeDir);
    await removeWorkspace(openRun);
  });
});
