import { Queue } from 'bullmq';
import { describe, expect } from 'vitest';
import { queuePrefix, resultQueueOf, worldKeyOf } from '../../../src/queue/bullmq/distributed-job.js';
import { connectRedis } from '../../../src/queue/redis/connection.js';
import { git, gitValue } from '../../../src/git/git.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import type { WorldRepo } from '../../../src/world/world-repo.js';
import { startCli } from '../../helpers/cli-process.js';
import { fastClusterEnv, makeTaskWorld } from '../../helpers/distributed-world.js';
import { itWith } from '../../helpers/services.js';

const REDIS = 'redis://127.0.0.1:6379';

/** A commit on `base` that rewrites files: what a cheating agent would like to land. */
async function forgedCandidate(world: WorldRepo, base: string, files: Record<string, string>): Promise<string> {
  const env = { GIT_INDEX_FILE: `${world.scratchDir}-forge.index` };
  await git(['read-tree', base], { cwd: world.path, env });
  for (const [path, content] of Object.entries(files)) {
    const sha = await gitValue(['hash-object', '-w', '--stdin'], { cwd: world.path, input: content });
    await git(['update-index', '--add', '--cacheinfo', `100644,${sha},${path}`], { cwd: world.path, env });
  }
  return world.commitTree(await gitValue(['write-tree'], { cwd: world.path, env }), [base], 'forged\n');
}

describe('a result written straight into Redis', () => {
  itWith('redis')('lands nothing when it claims "passed" for a candidate no gate passed', async () => {
    const { f } = await makeTaskWorld(1, 0, 1);
    const env = fastClusterEnv();
    // No worker runs: the only result the scheduler will ever see is the forged one.
    const scheduler = startCli(['run', '--world', f.world.path, '--redis', REDIS, '--json'], env);
    const start = JSON.parse(await scheduler.waitFor(/"type":"episode-start"/)) as { id: string; task: string };
    const base = await f.world.head('main');
    // A wrong function and an edited protected test, as the red team's agent wrote.
    const cheat = await forgedCandidate(f.world, base, {
      'src/t1.js': "export const v = 'wrong';\n",
      'test/t1.test.js': "import test from 'node:test';\ntest('t1', () => {});\n",
    });
    const redis = await connectRedis(REDIS);
    process.env.GENESIS_QUEUE_PREFIX = env.GENESIS_QUEUE_PREFIX;
    const results = new Queue(resultQueueOf(worldKeyOf('fixture', f.world.path)), { connection: redis, prefix: queuePrefix() });
    try {
      await results.add(
        'result',
        { episodeId: start.id, task: start.task, attempt: 1, base, candidate: cheat, verdict: 'passed', reason: null, message: null, signature: null },
        { jobId: start.id },
      );
      const end = JSON.parse(await scheduler.waitFor(/"type":"episode-end"/)) as { outcome: string; reason: string };
      expect(end).toMatchObject({ outcome: 'rejected', reason: 'unverified-result' });
      scheduler.child.kill('SIGINT');
      await scheduler.exited;
      expect(await f.world.head('main')).toBe(base);
      const record = await new GitLedger(f.world.path).read(start.id);
      expect(record).toMatchObject({ status: 'final', outcome: 'rejected', reason: 'unverified-result', commit: null });
    } finally {
      delete process.env.GENESIS_QUEUE_PREFIX;
      await results.close();
      redis.disconnect();
      scheduler.child.kill('SIGKILL');
    }
  });
});
