import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EpisodeArtifacts, EpisodeRecord } from './episode-record.js';
import { genesisStateDir } from '../world/genesis-state-dir.js';

/** What the journal holds of one open episode: its record as it stands and the logs it has so far. */
export interface JournalEntry {
  record: EpisodeRecord;
  artifacts: EpisodeArtifacts;
}

const ID = /^[A-Za-z0-9._-]+$/;

/**
 * The open episodes of the runs of this machine that the ledger in git does not hold yet: one file
 * per episode under the world's git directory (`genesis/open-episodes/<id>.json`), replaced whole
 * through a rename (a reader, or a crash, sees the old file or the new one, never half of one).
 *
 * An in-process run keeps an episode here from its start until its one ledger write (its final
 * record, or the record a stopped run leaves open), instead of writing git records at its start and
 * after its gate: a file write costs no object, no tree, no commit and no ref transaction. It guards
 * what those writes guarded: a run killed meanwhile leaves the file, and the next run (which reads
 * the ledger through Ledger.readAll, journal included) closes the episode as abandoned or, when its
 * gate had passed, takes its change up again. A file is only ever written by the process that runs
 * the episode; a result from another process (a BullMQ worker) is proven by a git record instead.
 */
export class LedgerJournal {
  private readonly dir: Promise<string>;

  constructor(repo: string) {
    this.dir = journalDir(repo);
  }

  async put(entry: JournalEntry): Promise<void> {
    const dir = await this.dir;
    const file = this.fileOf(dir, entry.record.id);
    const tmp = join(dir, `.${entry.record.id}.${randomBytes(4).toString('hex')}.tmp`);
    const text = JSON.stringify(entry);
    await writeFile(tmp, text).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
      await mkdir(dir, { recursive: true });
      await writeFile(tmp, text);
    });
    await rename(tmp, file);
  }

  async get(id: string): Promise<JournalEntry | null> {
    if (!ID.test(id)) return null;
    const text = await readFile(this.fileOf(await this.dir, id), 'utf8').catch(() => null);
    return text === null ? null : parseEntry(text, id);
  }

  /** Every entry, oldest episode first. Files that are not entries (a temporary file a crash left) are skipped. */
  async list(): Promise<JournalEntry[]> {
    const dir = await this.dir;
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort();
    const entries = await Promise.all(names.map((n) => this.get(n.slice(0, -'.json'.length))));
    return entries.filter((e): e is JournalEntry => e !== null);
  }

  async drop(id: string): Promise<void> {
    if (!ID.test(id)) return;
    await rm(this.fileOf(await this.dir, id), { force: true });
  }

  /** Removes temporary files a crash left mid-write (only when no other process writes this journal). */
  async removeLeftovers(): Promise<void> {
    const dir = await this.dir;
    for (const name of await readdir(dir).catch(() => [] as string[])) if (name.endsWith('.tmp')) await rm(join(dir, name), { force: true });
  }

  private fileOf(dir: string, id: string): string {
    if (!ID.test(id)) throw new Error(`not an episode id: ${JSON.stringify(id)}`);
    return join(dir, `${id}.json`);
  }
}

function parseEntry(text: string, id: string): JournalEntry | null {
  try {
    const entry = JSON.parse(text) as Partial<JournalEntry>;
    if (!entry.record || entry.record.id !== id || typeof entry.artifacts !== 'object' || entry.artifacts === null) return null;
    return { record: entry.record, artifacts: entry.artifacts };
  } catch {
    return null;
  }
}

/** The journal's directory: inside the world's git directory, which no work tree or mirror clone carries. */
async function journalDir(repo: string): Promise<string> {
  return join(await genesisStateDir(repo), 'open-episodes');
}
