import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describePublish } from '../../../src/cli/world-location.js';
import { backoffPolicy } from '../../../src/retry/backoff-policy.js';
import { Publisher, type PublishEvent } from '../../../src/world/publisher.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { tempDir } from '../../helpers/temp-dir.js';

const git = (cwd: string, args: string[], input?: string) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, input, encoding: 'utf8' }).trim();

/** A bare world whose main has two commits, the second made by a compare-and-swap the publisher hears of. */
async function worldWithPublisher(backoff: ReturnType<typeof backoffPolicy>) {
  const root = await tempDir('genesis-publish-backoff-');
  const world = join(root, 'w.world');
  git(root, ['init', '--quiet', '--bare', '-b', 'main', world]);
  const tree = git(world, ['mktree'], '');
  const first = git(world, ['commit-tree', tree, '-m', 'root']);
  git(world, ['update-ref', 'refs/heads/main', first]);
  const forge = join(root, 'forge.git'); // never created: every push fails
  const events: PublishEvent[] = [];
  const repo = LocalWorld.at(world);
  const publisher = new Publisher(repo, 'main', [{ url: forge, ledger: false }], { backoff, onEvent: (e) => events.push(e) });
  repo.onRefMoved(publisher);
  const second = git(world, ['commit-tree', tree, '-p', first, '-m', 'second']);
  expect(await repo.compareAndSwap('refs/heads/main', second, first)).toBe(true);
  return { publisher, events, forge };
}

describe('a publisher whose pushes keep failing', () => {
  it('waits by its backoff policy and, once the policy gives up, leaves the remote for the next run', async () => {
    const { publisher, events, forge } = await worldWithPublisher(backoffPolicy({ initialMs: 50, maxMs: 400, factor: 2, maxRetries: 2 }));
    for (const end = Date.now() + 10_000; events.length < 3 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 300)); // no fourth try comes
    expect(events.map((e) => e.type === 'publish-failed' && [e.attempt, e.retryInMs])).toEqual([
      [1, 50],
      [2, 100],
      [3, null],
    ]);
    expect(describePublish(events[2]!)).toMatch(/failed \(try 3\), tried again by the next run: /);
    expect(describePublish(events[0]!)).toMatch(/failed \(try 1\), again in 0s: /);
    publisher.close();
    expect(await publisher.flush()).toEqual([forge]);
  });
});
