import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { git } from '../../../src/git/git.js';
import { readEpisodeHiddenLogs } from '../../../src/ledger/hidden-logs.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { itWith } from '../../helpers/services.js';
import { BAD_A, baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

/** a() returns 'a' for the visible test but gets the hidden case wrong: a plausible, silently wrong change. */
const SILENTLY_WRONG_A = "export const a = (x) => (x === undefined ? 'a' : 'wrong');\n";
const RIGHT_A = "export const a = (x) => (x === undefined ? 'a' : `a${x}`);\n";
const HIDDEN_TEST =
  "import test from 'node:test';\nimport assert from 'node:assert';\nimport { a } from '../src/a.js';\ntest('a with an argument', () => assert.equal(a(1), 'a1'));\n";

describe('goals, checks and budgets', () => {
  itWith('bwrap')('catches a silently wrong change with a hidden holdout test the agent never saw', async () => {
    const manifest = baseManifest({
      verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', holdout: { dir: 'holdout', command: 'node --test .genesis-holdout/' } },
    });
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest,
      recording: { a: [{ write: { 'src/a.js': SILENTLY_WRONG_A } }, { write: { 'src/a.js': RIGHT_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] },
    });
    await mkdir(join(f.world.path, 'holdout'), { recursive: true });
    await writeFile(join(f.world.path, 'holdout', 'a.test.js'), HIDDEN_TEST);
    await runEmbedded({ world: f.world, sandbox: f.sandbox });
    const ledger = new GitLedger(f.world.path);
    const [first, second] = (await ledger.readAll()).filter((e) => e.task === 'a');
    expect(first).toMatchObject({ outcome: 'rejected', reason: 'holdout-failed', message: 'a hidden acceptance check failed' });
    expect(second).toMatchObject({ outcome: 'accepted' });
    const prompt = (await ledger.readArtifacts(second!.id)).prompt ?? '';
    expect(prompt).toContain('holdout-failed');
    expect(prompt).not.toContain('a with an argument');
    expect(await f.world.readFile('main', '.genesis-holdout/a.test.js')).toBeNull();
    // The hidden output is kept, but outside the object store every workspace borrows.
    expect((await ledger.readArtifacts(first!.id)).gateLog).not.toContain('a with an argument');
    expect(await readEpisodeHiddenLogs(f.world, first!.id)).toContain('a with an argument');
    const everyObject = (await git(['cat-file', '--batch-all-objects', '--batch'], { cwd: f.world.path })).stdout;
    expect(everyObject).not.toContain('a with an argument');
  });

  itWith('bwrap')('blocks a task after two attempts that fail the same way, before using all its attempts', async () => {
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest: baseManifest({ retry: { maxAttempts: 5 } }),
      recording: { a: [{ write: { 'src/a.js': BAD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] },
    });
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect((await new GitLedger(f.world.path).readAll()).filter((e) => e.task === 'a')).toHaveLength(2);
    expect(summary.stop).toMatchObject({ kind: 'blocked', blocked: [{ task: 'a', reason: 'check-failed', repeated: expect.any(String) }] });
  });

  itWith('bwrap')('asks a witness task for a check that fails before the change and passes after it', async () => {
    const manifest = baseManifest({
      tasks: [
        { id: 'a', title: 'a', paths: ['src/a.js'], check: 'node --test test/a.test.js', witness: true },
        { id: 'trivial', title: 't', paths: ['src/t.js'], check: 'node --test test/base.test.js', witness: true },
      ],
    });
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest,
      recording: { a: [{ write: { 'src/a.js': GOOD_A } }], trivial: [{ write: { 'src/t.js': 'export {};\n' } }] },
    });
    await runEmbedded({ world: f.world, sandbox: f.sandbox });
    const episodes = await new GitLedger(f.world.path).readAll();
    expect(episodes.find((e) => e.task === 'a')).toMatchObject({ outcome: 'accepted' });
    expect(episodes.find((e) => e.task === 'trivial')).toMatchObject({ outcome: 'rejected', reason: 'no-witness' });
  });

  itWith('bwrap')('stops an episode still running when the hours budget runs out, and keeps its work', async () => {
    const manifest = baseManifest({
      goal: { outcome: 'x', stop: { maxHours: 1.5 / 3600 } },
      parallelism: 1,
      tasks: [{ id: 'a', title: 'a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }],
    });
    const f = await makeWorld({ sandbox: 'bwrap', manifest, recording: { a: [{ write: { 'src/a.js': GOOD_A }, sleepMs: 20_000 }] } });
    const started = Date.now();
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(summary.stop).toMatchObject({ kind: 'budget', budget: 'maxHours' });
    const [episode] = await new GitLedger(f.world.path).readAll();
    expect(episode).toMatchObject({ outcome: 'abandoned', reason: 'aborted' });
    expect(episode!.quarantine).toBeTruthy();
  });

  itWith('bwrap')('keeps both appends to the progress file when two episodes land on a moved head', async () => {
    const manifest = baseManifest({ goal: { outcome: 'x', progressFile: 'PROGRESS.md' } });
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest,
      files: { 'PROGRESS.md': '# Progress\n' },
      recording: {
        a: [{ write: { 'src/a.js': GOOD_A, 'PROGRESS.md': '# Progress\n- a: done\n' }, sleepMs: 200 }],
        b: [{ write: { 'src/b.js': GOOD_B, 'PROGRESS.md': '# Progress\n- b: done\n' }, sleepMs: 200 }],
      },
    });
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary.stop.kind).toBe('done');
    const progress = (await f.world.readFile('main', 'PROGRESS.md')) ?? '';
    expect(progress).toContain('- a: done');
    expect(progress).toContain('- b: done');
    const prompt = (await new GitLedger(f.world.path).readArtifacts((await readAcceptedHistory(f.world.path, 'main'))[0]!.episode!)).prompt;
    expect(prompt).toContain('PROGRESS.md');
  });

  itWith('bwrap')('in ratchet mode accepts a change whose passing count does not fall, rejects one whose count falls, and records the score', async () => {
    const suite = (n: number) => Array.from({ length: n }, (_, i) => `test('t${i}', () => assert.ok(existsSync('src/f${i}.js')));`).join('\n');
    const manifest = baseManifest({
      verify: { sandbox: 'bwrap', test: 'node --test test/suite.test.js', mode: 'ratchet' },
      tasks: [
        { id: 'more', title: 'pass more', paths: ['src/f0.js', 'src/f1.js'] },
        { id: 'worse', title: 'pass fewer', paths: ['src/f3.js', 'src/keep.js'], dependsOn: ['more'] },
      ],
    });
    const files = {
      'test/suite.test.js': `import test from 'node:test';\nimport assert from 'node:assert';\nimport { existsSync } from 'node:fs';\n${suite(4)}\n`,
      'src/f3.js': '',
    };
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest,
      files,
      recording: {
        more: [{ write: { 'src/f0.js': '', 'src/f1.js': '' } }],
        worse: [{ write: { 'src/keep.js': '' }, delete: ['src/f3.js'] }, { write: { 'src/keep.js': '' } }],
      },
    });
    const history0 = await readAcceptedHistory(f.world.path, 'main');
    expect(history0[0]!.score).toBe(1);
    await runEmbedded({ world: f.world, sandbox: f.sandbox });
    const history = await readAcceptedHistory(f.world.path, 'main');
    expect(history.map((c) => [c.task, c.score])).toEqual([
      ['worse', 3],
      ['more', 3],
      [null, 1],
    ]);
    const [fell] = (await new GitLedger(f.world.path).readAll()).filter((e) => e.task === 'worse');
    expect(fell).toMatchObject({ outcome: 'rejected', reason: 'score-fell' });
  });
});
