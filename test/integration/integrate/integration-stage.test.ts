import { describe, expect } from 'vitest';
import { auditWorld } from '../../../src/audit/audit-world.js';
import { newEpisodeId } from '../../../src/episode/episode-job.js';
import { waitForBaseline } from '../../../src/gate/test-baseline.js';
import { IntegrationStage, type IntegrationOutcome } from '../../../src/integrate/integration-stage.js';
import { Lander } from '../../../src/integrate/lander.js';
import { runVerification } from '../../../src/integrate/verification/run-verification.js';
import type { VerificationJob, VerificationResult } from '../../../src/queue/verification-job.js';
import { VerificationLedger } from '../../../src/integrate/verification/ledger.js';
import { MemoryVerificationQueue } from '../../../src/queue/memory/verification-queue.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { openEpisodeRecord, type EpisodeRecord } from '../../../src/ledger/episode-record.js';
import { git, gitValue } from '../../../src/git/git.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import type { WorldRepo } from '../../../src/world/world-repo.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld, type FixtureWorld } from '../../helpers/world-fixture.js';

const GOOD_C = "export const c = () => 'c';\n";
const threeTasks = () =>
  baseManifest({
    tasks: [
      { id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' },
      { id: 'b', title: 'module b', paths: ['src/b.js', 'package.json'], check: 'node --test test/b.test.js' },
      { id: 'c', title: 'module c', paths: ['src/c.js'] },
    ],
  });

/** A candidate commit on `base` that writes `files`, made with plumbing as a worker would. */
async function candidate(world: WorldRepo, base: string, files: Record<string, string>): Promise<string> {
  const env = { GIT_INDEX_FILE: `${world.scratchDir}-test.index` };
  await git(['read-tree', base], { cwd: world.path, env });
  for (const [path, content] of Object.entries(files)) {
    const sha = await gitValue(['hash-object', '-w', '--stdin'], { cwd: world.path, input: content });
    await git(['update-index', '--add', '--cacheinfo', `100644,${sha},${path}`], { cwd: world.path, env });
  }
  return world.commitTree(await gitValue(['write-tree'], { cwd: world.path, env }), [base], 'candidate\n');
}

/** An episode whose own gate passed its candidate, as a worker leaves it in the ledger. */
async function passedEpisode(
  f: FixtureWorld,
  task: string,
  files: Record<string, string>,
): Promise<{ id: string; task: string; candidate: string; base: string }> {
  const id = newEpisodeId();
  const cand = await candidate(f.world, f.commit, files);
  const record: EpisodeRecord = {
    ...openEpisodeRecord({ id, world: 'fixture', task, attempt: 1, agent: 'test', base: f.commit, worker: 'test' }),
    candidate: cand,
    changedFiles: Object.keys(files),
    gate: { ok: true, sandbox: 'docker', summary: 'its own gate passed', steps: [], durationMs: 1 },
  };
  await new GitLedger(f.world.path).write(record);
  return { id, task, candidate: cand, base: f.commit };
}

function stageFor(f: FixtureWorld, handler?: (job: VerificationJob) => Promise<VerificationResult>) {
  const ledger = new GitLedger(f.world.path);
  const outcomes: IntegrationOutcome[] = [];
  const jobs: VerificationJob[] = [];
  const verify = handler ?? ((job: VerificationJob) => runVerification(job, { world: f.world, sandbox: f.sandbox, worker: 'test' }));
  const verifications = new MemoryVerificationQueue(async (job) => {
    jobs.push(job);
    return verify(job);
  }, 3);
  let wanted = 0;
  let wake: () => void = () => {};
  const stage = new IntegrationStage({
    world: f.world,
    ledger,
    lander: new Lander(f.world, ledger, 'main', f.commit),
    verifications,
    slots: 3,
    head: f.commit,
    worldName: 'fixture',
    onOutcome: async (o) => {
      outcomes.push(o);
      if (outcomes.length >= wanted) wake();
    },
  });
  void (async () => {
    for (;;) await stage.verified(await verifications.nextResult());
  })();
  return {
    stage,
    outcomes,
    jobs,
    async until(count: number): Promise<IntegrationOutcome[]> {
      wanted = count;
      if (outcomes.length < count) await new Promise<void>((resolve) => (wake = resolve));
      return outcomes;
    },
  };
}

describe('the integration stage', () => {
  itWith('docker')('lands a change on its own base at once, as the very tree its episode gated, naming that tree', async () => {
    const f = await makeWorld({ recording: {} });
    const s = stageFor(f);
    const a = await passedEpisode(f, 'a', { 'src/a.js': GOOD_A });
    await s.stage.join(a);
    const [out] = await s.until(1);
    expect(out).toMatchObject({ type: 'landed', record: { outcome: 'accepted', reason: null } });
    expect(s.jobs).toEqual([]);
    const [head] = await readAcceptedHistory(f.world.path, 'main');
    expect(head).toMatchObject({ task: 'a', episode: a.id, verification: a.id, verified: 'its own gate passed' });
    expect(await f.world.treeOf(head!.commit)).toBe(await f.world.treeOf(a.candidate));
  });

  itWith('docker')('verifies changes on the tip ahead of them in parallel and lands each verified commit as it is', async () => {
    const f = await makeWorld({ manifest: threeTasks(), recording: {} });
    const s = stageFor(f);
    const changes = [
      await passedEpisode(f, 'a', { 'src/a.js': GOOD_A }),
      await passedEpisode(f, 'b', { 'src/b.js': GOOD_B }),
      await passedEpisode(f, 'c', { 'src/c.js': GOOD_C }),
    ];
    for (const c of changes) await s.stage.join(c);
    const outs = await s.until(3);
    expect(outs.map((o) => [o.type, o.record.task])).toEqual([
      ['landed', 'a'],
      ['landed', 'b'],
      ['landed', 'c'],
    ]);
    // b and c were each gated once, on the speculative commit ahead of them, and those commits landed.
    expect(s.jobs.map((j) => j.task)).toEqual(['b', 'c']);
    const history = await readAcceptedHistory(f.world.path, 'main');
    expect(history.map((c) => c.task)).toEqual(['c', 'b', 'a', null]);
    expect(history[0]!.commit).toBe(s.jobs[1]!.commit);
    expect(history[1]!.commit).toBe(s.jobs[0]!.commit);
    expect(s.jobs[1]!.onto).toBe(s.jobs[0]!.commit);
    const record = await new GitLedger(f.world.path).read(changes[2]!.id);
    expect(record).toMatchObject({
      outcome: 'accepted',
      reason: 'replayed',
      commit: history[0]!.commit,
      verification: { tree: await f.world.treeOf(history[0]!.commit) },
    });
    expect(record!.gate!.steps.map((st) => st.name)).toEqual(['test', 'check:a+b']);
    const report = await auditWorld({ world: f.world, sandbox: f.sandbox });
    expect(report.findings.filter((x) => x.severity === 'violation')).toEqual([]);
  });

  itWith('docker')('rejects the change that fails on its tip alone and lands those behind it, rebuilt without it', async () => {
    const f = await makeWorld({ manifest: threeTasks(), recording: {} });
    const s = stageFor(f);
    const a = await passedEpisode(f, 'a', { 'src/a.js': GOOD_A });
    // Passes on its own base, but turns the package to CommonJS: a's check fails once a is done.
    const breaking = await passedEpisode(f, 'b', { 'src/b.js': GOOD_B, 'package.json': '{ "type": "commonjs" }\n' });
    const c = await passedEpisode(f, 'c', { 'src/c.js': GOOD_C });
    for (const x of [a, breaking, c]) await s.stage.join(x);
    const outs = await s.until(3);
    expect(outs.map((o) => [o.type, o.record.task, o.record.reason])).toEqual(
      expect.arrayContaining([
        ['landed', 'a', null],
        ['rejected', 'b', expect.stringMatching(/^replay-/)],
        ['landed', 'c', 'replayed'],
      ]),
    );
    const history = await readAcceptedHistory(f.world.path, 'main');
    expect(history.map((x) => x.task)).toEqual(['c', 'a', null]);
    expect(await f.world.readFile('main', 'package.json')).toBe('{ "type": "module" }\n');
    // c was verified again on a's commit once b left the queue.
    expect(
      s.jobs
        .filter((j) => j.task === 'c')
        .map((j) => j.generation)
        .at(-1),
    ).toBe(2);
  });

  itWith('docker')('rejects a textual conflict when the change is built, without spending a gate', async () => {
    const f = await makeWorld({ recording: {} });
    const s = stageFor(f);
    await s.stage.join(await passedEpisode(f, 'a', { 'src/a.js': GOOD_A }));
    await s.stage.join(await passedEpisode(f, 'a', { 'src/a.js': "export const a = () => 'a'; // rival\n" }));
    const outs = await s.until(2);
    expect(outs.map((o) => [o.type, o.record.reason])).toEqual([
      ['landed', null],
      ['rejected', 'replay-conflict'],
    ]);
    expect(outs[1]!.record.message).toContain('src/a.js');
    expect(s.jobs).toEqual([]);
  });

  itWith('docker')('lands nothing on a "passed" verification the world holds no record of (a forged result)', async () => {
    const f = await makeWorld({ recording: {} });
    // A forger answers every verification with a pass, without running or recording a gate.
    const s = stageFor(f, async (job) => ({
      verificationId: job.verificationId,
      episodeId: job.episodeId,
      generation: job.generation,
      commit: job.commit,
      ok: true,
      reason: null,
      message: null,
      signature: null,
    }));
    const a = await passedEpisode(f, 'a', { 'src/a.js': GOOD_A });
    const b = await passedEpisode(f, 'b', { 'src/b.js': GOOD_B });
    await s.stage.join(a);
    await s.stage.join(b);
    const outs = await s.until(2);
    expect(outs.map((o) => [o.type, o.record.task, o.record.reason])).toEqual([
      ['landed', 'a', null],
      ['rejected', 'b', 'unverified-result'],
    ]);
    expect((await readAcceptedHistory(f.world.path, 'main')).map((x) => x.task)).toEqual(['a', null]);
    expect(await new VerificationLedger(f.world.path).read(s.jobs[0]!.verificationId)).toBeNull();
  });

  itWith('bwrap')(
    "tells the gates behind a reserved change that its tip's baseline will not come when its place is given up before its own gate reported",
    async () => {
      // a's worker died while it gated a on its reserved tip; b gates on a's tip and waits for that tip's baseline.
      const f = await makeWorld({ manifest: threeTasks(), recording: {}, sandbox: 'bwrap' });
      // No gate runs here: a verification the rebuilt queue asks for never ends (nothing writes into the world after the test).
      const s = stageFor(f, () => new Promise<never>(() => undefined));
      const a = await passedEpisode(f, 'a', { 'src/a.js': GOOD_A });
      const b = await passedEpisode(f, 'b', { 'src/b.js': GOOD_B });
      const placeOfA = await s.stage.reserve(a);
      const placeOfB = await s.stage.reserve(b);
      expect(placeOfB?.onto).toBe(placeOfA?.commit);
      const waited = performance.now();
      const baseline = waitForBaseline(f.world.scratchDir, await f.world.treeOf(placeOfB!.onto), ['node --test test/base.test.js'], Date.now() + 60_000);
      // a's job runs again elsewhere and makes its change anew: the first run's place goes.
      const again = { ...a, candidate: await candidate(f.world, f.commit, { 'src/a.js': `${GOOD_A}// again\n` }) };
      await s.stage.reserve(again);
      expect(await baseline).toBeNull();
      expect(performance.now() - waited).toBeLessThan(10_000);
      expect(s.stage.describe().map((e) => e.id)).toEqual([b.id, a.id]);
    },
    90_000,
  );
});
