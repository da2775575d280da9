import { describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { git, gitValue } from '../../../src/git/git.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

/**
 * Fails when it runs soon after the gate copied the tree out, passes later: a flaky test, made
 * deterministic. Every run starts from a fresh copy of the tree, so nothing a first run writes can
 * tell the re-run apart; the time its test directory was written (when the gate exported it) can. Not the
 * work dir's own time: the gate adds its canaries' mount point there as each step starts.
 */
const FLAKY_A_TEST = `import test from 'node:test';
import assert from 'node:assert';
import { statSync } from 'node:fs';
import { a } from '../src/a.js';
test('a says a (flaky)', async () => {
  const age = Date.now() - statSync('test').mtimeMs;
  if (age < 4000) {
    await new Promise((resolve) => setTimeout(resolve, 4200 - age));
    assert.fail('first run fails');
  }
  assert.equal(a(), 'a');
});
`;

describe('when the gate fails for reasons that are not the change', () => {
  itWith('bwrap')('does not block a right change on a flaky test, and reports the test as flaky', async () => {
    const f = await makeWorld({
      sandbox: 'bwrap',
      files: { 'test/a.test.js': FLAKY_A_TEST },
      recording: { a: [{ write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] },
    });
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary.stop.kind).toBe('done');
    const [a] = (await new GitLedger(f.world.path).readAll()).filter((e) => e.task === 'a');
    expect(a).toMatchObject({ attempt: 1, outcome: 'accepted' });
    expect(a!.gate?.flaky).toEqual(['check:a']);
    // The accepted commit names the verification behind it; where it was gated on its place in the
    // integration queue (the trailer was written before the verdict), that record holds the flakiness.
    const landed = (await readAcceptedHistory(f.world.path, 'main')).find((c) => c.task === 'a');
    expect(landed?.verification).toBe(a!.id);
    const evidence = landed!.verified ?? '';
    if (!/its record holds the verdict/.test(evidence)) expect(evidence).toMatch(/flaky: check:a/);
    expect(a!.gate?.summary ?? '').toMatch(/flaky: check:a/);
  });

  itWith('bwrap')('does not charge an episode for a test that fails on the base too, and holds the task', async () => {
    const f = await makeWorld({ sandbox: 'bwrap', recording: { a: [{ write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] } });
    // Someone breaks the accepted head by hand: its base test now fails.
    const env = { GIT_INDEX_FILE: `${f.world.path}/genesis-test.index` };
    await git(['read-tree', 'main'], { cwd: f.world.path, env });
    const blob = await gitValue(['hash-object', '-w', '--stdin'], {
      cwd: f.world.path,
      input: "import test from 'node:test';\ntest('broken', () => { throw new Error('broken base'); });\n",
    });
    await git(['update-index', '--cacheinfo', `100644,${blob},test/base.test.js`], { cwd: f.world.path, env });
    const tree = await gitValue(['write-tree'], { cwd: f.world.path, env });
    const broken = await f.world.commitTree(tree, [f.commit], 'break the base test\n');
    await f.world.setRef('refs/heads/main', broken);

    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary.stop).toMatchObject({ kind: 'blocked' });
    const episodes = await new GitLedger(f.world.path).readAll();
    expect(episodes.length).toBe(2);
    for (const e of episodes) expect(e).toMatchObject({ outcome: 'abandoned', reason: 'broken-base' });
    expect(await f.world.head('main')).toBe(broken);
  });
});

describe('when the agent itself cannot work', () => {
  itWith('bwrap')('opens the circuit on a missing agent binary instead of spawning more episodes', async () => {
    const manifest = baseManifest({ agent: { kind: 'command', command: ['genesis-agent-that-does-not-exist'] }, parallelism: 1 });
    const f = await makeWorld({ sandbox: 'bwrap', manifest, recording: {} });
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary.stop).toMatchObject({ kind: 'circuit-open', reason: 'agent-not-found' });
    expect(summary.episodes).toBe(1);
  });

  itWith('bwrap')('keeps the partial work of an agent that timed out under a quarantine ref, and tells the next attempt', async () => {
    const script =
      'echo "export const a = () => \\"half\\";" > src/a.js; if [ "$GENESIS_ATTEMPT" = 1 ]; then sleep 30; fi; echo "export const a = () => \\"a\\";" > src/a.js';
    const manifest = baseManifest({
      agent: { kind: 'command', command: ['sh', '-c', script], timeoutSec: 1 },
      tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }],
    });
    const f = await makeWorld({ sandbox: 'bwrap', manifest, recording: {} });
    await runEmbedded({ world: f.world, sandbox: f.sandbox });
    const ledger = new GitLedger(f.world.path);
    const [first, second] = await ledger.readAll();
    expect(first).toMatchObject({ outcome: 'failed', reason: 'agent-timeout', quarantine: `refs/genesis/quarantine/${first!.id}` });
    expect(await f.world.readFile(first!.quarantine!, 'src/a.js')).toContain('half');
    expect(second).toMatchObject({ outcome: 'accepted' });
    expect((await ledger.readArtifacts(second!.id)).prompt).toContain(first!.quarantine!);
  });
});
