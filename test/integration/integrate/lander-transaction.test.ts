import { describe, expect } from 'vitest';
import { newEpisodeId } from '../../../src/episode/episode-job.js';
import { Lander } from '../../../src/integrate/lander.js';
import { openEpisodeRecord, type EpisodeRecord } from '../../../src/ledger/episode-record.js';
import { git, gitValue } from '../../../src/git/git.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { itWith } from '../../helpers/services.js';
import { makeWorld, type FixtureWorld } from '../../helpers/world-fixture.js';

/** A candidate on the world's first commit whose own gate passed, as a worker leaves it in the ledger. */
async function passed(f: FixtureWorld, fields: Partial<EpisodeRecord> = {}): Promise<{ id: string; candidate: string }> {
  const env = { GIT_INDEX_FILE: `${f.world.scratchDir}-lander.index` };
  await git(['read-tree', f.commit], { cwd: f.world.path, env });
  const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: f.world.path, input: 'export const a = 1;\n' });
  await git(['update-index', '--add', '--cacheinfo', `100644,${blob},src/a.js`], { cwd: f.world.path, env });
  const candidate = await f.world.commitTree(await gitValue(['write-tree'], { cwd: f.world.path, env }), [f.commit], 'a: module a\n\nGenesis-Task: a\n');
  const id = newEpisodeId();
  const record: EpisodeRecord = {
    ...openEpisodeRecord({ id, world: 'fixture', task: 'a', attempt: 1, agent: 'test', base: f.commit, worker: 'test' }),
    candidate,
    changedFiles: ['src/a.js'],
    gate: { ok: true, sandbox: 'bwrap', summary: 'passed', steps: [], durationMs: 1 },
    ...fields,
  };
  await new GitLedger(f.world.path).write(record);
  return { id, candidate };
}

describe('the lander moves the branch and the landing record together', () => {
  itWith('bwrap')('lands: the branch names the commit and the record names the branch, written in one ref transaction', async () => {
    const f = await makeWorld({ sandbox: 'bwrap', recording: {} });
    const ledger = new GitLedger(f.world.path);
    const { id, candidate } = await passed(f);
    const outcome = await new Lander(f.world, ledger, 'main', f.commit).land({
      change: { id, task: 'a', base: f.commit, candidate } as never,
      commit: candidate,
      expected: f.commit,
      verifiedOn: null,
      generation: 1,
      verificationId: id,
      startedAt: performance.now(),
    });
    expect(outcome).toMatchObject({ landed: true });
    expect(await f.world.head('main')).toBe(candidate);
    expect(await ledger.read(id)).toMatchObject({ status: 'final', outcome: 'accepted', commit: candidate });
    // The record keeps what the worker stored (its parent is the candidate, as every ledger write makes it).
    expect(await gitValue(['rev-parse', `refs/genesis/episodes/${id}^1`], { cwd: f.world.path })).toBe(candidate);
    await git(['fsck', '--strict', '--no-dangling'], { cwd: f.world.path });
  });

  itWith('bwrap')('loses the compare-and-swap: neither the branch nor the record moves', async () => {
    const f = await makeWorld({ sandbox: 'bwrap', recording: {} });
    const ledger = new GitLedger(f.world.path);
    const { id, candidate } = await passed(f);
    const before = await gitValue(['rev-parse', `refs/genesis/episodes/${id}`], { cwd: f.world.path });
    // The queue believes the branch is at the candidate's own commit: the swap from there must fail.
    const outcome = await new Lander(f.world, ledger, 'main', f.commit).land({
      change: { id, task: 'a', base: f.commit, candidate } as never,
      commit: candidate,
      expected: candidate,
      verifiedOn: null,
      generation: 1,
      verificationId: id,
      startedAt: performance.now(),
    });
    expect(outcome).toEqual({ landed: false, moved: true, head: f.commit });
    expect(await f.world.head('main')).toBe(f.commit);
    expect(await gitValue(['rev-parse', `refs/genesis/episodes/${id}`], { cwd: f.world.path })).toBe(before);
    expect(await ledger.read(id)).toMatchObject({ status: 'running', commit: null });
  });

  itWith('bwrap')('lands nothing of a change handed to the queue unjudged without a verification of the commit', async () => {
    const f = await makeWorld({ sandbox: 'bwrap', recording: {} });
    const ledger = new GitLedger(f.world.path);
    // Its own gate failed on a tip rebuilt under it: only the queue's verification can land it.
    const { id, candidate } = await passed(f, { handedOver: true, gate: { ok: false, sandbox: 'bwrap', summary: '1 failed', steps: [], durationMs: 1 } });
    const land = (verifiedOn: string | null) =>
      new Lander(f.world, ledger, 'main', f.commit).land({
        change: { id, task: 'a', base: f.commit, candidate } as never,
        commit: candidate,
        expected: f.commit,
        verifiedOn,
        generation: 2,
        verificationId: `${id}-v2`,
        startedAt: performance.now(),
      });
    expect(await land(null)).toMatchObject({ landed: false, reason: 'unverified-result', message: expect.stringMatching(/no passing gate record/) });
    expect(await land(f.commit)).toMatchObject({
      landed: false,
      reason: 'unverified-result',
      message: expect.stringMatching(/no passing verification record/),
    });
    expect(await f.world.head('main')).toBe(f.commit);
    expect(await ledger.read(id)).toMatchObject({ status: 'running' });
  });
});
