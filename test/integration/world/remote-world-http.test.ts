import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { openRemoteWorld } from '../../../src/world/remote-world.js';
import { startCli } from '../../helpers/cli-process.js';
import { serveGitHttp, type GitHttpServer } from '../../helpers/git-http-server.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';
import { expectLandedOnServer, expectVerifiedOnWorkers } from './server-world-checks.js';

const gitIn = (dir: string, args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();

/** A world made by genesis init, put on a server as a bare repository that takes pushes, and served over HTTP. */
async function worldOverHttp(agentSleepMs = 0): Promise<{ server: string; url: string; root: string; http: GitHttpServer }> {
  const f = await makeWorld({
    sandbox: 'bwrap',
    manifest: baseManifest({ verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 60 } }),
    recording: { a: [{ write: { 'src/a.js': GOOD_A }, sleepMs: agentSleepMs }], b: [{ write: { 'src/b.js': GOOD_B }, sleepMs: agentSleepMs }] },
  });
  const root = await tempDir('genesis-http-server-');
  const server = join(root, 'repos', 'world.git');
  gitIn(root, ['clone', '--quiet', '--mirror', f.world.path, server]);
  gitIn(server, ['config', 'http.receivepack', 'true']);
  const http = await serveGitHttp(join(root, 'repos'));
  return { server, url: `${http.url}/world.git`, root, http };
}

/** A commit on top of `parent` in `repo` changing one file, made with plain git (someone else's push). */
function commitOn(repo: string, parent: string, path: string, content: string): string {
  const env = { ...process.env, GIT_INDEX_FILE: join(repo, `other-${Date.now()}.index`) };
  const run = (args: string[], input?: string) => execFileSync('git', args, { cwd: repo, input, env, encoding: 'utf8' }).trim();
  run(['read-tree', parent]);
  run(['update-index', '--add', '--cacheinfo', `100644,${run(['hash-object', '-w', '--stdin'], content)},${path}`]);
  return run(['-c', 'user.name=o', '-c', 'user.email=o@o', 'commit-tree', run(['write-tree']), '-p', parent, '-m', 'someone else']);
}

describe('a world on a git server over smart HTTP (git http-backend)', () => {
  itWith('bwrap')(
    'genesis run --world http://… lands every task on the server, with the ledger beside it, and the audit passes there',
    async () => {
      const { server, url, root, http } = await worldOverHttp();
      const before = gitIn(server, ['rev-parse', 'refs/heads/main']);

      const run = startCli(['run', '--world', url, '--cache-dir', join(root, 'cache')]);
      expect(await run.exited, `${run.stderr()}\n${http.requests.join('\n')}`).toBe(0);

      // The run went over HTTP both ways: it fetched and it pushed (receive-pack) through the backend.
      expect(http.requests.some((r) => /^GET \/world\.git\/info\/refs\?service=git-upload-pack 200$/.test(r))).toBe(true);
      expect(http.requests.some((r) => /^POST \/world\.git\/git-receive-pack 200$/.test(r))).toBe(true);

      const history = await expectLandedOnServer(server, ['a', 'b']);
      expect(history.map((c) => c.commit)).toContain(before);
      expect(gitIn(server, ['for-each-ref', '--format=%(refname)', 'refs/genesis/episodes']).split('\n').length).toBeGreaterThanOrEqual(2);
    },
    180_000,
  );

  itWith('bwrap')(
    'moves the branch on the server only by compare-and-swap over HTTP: a push that raced it is kept, and the mirror takes it',
    async () => {
      const { server, url, root, http } = await worldOverHttp();
      const remote = await openRemoteWorld(url, join(root, 'cache'));
      const head = await remote.repo.head('main');
      const ours = commitOn(remote.repo.path, head, 'src/a.js', GOOD_A);
      const theirs = commitOn(server, head, 'src/b.js', GOOD_B);
      gitIn(server, ['update-ref', 'refs/heads/main', theirs, head]);

      expect(await remote.repo.compareAndSwap('refs/heads/main', ours, head)).toBe(false);
      expect(gitIn(server, ['rev-parse', 'refs/heads/main'])).toBe(theirs);
      expect(await remote.repo.head('main')).toBe(theirs);

      const next = commitOn(remote.repo.path, theirs, 'src/a.js', GOOD_A);
      expect(await remote.repo.compareAndSwap('refs/heads/main', next, theirs)).toBe(true);
      expect(gitIn(server, ['rev-parse', 'refs/heads/main'])).toBe(next);
      // Both pushes asked the server for its refs; the stale lease was refused on them, so only the second sent a pack.
      expect(http.requests.filter((r) => /^GET \/world\.git\/info\/refs\?service=git-receive-pack 200$/.test(r))).toHaveLength(2);
      expect(http.requests.filter((r) => /^POST \/world\.git\/git-receive-pack 200$/.test(r))).toHaveLength(1);
    },
    120_000,
  );

  itWith('redis')(
    'runs distributed over HTTP: workers fetch from the server and push their records there, the scheduler lands them by compare-and-swap',
    async () => {
      // Both agents work at once on the same head, so one change is verified again on the other, on the worker.
      const { server, url, root, http } = await worldOverHttp(1500);
      const env = { GENESIS_QUEUE_PREFIX: `test-${randomUUID()}`, GENESIS_LOCK_MS: '2000', GENESIS_STALLED_MS: '1000', GENESIS_RECONCILE_MS: '1000' };
      const worker = startCli(['worker', '--redis', 'redis://127.0.0.1:6379', '--concurrency', '2', '--cache-dir', join(root, 'worker-cache'), '--json'], env);
      await worker.waitFor(/"type":"ready"/);
      const run = startCli(['run', '--world', url, '--redis', 'redis://127.0.0.1:6379', '--cache-dir', join(root, 'cache')], env);
      expect(await run.exited, `${run.lines.join('\n')}\n${run.stderr()}\n${worker.lines.join('\n')}\n${http.requests.join('\n')}`).toBe(0);
      worker.child.kill('SIGTERM');
      // The worker worked behind the URL: a mirror of its own, fetched over HTTP, holding the episodes it ran.
      const mirrors = (await readdir(join(root, 'worker-cache'))).filter((name) => name.endsWith('.git'));
      expect(mirrors).toHaveLength(1);
      expect(gitIn(join(root, 'worker-cache', mirrors[0]!), ['for-each-ref', '--format=%(refname)', 'refs/genesis/episodes'])).not.toBe('');
      await expectLandedOnServer(server, ['a', 'b']);
      await expectVerifiedOnWorkers(server, ['a', 'b']);
    },
    180_000,
  );

  itWith('bwrap')(
    'works with a server that asks for a password in the URL, and the password shows nowhere: not in the output, not on disk',
    async () => {
      const password = 's3cret-pw';
      const { server, root } = await worldOverHttp();
      gitIn(server, ['config', '--unset', 'http.receivepack']); // pushes only from an authenticated user
      const http = await serveGitHttp(join(root, 'repos'), { password });
      const url = `${http.url.replace('http://', `http://bob:${password}@`)}/world.git`;

      const run = startCli(['run', '--world', url, '--cache-dir', join(root, 'cache')]);
      expect(await run.exited, run.stderr()).toBe(0);
      expect(http.requests.some((r) => / 401$/.test(r))).toBe(true);
      expect(http.requests.some((r) => /^POST \/world\.git\/git-receive-pack 200$/.test(r))).toBe(true);
      expect(
        (await readAcceptedHistory(server, 'main'))
          .map((c) => c.task)
          .filter(Boolean)
          .sort(),
      ).toEqual(['a', 'b']);
      expect(`${run.lines.join('\n')}\n${run.stderr()}`).not.toContain(password);
      // grep exits 1 when no file under the test's directory (server, scheduler's mirror) holds it.
      expect(spawnSync('grep', ['-rlF', password, root], { encoding: 'utf8' })).toMatchObject({ status: 1, stdout: '' });
    },
    180_000,
  );
});
