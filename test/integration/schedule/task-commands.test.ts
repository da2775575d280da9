import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { itWith } from '../../helpers/services.js';
import { BAD_A, baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

const BIN = fileURLToPath(new URL('../../../bin/genesis.js', import.meta.url));
const genesis = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });

describe('genesis task', () => {
  itWith('bwrap')('retry gives a blocked task new attempts, and its note reaches the next prompt', async () => {
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest: baseManifest({ retry: { maxAttempts: 1 } }),
      recording: { a: [{ write: { 'src/a.js': BAD_A } }, { write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] },
    });
    const first = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(first.stop).toMatchObject({ kind: 'blocked', blocked: [{ task: 'a' }] });
    const pending = genesis(['task', 'retry', 'b', '--world', f.world.path]);
    expect(pending.status).toBe(1);
    expect(pending.stderr).toContain('task-not-blocked');
    const retried = genesis(['task', 'retry', 'a', '--world', f.world.path, '--note', 'a() must return the letter a']);
    expect(retried.status, retried.stderr).toBe(0);
    const second = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(second.stop.kind).toBe('done');
    const episodes = (await new GitLedger(f.world.path).readAll()).filter((e) => e.task === 'a');
    expect(episodes.map((e) => [e.attempt, e.outcome])).toEqual([
      [1, 'rejected'],
      [2, 'accepted'],
    ]);
    expect((await new GitLedger(f.world.path).readArtifacts(episodes[1]!.id)).prompt).toContain('a() must return the letter a');
  });

  itWith('bwrap')('add puts a validated task on the accepted branch, verified, and the next run does it', async () => {
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest: baseManifest({ tasks: [{ id: 'a', title: 'a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }] }),
      recording: { a: [{ write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] },
    });
    const bad = genesis(['task', 'add', 'b', '--world', f.world.path, '--title', 'module b', '--paths', 'src/b.js', '--depends-on', 'nope']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('no task has id "nope"');
    expect(await f.world.head('main')).toBe(f.commit);
    const added = genesis(['task', 'add', 'b', '--world', f.world.path, '--title', 'module b', '--paths', 'src/b.js', '--check', 'node --test test/b.test.js']);
    expect(added.status, added.stderr).toBe(0);
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary.stop.kind).toBe('done');
    const subjects = (await readAcceptedHistory(f.world.path, 'main')).map((c) => c.task ?? c.subject);
    expect(subjects.slice(2)).toEqual(['world: add task b', 'world fixture: initial content']);
    expect(subjects.slice(0, 2).sort()).toEqual(['a', 'b']);
  });
});
