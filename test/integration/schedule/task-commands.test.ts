import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { itWith } from '../../helpers/services.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { git } from '../../../src/git/git.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { BAD_A, BASE_FILES, baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

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

  itWith('bwrap')("add leaves a hand-written world.yaml as it was written and only adds the task's lines", async () => {
    const source = join(await tempDir('genesis-task-add-'), 'source');
    const manifest = [
      '# A world written by hand: comments, a folded outcome, flow maps and quoted strings.',
      'name: fixture',
      'goal:',
      '  outcome: >',
      '    modules a and b',
      '    exist',
      'verify:',
      "  sandbox: bwrap  # this machine's node",
      '  test: "node --test test/base.test.js"',
      '  timeoutSec: 60',
      '  limits: { cpus: 1, memoryMb: 256, pids: 64 }',
      'protected: ["test/**", "world.yaml", ".genesis/**"]',
      'agent: { kind: script, script: .genesis/recording.yaml }',
      'tasks:',
      '  # the first one',
      '  - id: a',
      '    title: "module a"',
      '    paths: ["src/a.js"]',
      '',
      '# more settings after the tasks',
      'parallelism: 2',
      '',
    ].join('\n');
    for (const [path, content] of Object.entries({ ...BASE_FILES, 'world.yaml': manifest, '.genesis/recording.yaml': 'tasks: {}\n' })) {
      await mkdir(dirname(join(source, path)), { recursive: true });
      await writeFile(join(source, path), content);
    }
    const world = join(dirname(source), 'w.world');
    expect(genesis(['init', '--world', world, '--from', source]).status).toBe(0);
    const added = genesis(['task', 'add', 'b', '--world', world, '--title', 'module b', '--paths', 'src/b.js', '--depends-on', 'a']);
    expect(added.status, added.stderr).toBe(0);
    const numstat = (await git(['diff', '--numstat', 'main~1', 'main', '--', 'world.yaml'], { cwd: world })).stdout.trim();
    const [insertions, deletions] = numstat.split('\t').map(Number);
    expect(deletions).toBe(0);
    const text = (await git(['show', 'main:world.yaml'], { cwd: world })).stdout;
    expect(text.startsWith(manifest.split('\n\n# more settings')[0]!)).toBe(true);
    expect(text).toContain('    paths: ["src/a.js"]\n  - id: b\n');
    expect(text.endsWith('\n# more settings after the tasks\nparallelism: 2\n')).toBe(true);
    expect(insertions).toBe(text.split('\n').length - manifest.split('\n').length);
  });
});
