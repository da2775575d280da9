import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, gitValue } from '../../../src/git/git.js';
import { readTaskRetries, TASK_RETRY_REF_PREFIX, writeTaskRetry } from '../../../src/world/task-retries.js';
import { tempDir } from '../../helpers/temp-dir.js';

async function bareRepo(): Promise<string> {
  const repo = join(await tempDir('genesis-retries-'), 'w.world');
  execFileSync('git', ['init', '--bare', '-q', repo]);
  return repo;
}

describe('task retry markers', () => {
  it('writes one ref per retry holding task, note, time and who asked, and reads them back oldest first', async () => {
    const repo = await bareRepo();
    const first = await writeTaskRetry(repo, { task: 'a', note: '  fixed the fixture  ', by: 'cli alice@host', now: new Date('2026-01-02T03:04:05.678Z') });
    const second = await writeTaskRetry(repo, { task: 'a', now: new Date('2026-01-03T00:00:00.000Z') });
    expect(first.ref).toMatch(new RegExp(`^${TASK_RETRY_REF_PREFIX}a/20260102-030405-678-[0-9a-f]{6}$`));
    const json = JSON.parse(await gitValue(['cat-file', 'blob', `${first.ref}:retry.json`], { cwd: repo }));
    expect(json).toEqual({ version: 1, task: 'a', note: 'fixed the fixture', at: '2026-01-02T03:04:05.678Z', by: 'cli alice@host' });
    expect(await readTaskRetries(repo)).toEqual([first, second]);
    expect(second.note).toBeNull();
  });

  it('reads no retries from a world that has none', async () => {
    expect(await readTaskRetries(await bareRepo())).toEqual([]);
  });

  it('skips a marker whose JSON is broken instead of failing every reader', async () => {
    const repo = await bareRepo();
    const good = await writeTaskRetry(repo, { task: 'b' });
    const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: repo, input: '{ not json' });
    const tree = await gitValue(['mktree'], { cwd: repo, input: `100644 blob ${blob}\tretry.json\n` });
    const commit = await gitValue(['commit-tree', tree], { cwd: repo, input: 'hand-made\n' });
    await git(['update-ref', `${TASK_RETRY_REF_PREFIX}b/by-hand`, commit], { cwd: repo });
    expect(await readTaskRetries(repo)).toEqual([good]);
  });
});
