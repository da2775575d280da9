import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
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

/**
 * The transcripts a page marks as runnable: a fence whose info string is `console runnable`, each
 * `$ command` line followed by what the command prints, which the page claims it prints today.
 */
function transcripts(markdown: string): Array<{ command: string; output: string }> {
  const found: Array<{ command: string; output: string }> = [];
  const fence = /^```console runnable\n([\s\S]*?)^```$/gm;
  for (let m = fence.exec(markdown); m; m = fence.exec(markdown)) {
    for (const part of m[1]!.split(/^\$ /m).slice(1)) {
      const [command, ...output] = part.split('\n');
      found.push({ command: command!, output: tidy(output.join('\n')) });
    }
  }
  return found;
}

/** Output as a page can print it: no trailing spaces, no blank lines at the end. */
function tidy(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trimEnd();
}

/** Read when the tests are collected, so each page is a test of its own with its own time limit. */
function markdownPages(): Array<{ name: string; text: string }> {
  const pages = [join(ROOT, 'README.md')];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (entry.name.endsWith('.md')) pages.push(join(dir, entry.name));
    }
  };
  walk(join(ROOT, 'docs'));
  return pages.map((page) => ({ name: relative(ROOT, page), text: readFileSync(page, 'utf8') }));
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
  const pages = markdownPages();
  const page = (name: string): string => pages.find((p) => p.name === name)!.text;

  it('mark the walk-throughs of the README and getting-started, and the model transcripts, as runnable', () => {
    expect(runnableBlocks(page('README.md')).length).toBeGreaterThanOrEqual(1);
    expect(runnableBlocks(page('docs/getting-started.md')).length).toBeGreaterThanOrEqual(4);
    expect(transcripts(page('docs/guides/reliability-and-planning.md')).length).toBeGreaterThanOrEqual(5);
  });

  it('finds a runnable block and only those', () => {
    const markdown = '```sh runnable\necho one\n```\n\n```sh\nnot run\n```\n\n```sh runnable\necho two\necho three\n```\n';
    expect(runnableBlocks(markdown)).toEqual(['echo one\n', 'echo two\necho three\n']);
  });

  it('finds each command of a runnable transcript with what it prints', () => {
    const markdown = '```console runnable\n$ echo a\na  \n\n$ printf "b\\n\\nc"\nb\n\nc\n```\n\n```console\n$ not run\n```\n';
    expect(transcripts(markdown)).toEqual([
      { command: 'echo a', output: 'a' },
      { command: 'printf "b\\n\\nc"', output: 'b\n\nc' },
    ]);
  });

  // Each page starts from a scratch copy of its own; a walk-through runs a whole world (several
  // minutes on a loaded 2-core machine), so each page has a time limit of its own.
  for (const { name, text } of pages.filter((p) => runnableBlocks(p.text).length > 0)) {
    itWith('docker')(
      `${name}: its runnable blocks run as printed, in order, each line stopping the page when it fails`,
      async () => {
        const { cwd, env } = await readerDir();
        for (const block of runnableBlocks(text)) {
          const r = spawnSync('sh', ['-e', '-c', block], { cwd, env, encoding: 'utf8', timeout: 900_000 });
          expect(r.status, `${name}:\n${block}\n${r.stdout}\n${r.stderr}${r.error ? `\n${r.error.message}` : ''}`).toBe(0);
        }
      },
      1_800_000,
    );
  }

  for (const { name, text } of pages.filter((p) => transcripts(p.text).length > 0)) {
    it(`${name}: its runnable transcripts print what they show`, async () => {
      const { cwd, env } = await readerDir();
      for (const { command, output } of transcripts(text)) {
        const r = spawnSync('sh', ['-e', '-c', command], { cwd, env, encoding: 'utf8', timeout: 120_000 });
        expect(r.status, `${name}: $ ${command}\n${r.stderr}`).toBe(0);
        expect(tidy(r.stdout), `${name}: $ ${command}`).toBe(output);
      }
    }, 300_000);
  }
});
