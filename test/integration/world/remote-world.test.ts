import { execFileSync } from 'node:child_process';
import { mkdir, readdir } from 'node:fs/promises';
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backoffPolicy } from '../../../src/retry/backoff-policy.js';
import { gitValue } from '../../../src/git/git.js';
import { Publisher, type PublishEvent } from '../../../src/world/publisher.js';
import { openRemoteWorld } from '../../../src/world/remote-world.js';
import { openWorkerWorld } from '../../../src/world/worker-world.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { startCli } from '../../helpers/cli-process.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';
import { expectLandedOnServer, expectVerifiedOnWorkers } from './server-world-checks.js';

const gitIn = (dir: string, args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();

/** A world made by genesis init, then put on a "server": a bare repository reached over file://. */
async function worldOnServer(manifest: Record<string, unknown> = {}, agentSleepMs = 0): Promise<{ server: string; url: string; root: string }> {
  const f = await makeWorld({
    sandbox: 'bwrap',
    manifest: baseManifest({ verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 60 }, ...manifest }),
    recording: { a: [{ write: { 'src/a.js': GOOD_A }, sleepMs: agentSleepMs }], b: [{ write: { 'src/b.js': GOOD_B }, sleepMs: agentSleepMs }] },
  });
  const root = await tempDir('genesis-server-');
  const server = join(root, 'server.git');
  gitIn(root, ['clone', '--quiet', '--mirror', f.world.path, server]);
  return { server, url: `file://${server}`, root };
}

/** A commit on top of `parent` in `repo` changing one file, made with plain git (someone else's push). */
async function commitOn(repo: string, parent: string, path: string, content: string): Promise<string> {
  const env = { GIT_INDEX_FILE: join(repo, `other-${Date.now()}.index`) };
  const run = (args: string[], input?: string) => execFileSync('git', args, { cwd: repo, input, env: { ...process.env, ...env }, encoding: 'utf8' }).trim();
  run(['read-tree', parent]);
  const blob = run(['hash-object', '-w', '--stdin'], content);
  run(['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`]);
  const tree = run(['write-tree']);
  return run(['-c', 'user.name=o', '-c', 'user.email=o@o', 'commit-tree', tree, '-p', parent, '-m', 'someone else']);
}

describe('a world on a git server', () => {
  itWith('bwrap')('a worker opening one new world from many jobs at once gets one whole mirror, and every fetch into it works', async () => {
    const { server, url, root } = await worldOnServer();
    const cache = join(root, 'worker-cache');
    // What a job saw while another's `git init` had made the mirror's directory and not yet filled it.
    await mkdir(join(cache, `${createHash('sha1').update(url).digest('hex').slice(0, 16)}.git`), { recursive: true });
    // Before the mirror was made under its own name and renamed into place, a job could see its directory mid-`git init`.
    // Jobs start a millisecond apart, so later ones look while earlier ones are still making the mirror.
    const worlds = await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, i));
        const w = await openWorkerWorld(url, cache);
        await w.sync();
        return w;
      }),
    );
    expect((await readdir(cache)).filter((n) => n.endsWith('.git'))).toHaveLength(1);
    expect((await readdir(cache)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(await worlds[23]!.repo.head('main')).toBe(gitIn(server, ['rev-parse', 'main']));
  });

  itWith('bwrap')(
    'genesis run --world <url> lands every task on the server, with the ledger beside it, and the audit passes there',
    async () => {
      const { server, url, root } = await worldOnServer();
      const run = startCli(['run', '--world', url, '--cache-dir', join(root, 'cache')]);
      expect(await run.exited, run.stderr()).toBe(0);
      await expectLandedOnServer(server, ['a', 'b']);
    },
    180_000,
  );

  itWith('bwrap')(
    'moves the branch on the server only by compare-and-swap: a push that raced it is kept, and the mirror takes it',
    async () => {
      const { server, url, root } = await worldOnServer();
      const remote = await openRemoteWorld(url, join(root, 'cache'));
      const head = await remote.repo.head('main');
      const ours = await commitOn(remote.repo.path, head, 'src/a.js', GOOD_A);
      // Someone pushes to the server first.
      const theirs = await commitOn(server, head, 'src/b.js', GOOD_B);
      gitIn(server, ['update-ref', 'refs/heads/main', theirs, head]);

      expect(await remote.repo.compareAndSwap('refs/heads/main', ours, head)).toBe(false);
      expect(gitIn(server, ['rev-parse', 'refs/heads/main'])).toBe(theirs);
      expect(await remote.repo.head('main')).toBe(theirs);

      const next = await commitOn(remote.repo.path, theirs, 'src/a.js', GOOD_A);
      expect(await remote.repo.compareAndSwap('refs/heads/main', next, theirs)).toBe(true);
      expect(gitIn(server, ['rev-parse', 'refs/heads/main'])).toBe(next);
    },
    120_000,
  );

  itWith('redis')(
    'runs distributed: workers fetch from the server and push their records there, the scheduler lands them by compare-and-swap',
    async () => {
      // Both agents work at once on the same head, so one change is verified again on the other, on the worker.
      const { server, url, root } = await worldOnServer({}, 1500);
      const env = { GENESIS_QUEUE_PREFIX: `test-${randomUUID()}`, GENESIS_LOCK_MS: '2000', GENESIS_STALLED_MS: '1000', GENESIS_RECONCILE_MS: '1000' };
      const worker = startCli(['worker', '--redis', 'redis://127.0.0.1:6379', '--concurrency', '2', '--cache-dir', join(root, 'worker-cache'), '--json'], env);
      await worker.waitFor(/"type":"ready"/);
      const run = startCli(['run', '--world', url, '--redis', 'redis://127.0.0.1:6379', '--cache-dir', join(root, 'cache')], env);
      expect(await run.exited, `${run.lines.join('\n')}\n${run.stderr()}\n${worker.lines.join('\n')}`).toBe(0);
      worker.child.kill('SIGTERM');
      await expectLandedOnServer(server, ['a', 'b']);
      await expectVerifiedOnWorkers(server, ['a', 'b']);
    },
    180_000,
  );

  it('says which URL it cannot reach, without the password in it', async () => {
    const error = await openRemoteWorld('https://bob:s3cret@127.0.0.1:1/none.git', await tempDir()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'world-unreachable', message: 'cannot fetch the world from https://bob:***@127.0.0.1:1/none.git' });
  });
});

describe('publish:', () => {
  itWith('bwrap')(
    'mirrors the accepted branch and the ledger to another remote after every accepted change',
    async () => {
      const { server, url, root } = await worldOnServer();
      const forge = join(root, 'forge.git');
      gitIn(root, ['init', '--quiet', '--bare', forge]);
      // publish: is read from the accepted head's world.yaml; put it there as a person would (a commit on the server).
      const head = gitIn(server, ['rev-parse', 'refs/heads/main']);
      const yaml = gitIn(server, ['show', `${head}:world.yaml`]);
      const withPublish = await commitOn(server, head, 'world.yaml', `${yaml}\npublish:\n  url: ${forge}\n  ledger: true\n`);
      gitIn(server, ['update-ref', 'refs/heads/main', withPublish, head]);

      const run = startCli(['run', '--world', url, '--cache-dir', join(root, 'cache')]);
      expect(await run.exited, run.stderr()).toBe(0);
      expect(run.stderr()).toMatch(/publish: .*forge\.git now at [0-9a-f]{12}/);
      expect(gitIn(forge, ['rev-parse', 'refs/heads/main'])).toBe(gitIn(server, ['rev-parse', 'refs/heads/main']));
      expect(gitIn(forge, ['for-each-ref', '--format=%(refname)', 'refs/genesis/episodes']).split('\n').length).toBeGreaterThanOrEqual(2);
    },
    180_000,
  );

  it('retries a failed push and shows it, keeps it across runs, and one success makes up for all', async () => {
    const root = await tempDir('genesis-publish-');
    const world = join(root, 'w.world');
    gitIn(root, ['init', '--quiet', '--bare', '-b', 'main', world]);
    const first = await commitOn(world, await emptyCommit(world), 'a.txt', 'a\n');
    gitIn(world, ['update-ref', 'refs/heads/main', first]);
    const forge = join(root, 'forge.git'); // does not exist yet: every push fails
    const events: PublishEvent[] = [];
    const repo = LocalWorld.at(world);
    const publisher = new Publisher(repo, 'main', [{ url: forge, ledger: false }], {
      backoff: backoffPolicy({ initialMs: 100, maxMs: 100 }),
      onEvent: (e) => events.push(e),
    });
    repo.onRefMoved(publisher);
    const second = await commitOn(world, first, 'b.txt', 'b\n');
    expect(await repo.compareAndSwap('refs/heads/main', second, first)).toBe(true);
    await until(() => events.filter((e) => e.type === 'publish-failed').length >= 2);
    expect(events[0]).toMatchObject({ type: 'publish-failed', url: forge, attempt: 1, retryInMs: 100, error: expect.stringContaining('git push') });
    publisher.close();
    expect(await publisher.flush()).toEqual([forge]);

    // The next run on this world finds the remote behind and pushes first, once it can.
    gitIn(root, ['init', '--quiet', '--bare', forge]);
    const later: PublishEvent[] = [];
    await new Publisher(repo, 'main', [{ url: forge, ledger: false }], { onEvent: (e) => later.push(e) }).resume();
    expect(later).toMatchObject([{ type: 'published', url: forge, head: second }]);
    expect(gitIn(forge, ['rev-parse', 'refs/heads/main'])).toBe(second);
  });
});

async function emptyCommit(repo: string): Promise<string> {
  const tree = await gitValue(['mktree'], { cwd: repo, input: '' });
  return gitValue(['commit-tree', tree, '-m', 'root'], { cwd: repo });
}

async function until(ok: () => boolean, timeoutMs = 10_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !ok(); ) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}
