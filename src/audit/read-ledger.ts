import type { EpisodeRecord } from '../ledger/episode-record.js';
import { git } from '../git/git.js';
import { EPISODE_REF_PREFIX } from '../ledger/git-ledger.js';
import { batchBlobs, batchObjectNames } from './git-batch.js';

/** One ledger ref as the audit sees it: the record, or why it could not be read. */
export interface LedgerEntry {
  /** The episode id in the ref's name. */
  id: string;
  record: EpisodeRecord | null;
  /** Why `record` is null (missing record.json, not JSON, not a record). */
  problem: string | null;
}

/**
 * Every ledger ref with its record, in three git processes. Unlike `Ledger.readAll` it does not
 * stop at a damaged record: an audit must report one, not crash on it.
 */
export async function readLedgerEntries(repo: string): Promise<LedgerEntry[]> {
  const refs = (await git(['for-each-ref', '--format=%(refname)', EPISODE_REF_PREFIX], { cwd: repo })).stdout.split('\n').filter(Boolean);
  const blobs = await batchObjectNames(
    repo,
    refs.map((r) => `${r}:record.json`),
  );
  const present = blobs.flatMap((b) => (b ? [b] : []));
  const texts = await batchBlobs(repo, present);
  const textOf = new Map(present.map((b, i) => [b, texts[i] ?? null]));
  return refs.map((ref, i): LedgerEntry => {
    const id = ref.slice(EPISODE_REF_PREFIX.length);
    const blob = blobs[i];
    if (!blob) return { id, record: null, problem: 'the ledger ref has no record.json' };
    return parseRecord(id, textOf.get(blob) ?? null);
  });
}

function parseRecord(id: string, text: string | null): LedgerEntry {
  if (text === null) return { id, record: null, problem: 'record.json could not be read' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { id, record: null, problem: `record.json is not JSON: ${(error as Error).message}` };
  }
  const r = value as Partial<EpisodeRecord> | null;
  if (!r || typeof r !== 'object' || typeof r.id !== 'string' || typeof r.task !== 'string' || typeof r.status !== 'string') {
    return { id, record: null, problem: 'record.json lacks id, task or status' };
  }
  if (r.id !== id) return { id, record: null, problem: `record.json names episode ${r.id}, not the ref's ${id}` };
  return { id, record: value as EpisodeRecord, problem: null };
}

/** The tree of each candidate commit (null when missing), in one git process. */
export async function readCandidateTrees(repo: string, candidates: readonly string[]): Promise<Map<string, string | null>> {
  const unique = [...new Set(candidates)];
  const trees = await batchObjectNames(
    repo,
    unique.map((c) => `${c}^{tree}`),
  );
  return new Map(unique.map((c, i) => [c, trees[i] ?? null]));
}
