import { GenesisError } from '../errors.js';
import { splitCatFileBatch } from './cat-file-batch.js';
import { git } from './git.js';
import { readObject, readText } from './object-reader.js';
import { writeCommit, writeObject, writeTree } from './object-writer.js';
import { updateRefs } from './ref-updates.js';
import { parseTree } from './tree-entries.js';
import { ARTIFACT_FILES, type EpisodeArtifacts, type EpisodeRecord } from './episode-record.js';
import { secretEnvNames, secretValues } from './secret-env.js';
import { scrubSecrets } from './secret-scrubber.js';

export interface LedgerOptions {
  /**
   * Variables whose values never reach the ledger (the manifest's agent.env and apiKeyEnv), on
   * top of every preset's credentials and any variable named like a key or token.
   */
  secretEnv?: readonly string[];
}

export const EPISODE_REF_PREFIX = 'refs/genesis/episodes/';

/**
 * The ledger: one ref per episode, each pointing at a commit whose tree holds `record.json` and
 * the episode's logs. One ref per episode means no global lock and no lost update between
 * parallel episodes; a `git clone --mirror` carries the whole ledger. The record commit's parent
 * is the candidate commit, which keeps a rejected change reachable as evidence.
 */
export class Ledger {
  constructor(
    private readonly repo: string,
    private readonly options: LedgerOptions = {},
  ) {}

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
  }

  /**
   * The commit a write of this record would point its ref at, with every object it needs stored,
   * but no ref moved: for a caller that moves the ref in one transaction with another (the lander
   * moves the branch and records the landing at once). Keeps the logs an earlier write stored.
   */
  async writeCommit(record: EpisodeRecord, artifacts: EpisodeArtifacts = {}): Promise<string> {
    const secrets = secretValues([...secretEnvNames(), ...(this.options.secretEnv ?? [])]);
    const scrub = (text: string) => scrubSecrets(text, secrets);
    // (Hidden checks' logs, kept outside the ledger, go through the same scrubber: hidden-logs.ts.)
    const files = new Map<string, string>(); // name -> blob sha
    for (const entry of await this.previousEntries(record.id)) if (entry.name !== 'record.json') files.set(entry.name, entry.sha);
    const texts: Array<[string, string]> = [['record.json', scrub(`${JSON.stringify(record, null, 2)}\n`)]];
    for (const [key, file] of Object.entries(ARTIFACT_FILES) as Array<[keyof EpisodeArtifacts, string]>) {
      const content = artifacts[key];
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

  /** The files an earlier write stored (a later write keeps its logs without reading them). */
  private async previousEntries(id: string): Promise<Array<{ name: string; sha: string }>> {
    const tree = await readObject(this.repo, `${EPISODE_REF_PREFIX}${id}^{tree}`);
    return tree ? parseTree(tree.content) : [];
  }

  /** Every record, oldest first (episode ids sort by start time). Two git processes in all. */
  async readAll(): Promise<EpisodeRecord[]> {
    // Object ids, not ref names, in the batch: git then skips a ref lookup per record (2.5x faster at 10,000).
    const commits = (await git(['for-each-ref', '--format=%(objectname)', EPISODE_REF_PREFIX], { cwd: this.repo })).stdout.split('\n').filter(Boolean);
    if (commits.length === 0) return [];
    const out = (await git(['cat-file', '--batch'], { cwd: this.repo, input: commits.map((c) => `${c}:record.json`).join('\n') + '\n' })).stdout;
    return splitCatFileBatch(out)
      .filter((text): text is string => text !== null)
      .map((text) => JSON.parse(text) as EpisodeRecord)
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  async read(id: string): Promise<EpisodeRecord | null> {
    const text = await this.readFile(id, 'record.json');
    return text === null ? null : (JSON.parse(text) as EpisodeRecord);
  }

  async readArtifacts(id: string): Promise<EpisodeArtifacts> {
    const entries = Object.entries(ARTIFACT_FILES) as Array<[keyof EpisodeArtifacts, string]>;
    const texts = await Promise.all(entries.map(([, file]) => this.readFile(id, file)));
    const result: EpisodeArtifacts = {};
    entries.forEach(([key], i) => {
      const text = texts[i];
      if (text !== null && text !== undefined) result[key] = text;
    });
    return result;
  }

  private readFile(id: string, file: string): Promise<string | null> {
    return readText(this.repo, `${EPISODE_REF_PREFIX}${id}:${file}`);
  }
}
