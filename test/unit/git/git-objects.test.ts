import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { git, gitValue } from '../../../src/git/git.js';
import { readObject, readText, resolveObject } from '../../../src/git/object-reader.js';
import { writeCommit, writeObject, writeTree } from '../../../src/git/object-writer.js';
import { updateRefs } from '../../../src/git/ref-updates.js';
import { parseTree } from '../../../src/git/tree/entries.js';
import { tempDir } from '../../helpers/temp-dir.js';

async function bareRepo(): Promise<string> {
  const dir = await tempDir('genesis-objects-');
  await git(['init', '--quiet', '--bare', dir], { cwd: dir });
  return dir;
}

describe('objects written without a git process', () => {
  it('are the very objects git writes for the same content, and pass git fsck --strict', async () => {
    const repo = await bareRepo();
    const contents = ['', 'hello\n', randomBytes(3000).toString('latin1'), 'ünïcode ✓\n'];
    for (const text of contents) {
      const ours = await writeObject(repo, 'blob', Buffer.from(text));
      expect(ours).toBe(await gitValue(['hash-object', '-w', '--stdin'], { cwd: repo, input: Buffer.from(text) }));
    }
    const a = await writeObject(repo, 'blob', Buffer.from('a\n'));
    const b = await writeObject(repo, 'blob', Buffer.from('b\n'));
    const sub = await writeTree(repo, [{ mode: '100644', name: 'x', sha: a }]);
    // Git sorts a tree named "d" as "d/": after "d.txt", unlike a plain byte order of the names.
    const entries = [
      { mode: '100644', name: 'd.txt', sha: b },
      { mode: '40000', name: 'd', sha: sub },
      { mode: '100755', name: 'run', sha: a },
      { mode: '120000', name: 'link', sha: b },
    ];
    const tree = await writeTree(repo, entries);
    const gitTree = await gitValue(['mktree'], {
      cwd: repo,
      input: '100644 blob ' + b + '\td.txt\n040000 tree ' + sub + '\td\n100755 blob ' + a + '\trun\n120000 blob ' + b + '\tlink\n',
    });
    expect(tree).toBe(gitTree);
    expect(parseTree((await readObject(repo, tree))!.content).map((e) => e.name)).toEqual(['d.txt', 'd', 'link', 'run']);
    const now = new Date('2026-01-02T03:04:05Z');
    const first = await writeCommit(repo, { tree, parents: [], message: 'first\n', now });
    const second = await writeCommit(repo, { tree: sub, parents: [first], message: 'second\n\nbody\n', now });
    const env = { GIT_AUTHOR_DATE: '1767323045 +0000', GIT_COMMITTER_DATE: '1767323045 +0000' };
    expect(first).toBe(await gitValue(['commit-tree', tree], { cwd: repo, input: 'first\n', env }));
    expect(second).toBe(await gitValue(['commit-tree', sub, '-p', first], { cwd: repo, input: 'second\n\nbody\n', env }));
    await git(['update-ref', 'refs/heads/main', second], { cwd: repo });
    await git(['fsck', '--strict', '--no-dangling'], { cwd: repo });
  });

  it('leaves an object that is already stored as it is', async () => {
    const repo = await bareRepo();
    const sha = await gitValue(['hash-object', '-w', '--stdin'], { cwd: repo, input: 'same\n' });
    expect(await writeObject(repo, 'blob', Buffer.from('same\n'))).toBe(sha);
    expect(await readText(repo, sha)).toBe('same\n');
  });
});

describe('the long-lived object reader', () => {
  it('sees objects and ref moves made after it started, by itself or by git', async () => {
    const repo = await bareRepo();
    expect(await resolveObject(repo, 'refs/heads/main')).toBeNull();
    const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: repo, input: 'one\n' });
    const tree = await gitValue(['mktree'], { cwd: repo, input: `100644 blob ${blob}\tf.txt\n` });
    const c1 = await gitValue(['commit-tree', tree], { cwd: repo, input: 'c1\n' });
    await git(['update-ref', 'refs/heads/main', c1], { cwd: repo });
    expect(await resolveObject(repo, 'refs/heads/main')).toMatchObject({ sha: c1, type: 'commit' });
    expect(await readText(repo, 'refs/heads/main:f.txt')).toBe('one\n');
    const c2 = await gitValue(['commit-tree', tree, '-p', c1], { cwd: repo, input: 'c2\n' });
    await git(['update-ref', 'refs/heads/main', c2], { cwd: repo });
    // Packed refs too: a ref that moved into packed-refs, then moved again.
    await git(['pack-refs', '--all'], { cwd: repo });
    expect((await resolveObject(repo, 'refs/heads/main'))?.sha).toBe(c2);
    await git(['update-ref', 'refs/heads/main', c1], { cwd: repo });
    expect((await resolveObject(repo, 'refs/heads/main'))?.sha).toBe(c1);
    await git(['update-ref', '-d', 'refs/heads/main'], { cwd: repo });
    expect(await resolveObject(repo, 'refs/heads/main')).toBeNull();
    // Objects that went into a pack after the reader started.
    await git(['update-ref', 'refs/heads/main', c2], { cwd: repo });
    await git(['repack', '-a', '-d', '-q'], { cwd: repo });
    expect(await readText(repo, `${c2}:f.txt`)).toBe('one\n');
  });

  it('answers many lookups at once in order, binary content intact, a missing name as null', async () => {
    const repo = await bareRepo();
    const blobs = Array.from({ length: 50 }, (_, i) => randomBytes(i * 97));
    const shas = await Promise.all(blobs.map((b) => writeObject(repo, 'blob', b)));
    const names = shas.flatMap((sha, i) => (i % 7 === 0 ? [sha, `missing-${i}`] : [sha]));
    const got = await Promise.all(names.map((n) => readObject(repo, n)));
    let k = 0;
    names.forEach((n, i) => {
      if (n.startsWith('missing')) expect(got[i]).toBeNull();
      else expect(got[i]!.content.equals(blobs[k++]!)).toBe(true);
    });
    await expect(readObject(repo, 'a\nb')).rejects.toThrow(/not an object name/);
  });

  it('starts afresh when the world at its path was removed and made again', async () => {
    const repo = await bareRepo();
    const one = await writeObject(repo, 'blob', Buffer.from('first world\n'));
    expect(await readText(repo, one)).toBe('first world\n');
    await rm(repo, { recursive: true, force: true });
    await git(['init', '--quiet', '--bare', repo], { cwd: '/' });
    const two = await writeObject(repo, 'blob', Buffer.from('second world\n'));
    expect(await readText(repo, two)).toBe('second world\n');
    expect(await readText(repo, one)).toBeNull();
  });
});

describe('ref transactions through one long-lived update-ref', () => {
  it('moves every ref of a transaction or none, and goes on after a lost compare-and-swap', async () => {
    const repo = await bareRepo();
    const tree = await writeTree(repo, []);
    const c1 = await writeCommit(repo, { tree, parents: [], message: 'c1\n' });
    const c2 = await writeCommit(repo, { tree, parents: [c1], message: 'c2\n' });
    expect(
      await updateRefs(repo, [
        { ref: 'refs/heads/main', next: c1, expected: null },
        { ref: 'refs/genesis/episodes/e1', next: c2 },
      ]),
    ).toEqual({ ok: true, error: '' });
    // Someone else moves main: a swap that expects c1 must fail, and take the ledger ref with it.
    await git(['update-ref', 'refs/heads/main', c2], { cwd: repo });
    const lost = await updateRefs(repo, [
      { ref: 'refs/heads/main', next: c1, expected: c1 },
      { ref: 'refs/genesis/episodes/e2', next: c1 },
    ]);
    expect(lost.ok).toBe(false);
    expect(lost.error).toMatch(/refs\/heads\/main/);
    expect(await resolveObject(repo, 'refs/genesis/episodes/e2')).toBeNull();
    // A ref that must not exist yet, and does.
    expect((await updateRefs(repo, [{ ref: 'refs/genesis/episodes/e1', next: c1, expected: null }])).ok).toBe(false);
    // The next transaction works (a new process), and many at once run one after another.
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => updateRefs(repo, [{ ref: `refs/genesis/episodes/n${i}`, next: i % 2 ? c1 : c2, expected: null }])),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect((await gitValue(['for-each-ref', '--format=%(refname)', 'refs/genesis/episodes/n*'], { cwd: repo })).split('\n')).toHaveLength(10);
    expect((await resolveObject(repo, 'refs/heads/main'))?.sha).toBe(c2);
    await expect(updateRefs(repo, [{ ref: 'HEAD; rm -rf', next: c1 }])).rejects.toThrow(/not a ref update/);
  });
});

describe('the tree diff read through the long-lived cat-file', () => {
  /** A random tree: nested directories, executable files, symlinks, a submodule; names that sort differently as trees. */
  async function randomTree(repo: string, rng: () => number, depth = 0): Promise<string> {
    const names = ['a', 'a.txt', 'a-b', 'b', 'c', 'd.js', 'e'];
    const entries: Array<{ mode: string; name: string; sha: string }> = [];
    for (const name of names) {
      const roll = rng();
      if (roll < 0.3) continue;
      if (roll < 0.45 && depth < 3) entries.push({ mode: '40000', name, sha: await randomTree(repo, rng, depth + 1) });
      else {
        const mode = roll < 0.8 ? '100644' : roll < 0.9 ? '100755' : roll < 0.97 ? '120000' : '160000';
        const sha = mode === '160000' ? 'a'.repeat(40) : await writeObject(repo, 'blob', Buffer.from(`${Math.floor(rng() * 3)}\n`));
        entries.push({ mode, name, sha });
      }
    }
    return writeTree(repo, entries);
  }

  it('reports what git diff-tree -r reports, in its order, on random pairs of trees', async () => {
    const repo = await bareRepo();
    let seed = 7;
    const rng = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const { diffTrees } = await import('../../../src/git/tree/walk.js');
    for (let i = 0; i < 25; i++) {
      const [x, y] = [await randomTree(repo, rng), await randomTree(repo, rng)];
      const raw = (await git(['diff-tree', '-r', '-z', '--no-renames', '--raw', x, y], { cwd: repo })).stdout.split('\0');
      const expected = [];
      for (let k = 0; k + 1 < raw.length; k += 2) {
        const [oldMode, newMode, oldSha, newSha, status] = raw[k]!.replace(/^:/, '').split(' ');
        expected.push({ path: raw[k + 1], status, oldMode, newMode, newSha: status === 'D' ? '' : newSha, oldSha: status === 'A' ? '' : oldSha });
      }
      expect(await diffTrees(repo, x, y)).toEqual(expected);
    }
  });
});

describe('refs listed from the ref store without a process', () => {
  it('lists what git for-each-ref lists: loose, packed, loose over packed, nested, and falls back for a symbolic ref', async () => {
    const { listRefs } = await import('../../../src/git/ref-list.js');
    const repo = await bareRepo();
    const tree = await writeTree(repo, []);
    const c = await Promise.all([1, 2, 3].map((n) => writeCommit(repo, { tree, parents: [], message: `c${n}\n` })));
    const forEachRef = async (prefix: string) =>
      (await gitValue(['for-each-ref', '--format=%(refname) %(objectname)', prefix], { cwd: repo }))
        .split('\n')
        .filter(Boolean)
        .map((l) => ({ ref: l.split(' ')[0], sha: l.split(' ')[1] }));
    const prefix = 'refs/genesis/task-retries/';
    expect(await listRefs(repo, prefix)).toEqual([]);
    await git(['update-ref', `${prefix}a/1`, c[0]!], { cwd: repo });
    await git(['update-ref', `${prefix}b/1`, c[1]!], { cwd: repo });
    await git(['update-ref', 'refs/genesis/episodes/x', c[2]!], { cwd: repo });
    await git(['pack-refs', '--all'], { cwd: repo });
    // After packing: one moved again (loose over packed), one new and nested deeper, one whose name sorts between.
    await git(['update-ref', `${prefix}a/1`, c[2]!], { cwd: repo });
    await git(['update-ref', `${prefix}a-b/2/3`, c[1]!], { cwd: repo });
    await git(['update-ref', `${prefix}a.x`, c[0]!], { cwd: repo });
    expect(await listRefs(repo, prefix)).toEqual(await forEachRef(prefix));
    expect((await listRefs(repo, prefix)).map((r) => r.ref)).toContain(`${prefix}b/1`);
    await git(['update-ref', '-d', `${prefix}b/1`], { cwd: repo });
    expect(await listRefs(repo, prefix)).toEqual(await forEachRef(prefix));
    await git(['symbolic-ref', `${prefix}sym`, `${prefix}a/1`], { cwd: repo });
    expect(await listRefs(repo, prefix)).toEqual(await forEachRef(prefix));
  });
});
