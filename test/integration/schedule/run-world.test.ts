import { describe, expect } from 'vitest';
import { runGate } from '../../../src/gate/gate.js';
import { planGate } from '../../../src/gate/plan.js';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { openEpisodeRecord } from '../../../src/ledger/episode-record.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { git, gitValue } from '../../../src/git/git.js';
import { newEpisodeId } from '../../../src/episode/episode-job.js';
import { itWith } from '../../helpers/services.js';
import { BAD_A, baseManifest, GOOD_A, GOOD_B, makeWorld, type FixtureWorld } from '../../helpers/world-fixture.js';

async function history(f: FixtureWorld) {
  return readAcceptedHistory(f.world.path, 'main');
}

describe('genesis run on a real world', () => {
  itWith('docker')('never lands a change that breaks the tests, and blocks the task after its attempts', async () => {
    const f = await makeWorld({ recording: { a: [{ write: { 'src/a.js': BAD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] } });
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary.stop.kind).toBe('blocked');
    const commits = await history(f);
    expect(commits.map((c) => c.task)).toEqual(['b', null]);
    const episodes = await new GitLedger(f.world.path).readAll();
    const ofA = episodes.filter((e) => e.task === 'a');
    expect(ofA.map((e) => [e.attempt, e.outcome, e.reason])).toEqual([
      [1, 'rejected', 'check-failed'],
      [2, 'rejected', 'check-failed'],
    ]);
    expect(summary.stop).toMatchObject({ blocked: [{ task: 'a', reason: 'check-failed' }] });
  });

  itWith('bwrap')('closes again at its end a record a duplicate worker reopened after the run closed it', async () => {
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest: baseManifest({ parallelism: 1 }),
      recording: { a: [{ write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] },
    });
    const ledger = new GitLedger(f.world.path);
    let reopening: Promise<void> | null = null;
    const summary = await runEmbedded({
      world: f.world,
      sandbox: f.sandbox,
      onEvent: (event) => {
        // As a worker running a duplicate of the first episode would, after the run closed it (the second runs after).
        if (event.type !== 'episode-end' || reopening !== null) return;
        reopening = ledger.read(event.id).then((closed) => ledger.write({ ...closed!, status: 'running', outcome: null, endedAt: null }));
      },
    });
    expect(summary.stop.kind).toBe('done');
    await reopening;
    expect((await ledger.readAll()).map((e) => [e.task, e.status, e.outcome])).toEqual([
      ['a', 'final', 'accepted'],
      ['b', 'final', 'accepted'],
    ]);
  });

  itWith('docker')('rejects a change to a protected test even when the tests would pass', async () => {
    const cheat = { 'src/a.js': BAD_A, 'test/a.test.js': "import test from 'node:test';\ntest('ok', () => {});\n" };
    const f = await makeWorld({ recording: { a: [{ write: cheat }, { write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] } });
    await runEmbedded({ world: f.world, sandbox: f.sandbox });
    const [first] = (await new GitLedger(f.world.path).readAll()).filter((e) => e.task === 'a');
    expect(first).toMatchObject({ outcome: 'rejected', reason: 'protected-path' });
    expect(first!.message).toContain('test/a.test.js');
    expect(await f.world.readFile('main', 'test/a.test.js')).toContain("assert.equal(a(), 'a')");
  });

  itWith('docker')("rejects a change outside the task's paths", async () => {
    const f = await makeWorld({
      recording: { a: [{ write: { 'src/a.js': GOOD_A, 'src/b.js': GOOD_B } }, { write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] },
    });
    await runEmbedded({ world: f.world, sandbox: f.sandbox });
    const [first] = (await new GitLedger(f.world.path).readAll()).filter((e) => e.task === 'a');
    expect(first).toMatchObject({ outcome: 'rejected', reason: 'outside-paths' });
    expect(first!.message).toContain('src/b.js');
  });

  itWith('docker')('lands two episodes on disjoint paths that ran at the same time, keeping the history linear', async () => {
    const f = await makeWorld({ recording: { a: [{ write: { 'src/a.js': GOOD_A }, sleepMs: 300 }], b: [{ write: { 'src/b.js': GOOD_B }, sleepMs: 300 }] } });
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary.stop.kind).toBe('done');
    const episodes = await new GitLedger(f.world.path).readAll();
    expect(episodes.map((e) => e.base)).toEqual([f.commit, f.commit]);
    const commits = await history(f);
    expect(commits.map((c) => c.task).sort()).toEqual(['a', 'b', null].sort());
    for (const c of commits) expect(c.parents.length).toBeLessThanOrEqual(1);
    // The second to finish its agent took its place behind the first and was gated on it: one gate each, no replay.
    expect(episodes.filter((e) => e.reason === 'replayed')).toHaveLength(0);
    const landed = commits.filter((c) => c.episode).reverse();
    expect(episodes.find((e) => e.id === landed[1]!.episode)!.gatedOn).toBe(landed[0]!.commit);
  });

  itWith('bwrap')('passes its tests again at every accepted commit when checked out afresh', async () => {
    const f = await makeWorld({
      sandbox: 'bwrap',
      recording: { a: [{ write: { 'src/a.js': BAD_A } }, { write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] },
    });
    await runEmbedded({ world: f.world, sandbox: f.sandbox });
    const commits = await history(f);
    expect(commits).toHaveLength(3);
    for (const [i, c] of commits.entries()) {
      const manifest = await f.world.manifestAt(c.commit);
      // History is newest first: the tasks done at commit i are those of commits i and older.
      const done = new Set(commits.slice(i).flatMap((o) => (o.task ? [o.task] : [])));
      const steps = planGate(manifest, null, done);
      // The suite and every done task's check (checks one runner can run together share a step: check:a+b).
      const checked = steps.filter((s) => s.name.startsWith('check:')).flatMap((s) => s.name.slice('check:'.length).split('+'));
      expect(steps[0]?.name).toBe('test');
      expect(checked.sort()).toEqual([...done].sort());
      const verdict = await runGate({
        repo: f.world.path,
        tree: await f.world.treeOf(c.commit),
        steps,
        manifest,
        sandbox: f.sandbox,
        workDir: `${f.world.scratchDir}/gates/recheck`,
      });
      expect(verdict.ok, `${c.commit} ${verdict.log}`).toBe(true);
    }
  });

  itWith('docker')('stops at the episode budget and resumes where it left off when run again', async () => {
    const f = await makeWorld({
      manifest: baseManifest({ parallelism: 1, goal: { outcome: 'x', stop: { maxEpisodes: 1 } } }),
      recording: { a: [{ write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] },
    });
    const first = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(first.stop).toMatchObject({ kind: 'budget', budget: 'maxEpisodes', limit: 1 });
    expect(await history(f)).toHaveLength(2);
    const again = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(again.stop.kind).toBe('budget');
    expect(again.episodes).toBe(0);
  });

  itWith('docker')('lands, without running its task again, a change whose gate passed before the run was killed', async () => {
    const f = await makeWorld({ recording: { a: [{ write: { 'src/a.js': BAD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] } });
    // What a kill -9 leaves: a's episode ran its agent and gate, wrote its record, and the run died before integrating it.
    const env = { GIT_INDEX_FILE: `${f.world.scratchDir}-test.index` };
    await git(['read-tree', f.commit], { cwd: f.world.path, env });
    const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: f.world.path, input: GOOD_A });
    await git(['update-index', '--add', '--cacheinfo', `100644,${blob},src/a.js`], { cwd: f.world.path, env });
    const candidate = await f.world.commitTree(await gitValue(['write-tree'], { cwd: f.world.path, env }), [f.commit], 'candidate\n');
    const id = newEpisodeId();
    await new GitLedger(f.world.path).write({
      ...openEpisodeRecord({ id, world: 'fixture', task: 'a', attempt: 1, agent: 'script', base: f.commit, worker: 'dead:1' }),
      candidate,
      changedFiles: ['src/a.js'],
      gate: { ok: true, sandbox: 'docker', summary: 'passed before the crash', steps: [], durationMs: 1 },
    });
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary.stop.kind).toBe('done');
    const episodes = await new GitLedger(f.world.path).readAll();
    // The recording's a would write BAD_A: no episode of a ran again, the recovered change landed.
    expect(episodes.filter((e) => e.task === 'a').map((e) => [e.id, e.outcome])).toEqual([[id, 'accepted']]);
    expect(await f.world.readFile('main', 'src/a.js')).toBe(GOOD_A);
  });
});
