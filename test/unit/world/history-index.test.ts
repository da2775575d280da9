import { appendFile, readFile } from 'node:fs/promises';
import { doneTasksOf } from '../../../src/world/history/done-tasks.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRng, type Rng } from '../../../src/reliability/prng.js';
import { acceptedCommitMessage, historyIndexOf, readAcceptedHistory, readDoneTasks, toAccepted } from '../../../src/world/history/accepted-history.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { readFirstParentCommits } from '../../../src/git/read-commits.js';
import { git } from '../../../src/git/git.js';
import { HistoryIndex } from '../../../src/world/history/history-index.js';
import { writeCommit, writeTree } from '../../../src/git/object-writer.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** A real bare repository whose commits are made directly (object-writer.ts), fast enough for hundreds. */
async function world(): Promise<{ repo: string; commit: (parents: string[], task: string | null) => Promise<string> }> {
  const repo = await tempDir('genesis-index-');
  await git(['init', '--quiet', '--bare', repo], { cwd: repo });
  const tree = await writeTree(repo, []);
  let n = 0;
  const commit = (parents: string[], task: string | null) => {
    n++;
    const message = task
      ? acceptedCommitMessage({ title: `change ${n}`, episode: `e${n}`, task, attempt: 1, agent: 'test', verified: 'ok', score: n % 3 === 0 ? n : null })
      : `a commit of a person, no trailers ${n}\n`;
    return writeCommit(repo, { tree, parents, message });
  };
  return { repo, commit };
}

/** Tasks done at `at` as the whole history says: the truth the index must match. */
async function truth(repo: string, at: string): Promise<Set<string>> {
  return new Set((await readAcceptedHistory(repo, '', at)).flatMap((c) => (c.task ? [c.task] : [])));
}

function fresh(repo: string, file: string | null = null): HistoryIndex {
  return new HistoryIndex((rev) => readAcceptedHistory(repo, '', rev), file);
}

/** Random histories: appends (with and without trailers), merges, resets to older commits and unrelated roots. */
async function randomHistory(rng: Rng, steps: number, check: (repo: string, head: string, seen: string[], kind: string) => Promise<void>): Promise<void> {
  const w = await world();
  const seen: string[] = [];
  let head = await w.commit([], null);
  seen.push(head);
  for (let step = 0; step < steps; step++) {
    const roll = rng.nextInt(10);
    let kind = 'append';
    if (roll < 6) {
      for (let k = 1 + rng.nextInt(4); k > 0; k--) head = await w.commit([head], rng.nextInt(4) === 0 ? null : `t${rng.nextInt(30)}`);
    } else if (roll < 8) {
      // A merge: the first parent stays on the branch, the side chain's tasks are not on it.
      const side = await w.commit([seen[rng.nextInt(seen.length)]!], `side${rng.nextInt(5)}`);
      head = await w.commit([head, side], `t${rng.nextInt(30)}`);
      kind = 'merge';
    } else if (roll === 8) {
      head = seen[rng.nextInt(seen.length)]!;
      head = await w.commit([head], `t${rng.nextInt(30)}`);
      kind = 'reset';
    } else {
      head = await w.commit([], `root${step}`);
      kind = 'unrelated';
    }
    seen.push(head);
    await git(['update-ref', 'refs/heads/main', head], { cwd: w.repo });
    await check(w.repo, head, seen, kind);
  }
}

describe('the history index', () => {
  it('answers as a full read of the history does, at the head and at older commits, on random histories', async () => {
    for (const seed of [1, 2, 3]) {
      const rng = createRng(seed);
      let index: HistoryIndex | null = null;
      await randomHistory(rng, 16, async (repo, head, seen, kind) => {
        const known = index !== null;
        index ??= fresh(repo);
        const before = { ...index.stats };
        const expected = await truth(repo, head);
        expect(await index.doneAt(head)).toEqual(expected);
        // Incremental: an append or a merge on top of the head it knew is one walk of the new commits, never a rebuild.
        if (known && (kind === 'append' || kind === 'merge'))
          expect(index.stats, `seed ${seed}, ${kind}`).toEqual({ walks: before.walks + 1, rebuilds: before.rebuilds });
        if (kind === 'unrelated') expect(index.stats.rebuilds).toBe(before.rebuilds + 1);
        // The same answer as an index built from nothing at this head (every third step: each is a full read).
        if (seen.length % 3 === 0) expect(await fresh(repo).doneAt(head)).toEqual(expected);
        // Older commits on the head's chain, and commits of abandoned histories.
        for (let k = 0; k < 2; k++) {
          const old = seen[rng.nextInt(seen.length)]!;
          expect(await index.doneAt(old), `seed ${seed}, an older commit`).toEqual(await truth(repo, old));
        }
        // As a run does: the head asked about last, so the next step starts from it.
        expect(await index.doneAt(head)).toEqual(expected);
      });
    }
  });

  it("starts over from scratch when the head it knows is not on the new head's chain (a forced push, a restore)", async () => {
    const w = await world();
    let head = await w.commit([], null);
    for (let i = 0; i < 5; i++) head = await w.commit([head], `a${i}`);
    const index = fresh(w.repo);
    expect(await index.doneAt(head)).toEqual(new Set(['a0', 'a1', 'a2', 'a3', 'a4']));
    expect(index.stats).toEqual({ walks: 0, rebuilds: 1 });
    const next = await w.commit([head], 'a5');
    expect(await index.doneAt(next)).toEqual(new Set(['a0', 'a1', 'a2', 'a3', 'a4', 'a5']));
    expect(index.stats).toEqual({ walks: 1, rebuilds: 1 });
    // The history rewritten: a new root whose chain never meets the indexed head.
    let other = await w.commit([], 'b0');
    other = await w.commit([other], 'b1');
    expect(await index.doneAt(other)).toEqual(new Set(['b0', 'b1']));
    expect(index.stats.rebuilds).toBe(2);
    expect(index.has(next)).toBe(false);
  });

  it('is stored under the git directory and read back by a new process, which then walks nothing', async () => {
    const w = await world();
    let head = await w.commit([], null);
    for (let i = 0; i < 8; i++) head = await w.commit([head], `t${i}`);
    const file = join(w.repo, 'genesis', 'history-index.jsonl');
    const first = fresh(w.repo, file);
    await first.doneAt(head);
    const next = await w.commit([head], 't8');
    await first.doneAt(next);
    const second = fresh(w.repo, file);
    await second.load();
    expect(second.size).toBe(10);
    expect(await second.doneAt(next)).toEqual(await truth(w.repo, next));
    expect(second.stats).toEqual({ walks: 0, rebuilds: 0 });
    // A torn last line (a crash while writing) and a line whose parent is unknown are dropped, the rest kept.
    await appendFile(file, `${JSON.stringify([next.replace(/^./, 'f'), 'e'.repeat(40), 'x', null, null, null])}\n["abc`);
    const third = fresh(w.repo, file);
    await third.load();
    expect(third.size).toBe(10);
    expect(await third.doneAt(next)).toEqual(await truth(w.repo, next));
    expect((await readFile(file, 'utf8')).split('\n')[0]).toBe('{"version":3}');
  });

  it('learns a commit Genesis wrote on an indexed one without asking git, and answers for it as git would', async () => {
    const w = await world();
    let head = await w.commit([], null);
    for (let i = 0; i < 3; i++) head = await w.commit([head], `a${i}`);
    const file = join(w.repo, 'genesis', 'history-index.jsonl');
    const index = fresh(w.repo, file);
    await index.doneAt(head);
    const written = await w.commit([head], 'a3');
    const [raw] = await readFirstParentCommits(w.repo, `${written}^!`);
    await index.learn(toAccepted(raw!));
    expect(await index.doneAt(written)).toEqual(await truth(w.repo, written));
    expect(index.stats).toEqual({ walks: 0, rebuilds: 1 });
    // Stored too: a new process knows it without a walk.
    const second = fresh(w.repo, file);
    await second.load();
    expect(await second.doneAt(written)).toEqual(await truth(w.repo, written));
    expect(second.stats).toEqual({ walks: 0, rebuilds: 0 });
  });

  it("learns the commits a world writes (a speculative commit that lands as it is) into that world's index", async () => {
    const w = await world();
    const root = await w.commit([], null);
    const one = await w.commit([root], 'one');
    await git(['update-ref', 'refs/heads/main', one], { cwd: w.repo });
    const local = LocalWorld.at(w.repo);
    expect(await local.doneTasks('main')).toEqual(new Set(['one']));
    const index = await historyIndexOf(w.repo);
    const message = acceptedCommitMessage({ title: 'two', episode: 'e2', task: 'two', attempt: 1, agent: 'test', verified: 'ok', score: null });
    const two = await local.commitTree(await local.treeOf(one), [one], message);
    expect(index.has(two)).toBe(true);
    await git(['update-ref', 'refs/heads/main', two], { cwd: w.repo });
    const { walks, rebuilds } = index.stats;
    expect(await local.doneTasks('main')).toEqual(new Set(['one', 'two']));
    expect(index.stats).toEqual({ walks, rebuilds });
  });

  it('leaves out a written commit whose first parent it does not know, and walks to it when asked', async () => {
    const w = await world();
    const root = await w.commit([], null);
    const one = await w.commit([root], 'one');
    const index = fresh(w.repo);
    await index.doneAt(root);
    const two = await w.commit([one], 'two');
    await index.learn(toAccepted((await readFirstParentCommits(w.repo, `${two}^!`))[0]!));
    expect(index.has(two)).toBe(false);
    expect(await index.doneAt(two)).toEqual(new Set(['one', 'two']));
    expect(index.stats).toEqual({ walks: 1, rebuilds: 1 });
  });

  it('serves readDoneTasks for a world, at its branch and at an earlier commit', async () => {
    const w = await world();
    const root = await w.commit([], null);
    const one = await w.commit([root], 'one');
    const two = await w.commit([one], 'two');
    await git(['update-ref', 'refs/heads/main', two], { cwd: w.repo });
    expect(await readDoneTasks(w.repo, 'main')).toEqual(new Set(['one', 'two']));
    expect(await readDoneTasks(w.repo, 'main', one)).toEqual(new Set(['one']));
    await expect(readDoneTasks(w.repo, 'nope')).rejects.toThrow(/not in the world/);
  });
});

describe('done tasks with reopenings', () => {
  it('counts a task done only when it landed after its latest reopening, on top of what was done before', () => {
    // Newest first, as git prints the first-parent history.
    const history = [{ reopen: 'b' }, { task: 'c' }, { task: 'a' }, { reopen: 'a' }, { task: 'b' }];
    expect(doneTasksOf(history, new Set(['a', 'z']))).toEqual(new Set(['a', 'c', 'z']));
    expect(doneTasksOf(history.slice(1))).toEqual(new Set(['a', 'b', 'c']));
    // A reopening newer than everything walked takes the task out of the base too.
    expect(doneTasksOf([{ reopen: 'z' }], new Set(['z', 'y']))).toEqual(new Set(['y']));
  });
});
