import { randomUUID } from 'node:crypto';
import { planGate } from '../../src/gate/plan.js';
import { runGate } from '../../src/gate/gate.js';
import { readAcceptedHistory } from '../../src/world/history/accepted-history.js';
import { GitLedger } from '../../src/ledger/git-ledger.js';
import { baseManifest, makeWorld, type FixtureWorld, type RecordingSteps } from './world-fixture.js';

/** A world of independent tasks t1..tn, each writing one module after `sleepMs`, gated in bwrap. */
export async function makeTaskWorld(n: number, sleepMs: number, parallelism = 3): Promise<{ f: FixtureWorld; tasks: string[] }> {
  const tasks = Array.from({ length: n }, (_, i) => `t${i + 1}`);
  const files: Record<string, string> = {};
  const recording: RecordingSteps = {};
  for (const t of tasks) {
    files[`test/${t}.test.js`] =
      `import test from 'node:test';\nimport assert from 'node:assert';\nimport { v } from '../src/${t}.js';\ntest('${t}', () => assert.equal(v, '${t}'));\n`;
    recording[t] = [{ write: { [`src/${t}.js`]: `export const v = '${t}';\n` }, sleepMs }];
  }
  const manifest = baseManifest({
    parallelism,
    verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 60 },
    tasks: tasks.map((t) => ({ id: t, title: `module ${t}`, paths: [`src/${t}.js`], check: `node --test test/${t}.test.js` })),
  });
  return { f: await makeWorld({ manifest, files, recording, sandbox: 'bwrap' }), tasks };
}

/** Fast stall detection and a private queue namespace for one test. */
export function fastClusterEnv(): Record<string, string> {
  return {
    GENESIS_QUEUE_PREFIX: `test-${randomUUID()}`,
    GENESIS_LOCK_MS: '2000',
    GENESIS_STALLED_MS: '1000',
    GENESIS_RECONCILE_MS: '1000',
    GENESIS_INTEGRATOR_TTL_MS: '3000',
  };
}

/** What must hold after any run, whatever crashed: returns a list of violations (empty is good). */
export async function checkWorldInvariants(f: FixtureWorld, tasks: string[]): Promise<string[]> {
  const problems: string[] = [];
  const commits = await readAcceptedHistory(f.world.path, 'main');
  if (commits.some((c) => c.parents.length > 1)) problems.push('the accepted history has a merge commit');
  const done = commits.flatMap((c) => (c.task ? [c.task] : [])).sort();
  if (JSON.stringify(done) !== JSON.stringify([...tasks].sort())) problems.push(`tasks done: ${done.join(',')}; expected each of ${tasks.join(',')} once`);
  const episodes = await new GitLedger(f.world.path).readAll();
  const open = episodes.filter((e) => e.status !== 'final');
  if (open.length > 0) problems.push(`episodes not final: ${open.map((e) => e.id).join(',')}`);
  for (const c of commits.filter((c) => c.episode)) {
    const e = episodes.find((x) => x.id === c.episode);
    if (e?.outcome !== 'accepted' || e.commit !== c.commit) problems.push(`commit ${c.commit} has no accepted ledger record`);
  }
  for (const [i, c] of commits.entries()) {
    const m = await f.world.manifestAt(c.commit);
    const doneAt = new Set(commits.slice(i).flatMap((o) => (o.task ? [o.task] : [])));
    const verdict = await runGate({
      repo: f.world.path,
      tree: await f.world.treeOf(c.commit),
      steps: planGate(m, null, doneAt),
      manifest: m,
      sandbox: f.sandbox,
      workDir: `${f.world.scratchDir}/gates/recheck`,
    });
    if (!verdict.ok) problems.push(`commit ${c.commit} fails its tests when checked out again: ${verdict.message}`);
  }
  return problems;
}
