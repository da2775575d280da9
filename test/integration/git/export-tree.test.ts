import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFile, lstat, mkdir, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportTree } from '../../../src/git/tree/export.js';
import { git, gitValue } from '../../../src/git/git.js';
import { writeSmallTree } from '../../../src/git/tree/write-small.js';
import { tempDir } from '../../helpers/temp-dir.js';

async function bareRepo(): Promise<string> {
  const path = join(await tempDir('genesis-export-'), 'w.world');
  execFileSync('git', ['init', '--quiet', '--bare', path]);
  return path;
}

const blob = (repo: string, content: string | Buffer) => gitValue(['hash-object', '-w', '--stdin'], { cwd: repo, input: content });

/** A tree of the given entries (mode, object, path), through a private index. */
async function makeTree(repo: string, entries: Array<[string, string, string]>): Promise<string> {
  const env = { GIT_INDEX_FILE: join(repo, `test-${Date.now()}-${Math.random()}.index`) };
  await git(['update-index', '--add', '-z', '--index-info'], { cwd: repo, env, input: entries.map(([m, s, p]) => `${m} ${s}\t${p}\0`).join('') });
  return gitValue(['write-tree'], { cwd: repo, env });
}

/** What `git archive | tar -x --no-same-owner` writes, as the export did before it wrote small trees itself. */
function archiveInto(repo: string, tree: string, dir: string): void {
  execFileSync('sh', ['-c', 'mkdir -p "$2" && git archive --format=tar "$1" | tar -x -f - -C "$2" --no-same-owner', 'sh', tree, dir], { cwd: repo });
}

/** Every entry under `dir`: its kind, permission bits, owner, and content or link target. */
async function listing(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const name of (await readdir(join(dir, prefix))).sort()) {
    const path = join(prefix, name);
    const info = await lstat(join(dir, path));
    const what = info.isSymbolicLink()
      ? `link ${await readlink(join(dir, path))}`
      : info.isDirectory()
        ? 'dir'
        : `file ${createHash('sha256')
            .update(await readFile(join(dir, path)))
            .digest('hex')}`;
    out.push(`${path} ${(info.mode & 0o7777).toString(8)} ${info.uid}:${info.gid} ${what}`);
    if (info.isDirectory()) out.push(...(await listing(dir, path)));
  }
  return out;
}

describe('exporting a tree for a gate', () => {
  it('writes a small tree with no process exactly as git archive and tar do: modes, links, nested and submodule directories', async () => {
    const repo = await bareRepo();
    const script = await blob(repo, '#!/bin/sh\necho hi\n');
    const commit = await gitValue(['commit-tree', await makeTree(repo, [['100644', await blob(repo, 'x'), 'x']]), '-m', 'sub'], { cwd: repo });
    const tree = await makeTree(repo, [
      ['100644', await blob(repo, 'hello\n'), 'README.md'],
      ['100644', await blob(repo, ''), 'empty'],
      ['100755', script, 'bin/run'],
      ['120000', await blob(repo, 'bin/run'), 'run-link'],
      ['120000', await blob(repo, '/etc/passwd'), 'docs/outside'],
      ['160000', commit, 'vendor/sub'],
      ['100644', await blob(repo, Buffer.from([0, 1, 2, 255])), 'deep/a/b/c/bytes.bin'],
      ['100644', await blob(repo, 'é\n'), 'deep/ünïcode name.txt'],
    ]);
    const root = await tempDir('genesis-export-out-');
    await mkdir(join(root, 'own'));
    expect(await writeSmallTree(repo, tree, join(root, 'own'))).toBe(true);
    archiveInto(repo, tree, join(root, 'archive'));
    const own = await listing(join(root, 'own'));
    expect(own).toEqual(await listing(join(root, 'archive')));
    expect(own).toContain(`run-link 777 ${process.getuid?.()}:${process.getgid?.()} link bin/run`);
    expect(own.some((l) => l.startsWith('vendor/sub ') && l.endsWith(' dir'))).toBe(true);
  });

  it('stamps every entry of a small tree, and the directory itself, with the time it is given, as git archive stamps one time', async () => {
    const repo = await bareRepo();
    const tree = await makeTree(repo, [
      ['100644', await blob(repo, 'a\n'), 'src/a.js'],
      ['100755', await blob(repo, '#!/bin/sh\n'), 'bin/run'],
      ['120000', await blob(repo, 'src/a.js'), 'link'],
      ['100644', await blob(repo, 't\n'), 'test/deep/a.test.js'],
    ]);
    // Whole seconds: utimes takes seconds as a float, so a stamp with milliseconds may come back a nanosecond off in mtimeMs.
    const stamp = new Date(Math.floor((Date.now() - 60_000) / 1000) * 1000);
    const root = await tempDir('genesis-export-out-');
    const times = async (dir: string) => {
      const paths = ['', 'src', 'src/a.js', 'bin', 'bin/run', 'link', 'test', 'test/deep', 'test/deep/a.test.js'];
      return Promise.all(paths.map(async (p) => `${p} ${(await lstat(join(dir, p))).mtimeMs}`));
    };
    expect(await exportTree(repo, tree, join(root, 'first'), stamp)).toBe('stamped');
    // Written later, with the same stamp: a second export is alike to the first in times too, as a cp -a copy would be.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await exportTree(repo, tree, join(root, 'second'), stamp)).toBe('stamped');
    const first = await times(join(root, 'first'));
    expect(first.every((line) => line.endsWith(` ${stamp.getTime()}`))).toBe(true);
    expect(await times(join(root, 'second'))).toEqual(first);
  });

  it('leaves to git archive what changes its output or is not a plain tree, and writes nothing itself then', async () => {
    const repo = await bareRepo();
    const file = await blob(repo, 'a\n');
    const cases: Record<string, string> = {
      // export-ignore: git archive leaves the file out; writing it here would differ.
      attributes: await makeTree(repo, [
        ['100644', await blob(repo, 'secret.txt export-ignore\n'), '.gitattributes'],
        ['100644', file, 'secret.txt'],
        ['100644', file, 'kept.txt'],
      ]),
      many: await makeTree(
        repo,
        Array.from({ length: 1001 }, (_, i): [string, string, string] => ['100644', file, `f/${i}.txt`]),
      ),
      // Names no checkout writes, in a tree object made by hand.
      dotgit: await gitValue(['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'], {
        cwd: repo,
        input: Buffer.concat([Buffer.from('100644 .git\0'), Buffer.from(file, 'hex')]),
      }),
      dotdot: await gitValue(['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'], {
        cwd: repo,
        input: Buffer.concat([Buffer.from('100644 ..\0'), Buffer.from(file, 'hex')]),
      }),
      twice: await gitValue(['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'], {
        cwd: repo,
        input: Buffer.concat([Buffer.from('100644 a\0'), Buffer.from(file, 'hex'), Buffer.from('100644 a\0'), Buffer.from(file, 'hex')]),
      }),
    };
    const root = await tempDir('genesis-export-out-');
    for (const [name, tree] of Object.entries(cases)) {
      await mkdir(join(root, name));
      expect(await writeSmallTree(repo, tree, join(root, name)), name).toBe(false);
      expect(await readdir(join(root, name)), name).toEqual([]);
    }
    await exportTree(repo, cases.attributes!, join(root, 'exported'));
    expect((await readdir(join(root, 'exported'))).sort()).toEqual(['.gitattributes', 'kept.txt']);

    // Line endings the world's own config asks git archive for.
    const plain = await makeTree(repo, [['100644', await blob(repo, 'one\ntwo\n'), 'text.txt']]);
    await appendFile(join(repo, 'config'), '[core]\n\tautocrlf = true\n');
    await mkdir(join(root, 'crlf'));
    expect(await writeSmallTree(repo, plain, join(root, 'crlf'))).toBe(false);
    await exportTree(repo, plain, join(root, 'crlf'));
    expect(await readFile(join(root, 'crlf', 'text.txt'), 'utf8')).toBe('one\r\ntwo\r\n');
  });

  it('says export-failed, naming no host path, for a tree the world does not hold', async () => {
    const repo = await bareRepo();
    const out = join(await tempDir('genesis-export-out-'), 'gate');
    const failed = exportTree(repo, 'f'.repeat(40), out);
    await expect(failed).rejects.toMatchObject({ code: 'export-failed' });
    await expect(failed).rejects.not.toMatchObject({ message: expect.stringContaining(out) });
  });
});
