import { describe, expect } from 'vitest';
import { createServerApp } from '../../../src/server/create-app.js';
import { git, gitValue } from '../../../src/git/git.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { itWith } from '../../helpers/services.js';
import { BAD_A, baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';
import { genesis } from '../../helpers/genesis-cli.js';

const BAD_B = "export const b = () => 'not b';\n";
const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' };

describe('unblocking a task', () => {
  itWith('bwrap')('retries a task blocked by the same failure twice, from the CLI and from the dashboard, and the next run tries both again', async () => {
    // maxAttempts is high: only retry.blockOnRepeat (on by default) can block these tasks.
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest: baseManifest({ retry: { maxAttempts: 5 } }),
      recording: {
        a: [{ write: { 'src/a.js': BAD_A } }, { write: { 'src/a.js': BAD_A } }, { write: { 'src/a.js': GOOD_A } }],
        b: [{ write: { 'src/b.js': BAD_B } }, { write: { 'src/b.js': BAD_B } }, { write: { 'src/b.js': GOOD_B } }],
      },
    });
    const first = await genesis(['run', '--world', f.world.path, '--sandbox', 'bwrap']);
    expect(first.status, first.stderr).toBe(3);
    expect(first.stdout).toContain('a: failed the same way twice in a row');

    const app = createServerApp({ world: f.world }).app;
    const board = (await (await app.request('/api/tasks')).json()) as { tasks: Array<{ id: string; state: string; blockedBy: string | null }> };
    expect(board.tasks.map((t) => [t.id, t.state, t.blockedBy])).toEqual([
      ['a', 'blocked', 'repeat'],
      ['b', 'blocked', 'repeat'],
    ]);
    const button = await app.request('/api/tasks/b/retry', post);
    expect(button.status, await button.clone().text()).toBe(201);
    const cli = await genesis(['task', 'retry', 'a', '--world', f.world.path]);
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(new RegExp(`(genesis|bin/genesis\\.js) run --world ${f.world.path} `));

    const second = await genesis(['run', '--world', f.world.path, '--sandbox', 'bwrap']);
    expect(second.status, second.stdout + second.stderr).toBe(0);
    const episodes = await new GitLedger(f.world.path).readAll();
    expect(episodes.filter((e) => e.task === 'a').map((e) => e.outcome)).toEqual(['rejected', 'rejected', 'accepted']);
    expect(episodes.filter((e) => e.task === 'b').map((e) => e.outcome)).toEqual(['rejected', 'rejected', 'accepted']);
  });

  itWith('bwrap')('retries a task held by a broken base, which stays blocked across runs until a person retries it', async () => {
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest: baseManifest({ parallelism: 1, tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }] }),
      recording: { a: [{ write: { 'src/a.js': GOOD_A } }] },
    });
    const env = { GIT_INDEX_FILE: `${f.world.path}/genesis-test.index` };
    await git(['read-tree', 'main'], { cwd: f.world.path, env });
    const blob = await gitValue(['hash-object', '-w', '--stdin'], {
      cwd: f.world.path,
      input: "import test from 'node:test';\ntest('broken', () => { throw new Error('broken base'); });\n",
    });
    await git(['update-index', '--cacheinfo', `100644,${blob},test/base.test.js`], { cwd: f.world.path, env });
    // As an amendment whose new test passed when it was verified and fails now (a test that depends on the day, say).
    const broken = await f.world.commitTree(
      await gitValue(['write-tree'], { cwd: f.world.path, env }),
      [f.commit],
      'a stricter base test\n\nGenesis-Amend: alice@host: a stricter base test\nGenesis-Verified: bwrap: test ok\n',
    );
    await f.world.setRef('refs/heads/main', broken);

    const first = await genesis(['run', '--world', f.world.path, '--sandbox', 'bwrap']);
    expect(first.status, first.stderr).toBe(3);
    expect(first.stdout).toContain('a: found the accepted head failing its own gate');
    const again = await genesis(['run', '--world', f.world.path, '--sandbox', 'bwrap']);
    expect(again.status).toBe(3);
    expect((await new GitLedger(f.world.path).readAll()).length).toBe(1); // no episode spent on a head known broken

    await f.world.setRef('refs/heads/main', f.commit); // a person repairs the head
    const retried = await genesis(['task', 'retry', 'a', '--world', f.world.path, '--note', 'base repaired']);
    expect(retried.status, retried.stderr).toBe(0);
    const last = await genesis(['run', '--world', f.world.path, '--sandbox', 'bwrap']);
    expect(last.status, last.stdout + last.stderr).toBe(0);
    expect((await new GitLedger(f.world.path).readAll()).map((e) => [e.outcome, e.reason])).toEqual([
      ['abandoned', 'broken-base'],
      ['accepted', null],
    ]);
  });
});
