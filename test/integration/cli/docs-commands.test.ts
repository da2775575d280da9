import { spawnSync } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The code blocks a page marks as runnable: a fence whose info string is `sh runnable`. */
function runnableBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  const fence = /^```sh runnable\n([\s\S]*?)^```$/gm;
  for (let m = fence.exec(markdown); m; m = fence.exec(markdown)) blocks.push(m[1]!);
  return blocks;
}

async function markdownPages(): Promise<string[]> {
  const pages = [join(ROOT, 'README.md')];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) await walk(join(dir, entry.name));
      else if (entry.name.endsWith('.md')) pages.push(join(dir, entry.name));
    }
  };
  await walk(join(ROOT, 'docs'));
  return pages;
}

/** A scratch copy of where a reader stands: the checkout's worlds/ beside them, `genesis` on PATH. */
async function readerDir(): Promise<{ cwd: string; env: NodeJS.ProcessEnv }> {
  const cwd = await tempDir('genesis-docs-');
  await symlink(join(ROOT, 'worlds'), join(cwd, 'worlds'));
  const bin = join(cwd, '.bin');
  await mkdir(bin);
  await writeFile(join(bin, 'genesis'), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'bin/genesis.js')}" "$@"\n`);
  await chmod(join(bin, 'genesis'), 0o755);
  return { cwd, env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` } };
}

describe('the commands the README and docs/ show', () => {
  it('mark the walk-throughs of the README and getting-started as runnable', async () => {
    expect(runnableBlocks(await readFile(join(ROOT, 'README.md'), 'utf8')).length).toBeGreaterThanOrEqual(1);
    expect(runnableBlocks(await readFile(join(ROOT, 'docs/getting-started.md'), 'utf8')).length).toBeGreaterThanOrEqual(3);
  });

  it('finds a runnable block and only those', () => {
    const page = '```sh runnable\necho one\n```\n\n```sh\nnot run\n```\n\n```sh runnable\necho two\necho three\n```\n';
    expect(runnableBlocks(page)).toEqual(['echo one\n', 'echo two\necho three\n']);
  });

  itWith('docker')(
    'run as printed, page by page and in order, each line stopping the page when it fails',
    async () => {
      for (const page of await markdownPages()) {
        const blocks = runnableBlocks(await readFile(page, 'utf8'));
        if (blocks.length === 0) continue;
        const { cwd, env } = await readerDir();
        for (const block of blocks) {
          const r = spawnSync('sh', ['-e', '-c', block], { cwd, env, encoding: 'utf8', timeout: 300_000 });
          expect(r.status, `${relative(ROOT, page)}:\n${block}\n${r.stdout}\n${r.stderr}`).toBe(0);
        }
      }
    },
    900_000,
  );
});
