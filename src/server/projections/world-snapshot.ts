import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { queueSnapshotPath } from '../../integrate/queue-snapshot.js';
import type { AcceptedCommit } from '../../world/history/accepted-history.js';
import { commitOrigins, type CommitOrigin } from '../../world/history/commit-origin.js';
import type { BudgetLift } from '../../ledger/budget-lifts.js';
import type { EpisodeRecord } from '../../ledger/episode-record.js';
import { git } from '../../git/git.js';
import { budgetLiftsFile } from '../../ledger/budget-lifts.js';
import { ledgerOf } from '../../ledger/git-ledger.js';
import type { WorldManifest } from '../../manifest/schema.js';
import type { StoredTaskRetry } from '../../world/task-retries.js';
import type { WorldRepo } from '../../world/world-repo.js';

/** Everything the dashboard shows, read from the world at one moment. */
export interface WorldSnapshot {
  /** Changes whenever any branch, episode or retry ref moves; equal stamps mean equal snapshots. */
  stamp: string;
  path: string;
  manifest: WorldManifest;
  /** The accepted head. */
  head: string;
  /** The accepted history, newest first, each commit with the verdict behind it. */
  history: CommitWithVerdict[];
  /** Every episode record, oldest first. */
  records: EpisodeRecord[];
  /** Every retry marker, oldest first. */
  retries: StoredTaskRetry[];
  /** Every budget lift, oldest first. */
  lifts: BudgetLift[];
  readAt: Date;
}

/**
 * Reads snapshots of a world for the server, at most once per change: each call costs one
 * `git for-each-ref` to compute the stamp, and the full read (history, ledger, retries) happens
 * only when the stamp moved. Concurrent callers share one read.
 */
export class WorldSnapshots {
  private cached: Promise<WorldSnapshot> | null = null;
  private cachedStamp: string | null = null;

  constructor(private readonly world: WorldRepo) {}

  /**
   * The stamp of the world now: a hash of every branch, episode and retry ref, and of when the
   * integration queue and the budget lifts (files, not refs) were last written.
   */
  async stamp(): Promise<string> {
    const mtime = (file: string) =>
      stat(file).then(
        (s) => String(s.mtimeMs),
        () => '',
      );
    const [refs, queue, lifts] = await Promise.all([
      git(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/', 'refs/genesis/'], { cwd: this.world.path }),
      mtime(queueSnapshotPath(this.world.scratchDir)),
      budgetLiftsFile(this.world.path).then(mtime),
    ]);
    return createHash('sha1').update(refs.stdout).update(queue).update(lifts).digest('hex').slice(0, 16);
  }

  /** The current snapshot, read again only if the stamp changed. */
  async current(): Promise<WorldSnapshot> {
    const stamp = await this.stamp();
    if (this.cached && this.cachedStamp === stamp) return this.cached;
    const reading = this.read(stamp);
    this.cached = reading;
    this.cachedStamp = stamp;
    // A failed read is not cached: the next call tries again.
    reading.catch(() => {
      if (this.cached === reading) {
        this.cached = null;
        this.cachedStamp = null;
      }
    });
    return reading;
  }

  private async read(stamp: string): Promise<WorldSnapshot> {
    const manifest = await this.world.manifestAt('HEAD');
    const head = await this.world.head(manifest.branch);
    const ledger = ledgerOf(this.world);
    const [history, records, retries, lifts] = await Promise.all([
      this.world.acceptedHistory(manifest.branch),
      ledger.readAll(),
      this.world.taskRetries(),
      ledger.budgetLifts(),
    ]);
    return {
      stamp,
      path: this.world.path,
      manifest,
      head,
      history: await withVerdicts(this.world, history, records),
      records,
      retries,
      lifts,
      readAt: new Date(),
    };
  }
}

/** An accepted commit and the gate summary behind it, wherever that summary is kept, and what made it. */
export interface CommitWithVerdict extends AcceptedCommit {
  verdict: string | null;
  made: CommitOrigin;
}

/**
 * A commit gated on its place in the integration queue had its trailer written before its gate
 * ran, so the trailer names the verification instead of quoting it: the episode's record (or the
 * verification record of a gate on a tip) holds the summary a person wants to see.
 */
async function withVerdicts(
  world: Pick<WorldRepo, 'verificationSummary' | 'adoption'>,
  history: AcceptedCommit[],
  records: EpisodeRecord[],
): Promise<CommitWithVerdict[]> {
  const byId = new Map(records.map((r) => [r.id, r]));
  const origins = commitOrigins(history, await world.adoption());
  return Promise.all(
    history.map(async (c, i) => {
      const made = origins[i]!;
      if (!c.verified || !c.verification || !c.verified.includes('its record holds the verdict')) return { ...c, verdict: c.verified, made };
      const own = byId.get(c.verification)?.gate?.summary;
      return { ...c, verdict: own ?? (await world.verificationSummary(c.verification)) ?? c.verified, made };
    }),
  );
}
