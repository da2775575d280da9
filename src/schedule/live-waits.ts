import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One wait of a running scheduler: a job (or the run itself) that waits on something, since when. */
export interface LiveWait {
  id: string;
  task: string;
  what: string;
  sinceMs: number;
}

export type WaitSnapshot = { at: string; waits: LiveWait[] };

const FILE = 'waits.json';

/**
 * The waits a running scheduler has now (a dependency set being installed, a tip's baseline, the
 * goal's evidence), kept in its scratch dir so `genesis status --world` and the dashboard can say
 * what the run waits on and for how long, as its own output does. Writes go one at a time, in
 * order, so the file always holds the latest state.
 */
export class LiveWaits {
  private readonly waits = new Map<string, LiveWait>();
  private writes: Promise<void> = Promise.resolve();

  constructor(private readonly scratchDir: string) {}

  /** A wait began (`what` a sentence) or ended (`what` null). */
  note(id: string, task: string, what: string | null, now = Date.now()): void {
    if (what === null) {
      if (!this.waits.delete(id)) return;
    } else if (this.waits.get(id)?.what === what) return;
    else this.waits.set(id, { id, task, what, sinceMs: now });
    const snapshot: WaitSnapshot = { at: new Date(now).toISOString(), waits: [...this.waits.values()] };
    this.writes = this.writes.then(() => writeWaitSnapshot(this.scratchDir, snapshot)).catch(() => undefined);
  }

  /** The task of the job `id` when it waits now. */
  taskOf(id: string): string | undefined {
    return this.waits.get(id)?.task;
  }

  /** No wait is left: at the run's start, and at its end (a job stopped mid-wait never says its wait ended). */
  async clear(): Promise<void> {
    this.waits.clear();
    const snapshot: WaitSnapshot = { at: new Date().toISOString(), waits: [] };
    this.writes = this.writes.then(() => writeWaitSnapshot(this.scratchDir, snapshot)).catch(() => undefined);
    await this.writes;
  }
}

async function writeWaitSnapshot(scratchDir: string, snapshot: WaitSnapshot): Promise<void> {
  const path = join(scratchDir, FILE);
  await writeFile(`${path}.tmp`, `${JSON.stringify(snapshot)}\n`);
  await rename(`${path}.tmp`, path);
}

/** The waits the last run wrote, longest first with how long each has lasted at `now`; empty when none. */
export async function readLiveWaits(scratchDir: string, now = Date.now()): Promise<Array<LiveWait & { ms: number }>> {
  try {
    const snapshot = JSON.parse(await readFile(join(scratchDir, FILE), 'utf8')) as WaitSnapshot;
    return snapshot.waits.map((w) => ({ ...w, ms: Math.max(0, now - w.sinceMs) })).sort((a, b) => b.ms - a.ms);
  } catch {
    return [];
  }
}
