import { execFileSync } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Publisher, type PublishEvent } from '../../../src/world/publisher.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { tempDir } from '../../helpers/temp-dir.js';

const git = (cwd: string, args: string[], input?: string) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, input, encoding: 'utf8' }).trim();

describe('a publisher whose branch moves while a push is on its way', () => {
  it('sends the newest head: a push that started before a move does not count as sending it', async () => {
    const root = await tempDir('genesis-publish-race-');
    const world = join(root, 'w.world');
    git(root, ['init', '--quiet', '--bare', '-b', 'main', world]);
    const tree = git(world, ['mktree'], '');
    const first = git(world, ['commit-tree', tree, '-m', 'root']);
    git(world, ['update-ref', 'refs/heads/main', first]);
    // A slow remote: each push waits in its hook, so the next move comes while the push runs.
    const forge = join(root, 'forge.git');
    git(root, ['init', '--quiet', '--bare', '-b', 'main', forge]);
    await writeFile(join(forge, 'hooks', 'pre-receive'), '#!/bin/sh\ncat >/dev/null\nsleep 1\n');
    await chmod(join(forge, 'hooks', 'pre-receive'), 0o755);

    const events: PublishEvent[] = [];
    const repo = LocalWorld.at(world);
    const publisher = new Publisher(repo, 'main', [{ url: forge, ledger: false }], { onEvent: (e) => events.push(e) });
    repo.onRefMoved(publisher);
    const second = git(world, ['commit-tree', tree, '-p', first, '-m', 'second']);
    const third = git(world, ['commit-tree', tree, '-p', second, '-m', 'third']);
    expect(await repo.compareAndSwap('refs/heads/main', second, first)).toBe(true);
    await new Promise((r) => setTimeout(r, 300)); // the push of `second` is in the remote's hook now
    expect(await repo.compareAndSwap('refs/heads/main', third, second)).toBe(true);

    expect(await publisher.flush()).toEqual([]);
    publisher.close();
    expect(git(forge, ['rev-parse', 'refs/heads/main'])).toBe(third);
    expect(events.filter((e) => e.type === 'publish-failed')).toEqual([]);
  }, 30_000);
});
