import { execFileSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** A repository of a project of one's own (not a world), with one commit per step: each step's files written (null removes one). */
export async function projectHistory(dir: string, steps: ReadonlyArray<{ message: string; files: Record<string, string | null> }>): Promise<string[]> {
  const run = (...args: string[]) =>
    execFileSync('git', ['-C', dir, ...args], {
      encoding: 'utf8',
      env: { ...process.env, GIT_AUTHOR_NAME: 'dev', GIT_AUTHOR_EMAIL: 'dev@example.org', GIT_COMMITTER_NAME: 'dev', GIT_COMMITTER_EMAIL: 'dev@example.org' },
    }).trim();
  await mkdir(dir, { recursive: true });
  run('init', '--quiet', '--initial-branch=main');
  const commits: string[] = [];
  for (const step of steps) {
    for (const [path, content] of Object.entries(step.files)) {
      if (content === null) await rm(join(dir, path), { force: true });
      else {
        await mkdir(dirname(join(dir, path)), { recursive: true });
        await writeFile(join(dir, path), content);
      }
    }
    run('add', '--all');
    run('commit', '--quiet', '--allow-empty', '-m', step.message);
    commits.push(run('rev-parse', 'HEAD'));
  }
  return commits;
}
