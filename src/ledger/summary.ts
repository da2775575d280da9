import { appendFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { splitCatFileBatch } from '../git/cat-file-batch.js';
import type { EpisodeRecord } from './episode-record.js';
import { git } from '../git/git.js';
import { genesisStateDir } from '../world/genesis-state-dir.js';

/** What a run's policy and loop read of every episode: the facts budgets, retries and repeated failures are counted from. */
export type EpisodeSummary = Pick<
  EpisodeRecord,
  'id' | 'task' | 'attempt' | 'status' | 'outcome' | 'reason' | 'message' | 'signature' | 'startedAt' | 'endedAt' | 'usage' | 'commit'
>;

/** The summary of a record (a full record is a summary too: this drops what a summary does not keep). */
export function summarize(r: EpisodeSummary): EpisodeSummary {
  return {
    id: r.id,
    task: r.task,
    attempt: r.attempt,
    status: r.status,
    outcome: r.outcome,
    reason: r.reason,
    message: r.message,
    signature: r.signature,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
    usage: r.usage,
    commit: r.commit,
  };
}

const VERSION = 2;
const PREFIX = 'refs/genesis/episodes/';

/** How a read of the ledger's summaries went: how many records it had to read from git, how many it knew. */
export interface SummaryReadStats {
  read: number;
  known: number;
}

/**
 * An incremental index of the ledger's records: for each episode ref, the ledger commit it last
 * saw there and that record's summary. Ledger commits never change, so a summary stays true for
 * as long as its ref points at the same commit: a read lists the refs (one `git for-each-ref`) and
 * reads from git only the records whose ref moved since (new episodes, records closed, pruned or
 * reopened by anyone, a restore); refs that went are dropped. It is a cache of what the records
 * say, kept (best effort) in a file under the world's git directory, which no mirror clone carries:
 * a world without it, or with a torn or foreign file, is read whole once and indexed again.
 */
export class LedgerSummaryIndex {
  constructor(
    private readonly repo: string,
    private readonly file: string,
  ) {}

  /** Every record's summary, as git holds it now, in no particular order. */
  async read(): Promise<{ summaries: EpisodeSummary[]; stats: SummaryReadStats }> {
    const [refs, known] = await Promise.all([this.listRefs(), this.load()]);
    const summaries: EpisodeSummary[] = [];
    const missing: Array<{ id: string; commit: string }> = [];
    for (const [id, commit] of refs) {
      const entry = known.entries.get(id);
      if (entry?.commit === commit) summaries.push(entry.summary);
      else missing.push({ id, commit });
    }
    const fresh = await this.readRecords(missing);
    summaries.push(...fresh.map((f) => f.summary));
    await this.store(fresh, refs, known).catch(() => undefined);
    return { summaries, stats: { read: missing.length, known: refs.size - missing.length } };
  }

  private async listRefs(): Promise<Map<string, string>> {
    const out = (await git(['for-each-ref', '--format=%(objectname) %(refname)', PREFIX], { cwd: this.repo })).stdout;
    const refs = new Map<string, string>();
    for (const line of out.split('\n')) {
      const space = line.indexOf(' ');
      if (space > 0) refs.set(line.slice(space + 1 + PREFIX.length), line.slice(0, space));
    }
    return refs;
  }

  private async readRecords(wanted: ReadonlyArray<{ id: string; commit: string }>): Promise<Entry[]> {
    if (wanted.length === 0) return [];
    const input = `${wanted.map((w) => `${w.commit}:record.json`).join('\n')}\n`;
    const texts = splitCatFileBatch((await git(['cat-file', '--batch'], { cwd: this.repo, input })).stdout);
    const entries: Entry[] = [];
    wanted.forEach((w, i) => {
      const text = texts[i];
      if (text === null || text === undefined) return;
      entries.push({ id: w.id, commit: w.commit, summary: summarize(JSON.parse(text) as EpisodeRecord) });
    });
    return entries;
  }

  private async load(): Promise<{ entries: Map<string, Entry>; lines: number }> {
    const entries = new Map<string, Entry>();
    const text = await readFile(this.file, 'utf8').catch(() => '');
    const lines = text.split('\n');
    if (lines[0] !== JSON.stringify({ version: VERSION })) return { entries, lines: 0 };
    let count = 0;
    for (const line of lines.slice(1)) {
      const entry = parseLine(line);
      if (!entry) continue;
      entries.set(entry.id, entry);
      count++;
    }
    return { entries, lines: count };
  }

  /** Appends what was read now; rewrites the file whole when most of its lines are out of date. */
  private async store(fresh: Entry[], refs: ReadonlyMap<string, string>, known: { entries: Map<string, Entry>; lines: number }): Promise<void> {
    const rewrite = known.lines === 0 || known.lines + fresh.length > 2 * refs.size + 64;
    if (!rewrite) {
      if (fresh.length > 0) await appendFile(this.file, fresh.map(formatLine).join(''));
      return;
    }
    const live = new Map<string, Entry>();
    for (const [id, commit] of refs) {
      const entry = known.entries.get(id);
      if (entry?.commit === commit) live.set(id, entry);
    }
    for (const entry of fresh) live.set(entry.id, entry);
    await mkdir(dirname(this.file), { recursive: true });
    // Through a rename: a reader sees the old file or the new one.
    const tmp = `${this.file}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify({ version: VERSION })}\n${[...live.values()].map(formatLine).join('')}`);
    await rename(tmp, this.file);
  }
}

interface Entry {
  id: string;
  commit: string;
  summary: EpisodeSummary;
}

function formatLine(e: Entry): string {
  return `${JSON.stringify([e.id, e.commit, e.summary])}\n`;
}

const OID = /^[0-9a-f]{40,64}$/;

function parseLine(line: string): Entry | null {
  if (line === '') return null;
  try {
    const v = JSON.parse(line) as unknown;
    if (!Array.isArray(v) || v.length !== 3) return null;
    const [id, commit, summary] = v as [unknown, unknown, Partial<EpisodeSummary> | null];
    if (typeof id !== 'string' || typeof commit !== 'string' || !OID.test(commit)) return null;
    if (!summary || typeof summary !== 'object' || summary.id !== id || typeof summary.task !== 'string' || typeof summary.startedAt !== 'string') return null;
    return { id, commit, summary: summary as EpisodeSummary };
  } catch {
    return null;
  }
}

/** Where a repository's summary index lives: inside its git directory (beside history-index.ts's file). */
export async function ledgerSummaryFile(repo: string): Promise<string> {
  return join(await genesisStateDir(repo), 'ledger-summary.jsonl');
}
