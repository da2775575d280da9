import { randomBytes } from 'node:crypto';
import { git, gitValue } from '../git/git.js';
import { readText } from '../git/object-reader.js';
import { listRefs } from '../git/ref-list.js';

export const TASK_RETRY_REF_PREFIX = 'refs/genesis/task-retries/';

/**
 * A person's decision that a blocked task deserves more attempts. Failures of the task that ended
 * before `at` no longer count toward `retry.maxAttempts`; the episodes themselves stay in the
 * ledger, so the statistics still see every attempt.
 */
export interface TaskRetry {
  version: 1;
  task: string;
  /** Why, or what changed since the failures (a fixed test, a new hint in the task text). */
  note: string | null;
  /** ISO time of the retry: failures that ended at or before it are forgiven. */
  at: string;
  /** Who asked, as the caller names them (`dashboard 127.0.0.1`, `cli alice@host`). */
  by: string | null;
}

/** A retry as stored, with the ref that keeps it. */
export interface StoredTaskRetry extends TaskRetry {
  ref: string;
}

/**
 * Records a retry as `refs/genesis/task-retries/<task>/<stamp>-<random>`: a commit whose tree holds
 * `retry.json`. Like the ledger, one ref per marker means no lock and no lost update between two
 * people retrying at once, and `git clone --mirror` carries the markers with the world.
 */
export async function writeTaskRetry(repo: string, input: { task: string; note?: string | null; by?: string | null; now?: Date }): Promise<StoredTaskRetry> {
  const now = input.now ?? new Date();
  const retry: TaskRetry = { version: 1, task: input.task, note: input.note?.trim() || null, at: now.toISOString(), by: input.by ?? null };
  const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: repo, input: `${JSON.stringify(retry, null, 2)}\n` });
  const tree = await gitValue(['mktree'], { cwd: repo, input: `100644 blob ${blob}\tretry.json\n` });
  const message = `retry task ${retry.task}${retry.note ? `: ${retry.note}` : ''}\n`;
  const commit = await gitValue(['commit-tree', tree], { cwd: repo, input: message });
  const ref = `${TASK_RETRY_REF_PREFIX}${retry.task}/${stampOf(now)}-${randomBytes(3).toString('hex')}`;
  // The zero old value makes update-ref refuse to overwrite: a marker is never replaced.
  await git(['update-ref', ref, commit, '0'.repeat(40)], { cwd: repo });
  return { ...retry, ref };
}

/** Every retry marker of the world, oldest first. No git process: the refs are read from the ref store, the markers through the world's cat-file. */
export async function readTaskRetries(repo: string): Promise<StoredTaskRetry[]> {
  const listed = await listRefs(repo, TASK_RETRY_REF_PREFIX);
  if (listed.length === 0) return [];
  const refs = listed.map((r) => r.ref);
  const texts = await Promise.all(listed.map((r) => readText(repo, `${r.sha}:retry.json`)));
  const retries: StoredTaskRetry[] = [];
  refs.forEach((ref, i) => {
    const text = texts[i];
    if (text === null || text === undefined) return;
    // A marker someone wrote by hand and got wrong is skipped rather than taking the world down.
    try {
      const parsed = JSON.parse(text) as Partial<TaskRetry>;
      if (typeof parsed.task === 'string' && typeof parsed.at === 'string' && !Number.isNaN(Date.parse(parsed.at))) {
        retries.push({ version: 1, task: parsed.task, note: parsed.note ?? null, at: parsed.at, by: parsed.by ?? null, ref });
      }
    } catch {
      // skipped, see above
    }
  });
  return retries.sort((a, b) => Date.parse(a.at) - Date.parse(b.at) || a.ref.localeCompare(b.ref));
}

/** `20261129-145433-796`: sorts by time and is valid in a ref name (an ISO time's colons are not). */
function stampOf(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace('T', '-').replace('.', '-').replace('Z', '');
}
