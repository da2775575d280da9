import { git, gitValue } from '../git/git.js';
import type { EpisodeRecord } from './episode-record.js';
import { EPISODE_REF_PREFIX, GitLedger } from './git-ledger.js';

/** Where an episode's record step keeps the unfinished work of an episode cut short (src/episode/steps/record.ts). */
const QUARANTINE_REF_PREFIX = 'refs/genesis/quarantine/';
/** How much of a pruned episode's diff the ledger keeps. */
export const PRUNED_DIFF_BYTES = 16 * 1024;

export interface PruneOptions {
  /** Episodes that ended more than this long ago lose their change. */
  keepMs: number;
  /** @default Date.now() */
  now?: number;
  /** Run `git gc` afterwards, dropping the objects no ref reaches any more. @default true */
  gc?: boolean;
}

export interface PruneReport {
  /** Episodes whose change was dropped now. */
  pruned: string[];
  /** Bytes the object store held before and after (`git count-objects`). */
  bytesBefore: number;
  bytesAfter: number;
}

interface LedgerRef {
  ref: string;
  commit: string;
  /** The candidate commit the ledger commit keeps reachable, or '' once pruned. */
  parent: string;
}

/**
 * Drops the changes of episodes that did not land once they are older than the retention: each
 * such ledger ref is rewritten to a commit with the same record (marked `candidatePrunedAt`) and
 * logs but no candidate parent and a diff cut to PRUNED_DIFF_BYTES, its quarantine ref goes, and
 * `git gc --prune=<cutoff>` removes what nothing reaches any more and is older than the cutoff
 * (objects of episodes still running are newer, so a run may go on meanwhile). Accepted episodes
 * keep their candidate: the audit compares it with the commit that landed. Each ref moves by
 * compare-and-swap, so a record written meanwhile is left for the next prune.
 */
export async function pruneRejectedChanges(repo: string, options: PruneOptions): Promise<PruneReport> {
  const now = options.now ?? Date.now();
  const cutoff = now - options.keepMs;
  const bytesBefore = await objectStoreBytes(repo);
  const pruned: string[] = [];
  const records = new Map((await new GitLedger(repo).readAll()).map((r) => [r.id, r]));
  for (const entry of await ledgerRefs(repo)) {
    const record = records.get(entry.ref.slice(EPISODE_REF_PREFIX.length));
    if (!entry.parent || !record || !isPrunable(record, cutoff)) continue;
    if (await rewriteWithoutCandidate(repo, entry, record, new Date(now).toISOString())) pruned.push(record.id);
  }
  if (pruned.length > 0 && options.gc !== false) {
    await git(['gc', '--quiet', `--prune=${new Date(cutoff).toISOString()}`], { cwd: repo });
  }
  return { pruned, bytesBefore, bytesAfter: await objectStoreBytes(repo) };
}

function isPrunable(record: EpisodeRecord, cutoff: number): boolean {
  if (record.status !== 'final' || record.outcome === 'accepted' || !record.candidate) return false;
  const ended = Date.parse(record.endedAt ?? record.startedAt);
  return Number.isFinite(ended) && ended <= cutoff;
}

async function rewriteWithoutCandidate(repo: string, entry: LedgerRef, record: EpisodeRecord, at: string): Promise<boolean> {
  const entries = (await git(['ls-tree', entry.commit], { cwd: repo })).stdout.split('\n').filter(Boolean);
  const files = new Map(
    entries.map((line) => {
      const tab = line.indexOf('\t');
      return [line.slice(tab + 1), line.slice(0, tab).split(' ')[2] ?? ''] as const;
    }),
  );
  const hash = (text: string) => gitValue(['hash-object', '-w', '--stdin'], { cwd: repo, input: text });
  files.set('record.json', await hash(`${JSON.stringify({ ...record, candidatePrunedAt: at }, null, 2)}\n`));
  const diffBlob = files.get('diff.patch');
  if (diffBlob) {
    const size = Number(await gitValue(['cat-file', '-s', diffBlob], { cwd: repo }));
    if (size > PRUNED_DIFF_BYTES) {
      const head = (await git(['cat-file', 'blob', diffBlob], { cwd: repo })).stdout.slice(0, PRUNED_DIFF_BYTES);
      files.set('diff.patch', await hash(`${head}\n[diff cut at ${PRUNED_DIFF_BYTES} bytes of ${size} when the change was pruned]\n`));
    }
  }
  const tree = await gitValue(['mktree'], { cwd: repo, input: [...files].map(([name, sha]) => `100644 blob ${sha}\t${name}`).join('\n') + '\n' });
  const message = `episode ${record.id}: ${record.task} attempt ${record.attempt} ${record.outcome ?? record.status} (change pruned ${at})\n`;
  const commit = await gitValue(['commit-tree', tree], { cwd: repo, input: message });
  const moved = await git(['update-ref', entry.ref, commit, entry.commit], { cwd: repo, okExitCodes: [1, 128] });
  if (moved.exitCode !== 0) return false;
  await git(['update-ref', '-d', `${QUARANTINE_REF_PREFIX}${record.id}`], { cwd: repo, okExitCodes: [1, 128] });
  return true;
}

async function ledgerRefs(repo: string): Promise<LedgerRef[]> {
  const out = (await git(['for-each-ref', '--format=%(refname) %(objectname) %(parent)', EPISODE_REF_PREFIX], { cwd: repo })).stdout;
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [ref = '', commit = '', parent = ''] = line.split(' ');
      return { ref, commit, parent };
    });
}

async function objectStoreBytes(repo: string): Promise<number> {
  const out = (await git(['count-objects', '-v'], { cwd: repo })).stdout;
  const kib = (key: string) => Number(new RegExp(`^${key}: (\\d+)`, 'm').exec(out)?.[1] ?? 0);
  return (kib('size') + kib('size-pack') + kib('size-garbage')) * 1024;
}
