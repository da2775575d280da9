import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { runGate } from '../../../src/gate/gate.js';
import { planGate } from '../../../src/gate/plan.js';
import { createSandbox } from '../../../src/sandbox/create-sandbox.js';
import type { RunSummary } from '../../../src/schedule/run/ports/events.js';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { readAcceptedHistory, type AcceptedCommit } from '../../../src/world/history/accepted-history.js';
import type { EpisodeRecord } from '../../../src/ledger/episode-record.js';
import { initWorld } from '../../../src/operations/init-world.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { dockerAnswers, itWith } from '../../helpers/services.js';

const PY_RATCHET = fileURLToPath(new URL('../../../worlds/py-ratchet', import.meta.url));

/** worlds/py-ratchet: Python, pytest's JUnit file as the report, ratchet mode, built by its script agent. */
describe('the py-ratchet example world', () => {
  let root = '';
  let summary: RunSummary;
  let history: AcceptedCommit[] = [];
  let episodes: EpisodeRecord[] = [];
  let initialScore: number | null = null;
  let finalScore: number | null = null;

  beforeAll(async () => {
    if (!dockerAnswers()) return;
    root = await mkdtemp(join(tmpdir(), 'genesis-py-ratchet-'));
    // What `genesis init` does with no --sandbox: the world's own choice (the default, auto) and image.
    let sandbox!: Sandbox;
    const init = await initWorld({
      worldPath: join(root, 'py.world'),
      from: PY_RATCHET,
      sandbox: async (m) => {
        sandbox = await createSandbox(m.verify.sandbox, { image: m.verify.image });
        return sandbox;
      },
    });
    initialScore = init.gate.record.score ?? null;
    summary = await runEmbedded({ world: init.world, sandbox });
    history = await readAcceptedHistory(init.world.path, 'main');
    episodes = await new GitLedger(init.world.path).readAll();
    const head = await init.world.head('main');
    const manifest = await init.world.manifestAt(head);
    const done = new Set(history.flatMap((c) => (c.task ? [c.task] : [])));
    const again = await runGate({
      repo: init.world.path,
      tree: await init.world.treeOf(head),
      steps: planGate(manifest, null, done),
      manifest,
      sandbox,
      workDir: join(root, 'final-gate'),
      ratchet: { minScore: 0 },
    });
    finalScore = again.record.score ?? null;
  }, 240_000);

  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  itWith('docker')('is built to done: every task lands and the goal evidence (all of pytest) passes', () => {
    // The default sandbox takes docker here, in the image world.yaml names, which has Python.
    expect(episodes.map((e) => [e.gate?.sandbox, e.gate?.image?.name])).toEqual(episodes.map(() => ['docker', 'genesis/python:3']));
    expect(summary.stop).toMatchObject({ kind: 'evidence', command: 'python3 -B -m pytest -p no:cacheprovider -q tests' });
    expect(
      history
        .map((c) => c.task)
        .filter(Boolean)
        .sort(),
    ).toEqual(['count', 'slug', 'wrap']);
  });

  itWith('docker')('scores every commit from the JUnit file pytest wrote, and the score never falls', () => {
    expect(initialScore).toBe(1);
    // A change verified again on a moved head lands without a Genesis-Score trailer (its score is
    // in its verification record), so only the commits that carry one are compared here.
    const scores = history
      .map((c) => c.score)
      .reverse()
      .filter((s): s is number => s !== null);
    expect(scores[0]).toBe(1);
    for (let i = 1; i < scores.length; i++) expect(scores[i]!).toBeGreaterThanOrEqual(scores[i - 1]!);
    for (const e of episodes) expect(e.gate?.score ?? 0).toBeLessThanOrEqual(11);
    // The gate on the finished head: 1 (package) + 5 (slug) + 3 (wrap) + 2 (count).
    expect(finalScore).toBe(11);
    const accepted = episodes.filter((e) => e.outcome === 'accepted');
    for (const e of accepted) expect(e.gate?.steps.find((s) => s.name === 'test')?.tests).toMatchObject({ format: 'junit', failed: expect.any(Number) });
  });

  itWith('docker')('rejects the wrong turn by its check, naming the failing test from the report', () => {
    const wrap = episodes.filter((e) => e.task === 'wrap').sort((a, b) => a.attempt - b.attempt);
    expect(wrap.map((e) => [e.attempt, e.outcome])).toEqual([
      [1, 'rejected'],
      [2, 'accepted'],
    ]);
    expect(wrap[0]!.reason).toBe('check-failed');
    expect(wrap[0]!.message).toContain('tests.test_wrap > test_long_word_stands_alone');
  });
});
