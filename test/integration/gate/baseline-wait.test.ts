import { describe, expect } from 'vitest';
import { verifyCandidate } from '../../../src/gate/verify-candidate.js';
import { loadBaseline, markBaselineFinal, waitForBaseline } from '../../../src/gate/test-baseline.js';
import { git, gitValue } from '../../../src/git/git.js';
import type { WorldRepo } from '../../../src/world/world-repo.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

/** A candidate commit on `base` that writes `files`, made with plumbing as a worker would. */
async function candidate(world: WorldRepo, base: string, files: Record<string, string>): Promise<string> {
  const env = { GIT_INDEX_FILE: `${world.scratchDir}-baseline-wait.index` };
  await git(['read-tree', base], { cwd: world.path, env });
  for (const [path, content] of Object.entries(files)) {
    const sha = await gitValue(['hash-object', '-w', '--stdin'], { cwd: world.path, input: content });
    await git(['update-index', '--add', '--cacheinfo', `100644,${sha},${path}`], { cwd: world.path, env });
  }
  return world.commitTree(await gitValue(['write-tree'], { cwd: world.path, env }), [base], 'candidate\n');
}

// The world's test command prints nothing a report reader knows (as vitest's default output):
// its gate learns no test names, yet the gates waiting for its baseline must not wait it out.
const quietTest = 'node -e "process.exitCode = 0"';

describe('when a change gates on a tip whose own gate has ended', () => {
  itWith('bwrap')(
    'takes the tip baseline at once, even when the tip gate read no test names or ran fewer commands',
    async () => {
      const manifest = baseManifest({
        verify: { sandbox: 'bwrap', test: quietTest, timeoutSec: 120, limits: { cpus: 1, memoryMb: 256, pids: 64 } },
      });
      const f = await makeWorld({ manifest, recording: {}, sandbox: 'bwrap' });
      const parsed = await f.world.manifestAt(f.commit);
      const taskA = parsed.tasks.find((t) => t.id === 'a')!;
      const taskB = parsed.tasks.find((t) => t.id === 'b')!;
      const tipCommit = await candidate(f.world, f.commit, { 'src/a.js': GOOD_A });
      const tipTree = await f.world.treeOf(tipCommit);
      const headTree = await f.world.treeOf(f.commit);
      const tip = await verifyCandidate({
        world: f.world,
        sandbox: f.sandbox,
        head: f.commit,
        headManifest: parsed,
        fromTree: headTree,
        candidateTree: tipTree,
        task: taskA,
        doneTasks: new Set(),
        name: 'tip-gate',
        baseTree: headTree,
      });
      expect(tip.ok).toBe(true);
      // The test step ran and named no test: stored as such, not left out.
      expect(await loadBaseline(f.world.scratchDir, tipTree)).toMatchObject({ [quietTest]: [] });
      // A command the tip's plan did not have (the check of a task done since): no one will store it.
      const started = Date.now();
      expect(await waitForBaseline(f.world.scratchDir, tipTree, ['node --test test/other.test.js'], Date.now() + 60_000)).toBeNull();
      expect(Date.now() - started).toBeLessThan(30_000);

      // b gates on a's tip, with a done there: its plan has a's check too. Its verdict comes without waiting out the minute.
      const waits: string[] = [];
      const onTip = await candidate(f.world, tipCommit, { 'src/b.js': GOOD_B });
      const gated = Date.now();
      const verdict = await verifyCandidate({
        world: f.world,
        sandbox: f.sandbox,
        head: tipCommit,
        headManifest: parsed,
        fromTree: tipTree,
        candidateTree: await f.world.treeOf(onTip),
        task: taskB,
        doneTasks: new Set(['a']),
        name: 'behind-gate',
        baseTree: tipTree,
        awaitHeadBaselineMs: 60_000,
        onWait: (what) => {
          if (what) waits.push(what);
        },
      });
      expect(verdict.ok).toBe(true);
      expect(Date.now() - gated).toBeLessThan(50_000);
      expect(waits).toEqual([]);

      // A tip whose gate still runs: the wait is told, naming the tip, and ends when that gate does.
      const busyTip = await candidate(f.world, f.commit, { 'src/a.js': GOOD_A, 'src/README.md': 'still gating\n' });
      const busyTree = await f.world.treeOf(busyTip);
      const behind = await candidate(f.world, busyTip, { 'src/b.js': GOOD_B });
      setTimeout(() => void markBaselineFinal(f.world.scratchDir, busyTree), 1500);
      const second = await verifyCandidate({
        world: f.world,
        sandbox: f.sandbox,
        head: busyTip,
        headManifest: parsed,
        fromTree: busyTree,
        candidateTree: await f.world.treeOf(behind),
        task: taskB,
        doneTasks: new Set(['a']),
        name: 'behind-busy-gate',
        baseTree: busyTree,
        awaitHeadBaselineMs: 60_000,
        onWait: (what) => {
          if (what) waits.push(what);
        },
      });
      expect(second.ok).toBe(true);
      expect(waits[0]).toContain(`the test baseline of the tip ${busyTip.slice(0, 12)}`);
      // Then, its baseline not stored, it learns it itself, and says so.
      expect(waits[1]).toContain(`the tests of ${busyTip.slice(0, 12)} run once`);
    },
    150_000,
  );
});
