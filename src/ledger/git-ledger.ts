import { GenesisError } from '../errors/genesis-error.js';
import { splitCatFileBatch } from '../git/cat-file-batch.js';
import { git } from '../git/git.js';
import { readObject, readText } from '../git/object-reader.js';
import { writeCommit, writeObject, writeTree } from '../git/object-writer.js';
import { updateRefs } from '../git/ref-updates.js';
import { parseTree } from '../git/tree/entries.js';
import { addBudgetLift, type BudgetLift, readBudgetLifts } from './budget-lifts.js';
import { ARTIFACT_FILES, type EpisodeArtifacts, type EpisodeRecord } from './episode-record.js';
import { LedgerJournal } from './journal.js';
import { LedgerSummaryIndex, ledgerSummaryFile, summarize, type EpisodeSummary } from './summary.js';
import { secretEnvNames, secretValues } from './secret-env.js';
import { scrubSecrets } from './secret-scrubber.js';
import type { Ledger } from './ledger.js';
import type { WorldRepo } from '../world/world-repo.js';

export interface LedgerOptions {
  /**
   * Variables whose values never reach the ledger (the manifest's agent.env and apiKeyEnv), on
   * top of every preset's credentials and any variable named like a key or token.
   */
  secretEnv?: readonly string[];
}

export const EPISODE_REF_PREFIX = 'refs/genesis/episodes/';

/** The ledger of a world, in its repository. */
export function ledgerOf(world: WorldRepo, options: LedgerOptions = {}): Ledger {
  return new GitLedger(world.path, options);
}

/** The ledger in the world's git repository: records and logs as commits under refs, the journal beside them. */
export class GitLedger implements Ledger {
  private readonly journal: LedgerJournal;

  constructor(
    private readonly repo: string,
    private readonly options: LedgerOptions = {},
  ) {
    this.journal = new LedgerJournal(repo);
  }

  /** Records the start of an episode this process runs: in the journal, not in git (no object, no ref). */
  async open(record: EpisodeRecord): Promise<void> {
    await this.journal.put({ record: this.scrubRecord(record), artifacts: {} });
  }

  /**
   * Keeps an episode's record and logs as its gate left them, for the one git write that ends it:
   * in the journal, scrubbed as a git write would be. For an episode whose result stays in this
   * process; a result handed to another process must be proven by `write`.
   */
  async hold(record: EpisodeRecord, artifacts: EpisodeArtifacts = {}): Promise<void> {
    const held = (await this.journal.get(record.id))?.artifacts ?? {};
    await this.journal.put({ record: this.scrubRecord(record), artifacts: { ...held, ...this.scrubArtifacts(artifacts) } });
  }

  /** After a transaction that moved this episode's ref to a commit from writeCommit: its journal entry goes. */
  async settled(id: string): Promise<void> {
    await this.journal.drop(id);
  }

  /** Ids of the episodes the journal holds (open in a run of this machine, not yet written to git). */
  async journaled(): Promise<Set<string>> {
    return new Set((await this.journal.list()).map((e) => e.record.id));
  }

  /** Writes every journal entry to git as it stands, with its logs, and empties the journal. */
  async writeJournal(): Promise<void> {
    for (const entry of await this.journal.list()) await this.writeHeld(entry.record.id);
  }

  /** Writes the journal's entry of one episode to git as it stands (if git holds no final record of it) and drops it. */
  async writeHeld(id: string): Promise<void> {
    const entry = await this.journal.get(id);
    if (!entry) return;
    if (isFinal(await this.readCommitted(id))) await this.journal.drop(id);
    else await this.write(entry.record);
  }

  /**
   * Drops journal entries git already holds final (a crash between a git write and the drop) and
   * temporary files of a write cut short. Only when no run of this world is going on (at a run's start).
   */
  async tidyJournal(): Promise<void> {
    await this.journal.removeLeftovers();
    for (const entry of await this.journal.list()) {
      if (isFinal(await this.readCommitted(entry.record.id))) await this.journal.drop(entry.record.id);
    }
  }

  /**
   * Stores the record and its logs, scrubbed of secrets (see secret-scrubber.ts): this is the one
   * place where records and logs are written, so nothing stored skips the scrubber. No git process:
   * the objects are written into the store directly (object-writer.ts) and the ref moves through
   * the world's long-lived `update-ref --stdin` (ref-updates.ts).
   */
  async write(record: EpisodeRecord, artifacts: EpisodeArtifacts = {}): Promise<void> {
    const commit = await this.writeCommit(record, artifacts);
    const moved = await updateRefs(this.repo, [{ ref: `${EPISODE_REF_PREFIX}${record.id}`, next: commit }]);
    if (!moved.ok)
      throw new GenesisError('git-failed', `could not record episode ${record.id}: ${moved.error}`, {
        hint: 'check that the world is a git repository you can write to',
      });
    await this.journal.drop(record.id);
  }

  /**
   * The commit a write of this record would point its ref at, with every object it needs stored,
   * but no ref moved: for a caller that moves the ref in one transaction with another (the lander
   * moves the branch and records the landing at once; then `settled`). Keeps the logs an earlier
   * write stored or the journal holds.
   */
  async writeCommit(record: EpisodeRecord, artifacts: EpisodeArtifacts = {}): Promise<string> {
    const scrub = this.scrubber();
    // (Hidden checks' logs, kept outside the ledger, go through the same scrubber: hidden-logs.ts.)
    const files = new Map<string, string>(); // name -> blob sha
    const [previous, held] = await Promise.all([this.previousEntries(record.id), this.journal.get(record.id)]);
    for (const entry of previous) if (entry.name !== 'record.json') files.set(entry.name, entry.sha);
    const texts: Array<[string, string]> = [['record.json', scrub(`${JSON.stringify(record, null, 2)}\n`)]];
    const logs: EpisodeArtifacts = { ...held?.artifacts, ...artifacts };
    for (const [key, file] of Object.entries(ARTIFACT_FILES) as Array<[keyof EpisodeArtifacts, string]>) {
      const content = logs[key];
      if (content !== undefined) texts.push([file, scrub(content)]);
    }
    const shas = await Promise.all(texts.map(([, content]) => writeObject(this.repo, 'blob', Buffer.from(content))));
    texts.forEach(([name], i) => {
      files.set(name, shas[i]!);
    });
    const tree = await writeTree(
      this.repo,
      [...files].map(([name, sha]) => ({ mode: '100644', name, sha })),
    );
    const message = `episode ${record.id}: ${record.task} attempt ${record.attempt} ${record.outcome ?? record.status}\n`;
    return writeCommit(this.repo, { tree, parents: record.candidate ? [record.candidate] : [], message });
  }

  private scrubber(): (text: string) => string {
    const secrets = secretValues([...secretEnvNames(), ...(this.options.secretEnv ?? [])]);
    return (text: string) => scrubSecrets(text, secrets);
  }

  private scrubRecord(record: EpisodeRecord): EpisodeRecord {
    return JSON.parse(this.scrubber()(JSON.stringify(record))) as EpisodeRecord;
  }

  private scrubArtifacts(artifacts: EpisodeArtifacts): EpisodeArtifacts {
    const scrub = this.scrubber();
    return Object.fromEntries(Object.entries(artifacts).map(([key, text]) => [key, scrub(text as string)])) as EpisodeArtifacts;
  }

  /** The files an earlier write stored (a later write keeps its logs without reading them). */
  private async previousEntries(id: string): Promise<Array<{ name: string; sha: string }>> {
    const tree = await readObject(this.repo, `${EPISODE_REF_PREFIX}${id}^{tree}`);
    return tree ? parseTree(tree.content) : [];
  }

  /** Every record, oldest first (episode ids sort by start time), the journal's included. Two git processes in all. */
  async readAll(): Promise<EpisodeRecord[]> {
    const [committed, journal] = await Promise.all([this.readAllCommitted(), this.journal.list()]);
    return withJournal(committed, journal, (record) => record);
  }

  /**
   * What readAll says, summarized (ledger-summary.ts), oldest first: through the summary index, which
   * reads from git only the records whose ref moved since it last looked.
   */
  async readSummaries(): Promise<EpisodeSummary[]> {
    const index = new LedgerSummaryIndex(this.repo, await ledgerSummaryFile(this.repo));
    const [{ summaries }, journal] = await Promise.all([index.read(), this.journal.list()]);
    return withJournal(summaries, journal, summarize);
  }

  private async readAllCommitted(): Promise<EpisodeRecord[]> {
    // Object ids, not ref names, in the batch: git then skips a ref lookup per record (2.5x faster at 10,000).
    const commits = (await git(['for-each-ref', '--format=%(objectname)', EPISODE_REF_PREFIX], { cwd: this.repo })).stdout.split('\n').filter(Boolean);
    if (commits.length === 0) return [];
    const out = (await git(['cat-file', '--batch'], { cwd: this.repo, input: commits.map((c) => `${c}:record.json`).join('\n') + '\n' })).stdout;
    return splitCatFileBatch(out)
      .filter((text): text is string => text !== null)
      .map((text) => JSON.parse(text) as EpisodeRecord);
  }

  /** The episode's record: the journal's while it holds the episode and git has no final record of it. */
  async read(id: string): Promise<EpisodeRecord | null> {
    const [committed, held] = await Promise.all([this.readCommitted(id), this.journal.get(id)]);
    return held && !isFinal(committed) ? held.record : committed;
  }

  /** The record as git holds it, journal aside. */
  async readCommitted(id: string): Promise<EpisodeRecord | null> {
    const text = await this.readFile(id, 'record.json');
    return text === null ? null : (JSON.parse(text) as EpisodeRecord);
  }

  budgetLifts(): Promise<BudgetLift[]> {
    return readBudgetLifts(this.repo);
  }

  addBudgetLift(lift: Omit<BudgetLift, 'at'>, now?: Date): Promise<BudgetLift> {
    return addBudgetLift(this.repo, lift, now);
  }

  async readArtifacts(id: string): Promise<EpisodeArtifacts> {
    const entries = Object.entries(ARTIFACT_FILES) as Array<[keyof EpisodeArtifacts, string]>;
    const [texts, held] = await Promise.all([Promise.all(entries.map(([, file]) => this.readFile(id, file))), this.journal.get(id)]);
    const result: EpisodeArtifacts = {};
    entries.forEach(([key], i) => {
      const text = texts[i];
      if (text !== null && text !== undefined) result[key] = text;
    });
    // A journal entry left beside a final record (a crash between its write and the drop) says nothing more.
    if (!held || isFinal(await this.readCommitted(id))) return result;
    return { ...result, ...held.artifacts };
  }

  private readFile(id: string, file: string): Promise<string | null> {
    return readText(this.repo, `${EPISODE_REF_PREFIX}${id}:${file}`);
  }
}

function isFinal(record: Pick<EpisodeRecord, 'status'> | null | undefined): boolean {
  return record?.status === 'final';
}

/** What git holds, with each journal entry standing for its episode where git has no final record of it, oldest first. */
function withJournal<T extends { id: string; status: EpisodeRecord['status'] }>(
  committed: readonly T[],
  journal: ReadonlyArray<{ record: EpisodeRecord }>,
  view: (record: EpisodeRecord) => T,
): T[] {
  const byId = new Map(committed.map((r) => [r.id, r]));
  for (const { record } of journal) if (!isFinal(byId.get(record.id))) byId.set(record.id, view(record));
  return [...byId.values()].sort((a, b) => a.id.localeCompare(b.id));
}
