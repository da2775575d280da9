import type { StatsEpisode } from '../../../reliability/index.js';
import type { EpisodeRecord } from '../../../ledger/episode-record.js';
import { measureChangeCosts, type ChangeCosts } from '../../../ledger/change-costs.js';
import { ledgerOf } from '../../../ledger/git-ledger.js';
import { measureRaceWins, type RaceWins } from '../../../ledger/race-wins.js';
import type { TaskSpec, WorldManifest } from '../../../manifest/schema.js';
import type { Calibration } from '../../../world/calibration.js';
import { LocalWorld } from '../../../world/local-world.js';

/** What `genesis stats` reads from a world before computing anything. */
export interface StatsInput {
  path: string;
  manifest: WorldManifest;
  head: string;
  /** Tasks of the manifest that the accepted history carries. */
  done: Set<string>;
  /** Finished episodes, in the shape the reliability module measures. */
  episodes: StatsEpisode[];
  /** Episodes still running (or left running by an orchestrator that died): not measured yet. */
  running: number;
  /** What each task and each accepted change spent. */
  spend: ChangeCosts;
  /** The verifier's measured rates (genesis calibrate), or null before the first calibration. */
  calibration: Calibration | null;
  /** Which agents and models win races. */
  races: RaceWins;
}

/**
 * Maps ledger records to what the statistics need. Only finished records count: a running one
 * has no outcome yet. Its duration is endedAt − startedAt; its task's humanMinutes come from the
 * manifest at the accepted head (null for a task that has since left the manifest).
 */
export function toStatsEpisodes(records: readonly EpisodeRecord[], tasks: readonly TaskSpec[]): StatsEpisode[] {
  const minutes = new Map(tasks.map((t) => [t.id, t.humanMinutes ?? null]));
  return records.flatMap((r): StatsEpisode[] => {
    if (r.status !== 'final' || r.outcome === null || r.outcome === 'awaiting-review') return [];
    const ended = r.endedAt === null ? Number.NaN : Date.parse(r.endedAt) - Date.parse(r.startedAt);
    return [
      {
        id: r.id,
        task: r.task,
        attempt: r.attempt,
        // An outrun racer is nobody's failure, as an abandoned episode: it neither passes nor fails a try.
        outcome: r.outcome === 'outrun' ? 'abandoned' : r.outcome,
        reason: r.reason,
        signature: r.signature,
        startedAt: r.startedAt,
        durationMs: Number.isFinite(ended) ? ended : null,
        costUsd: r.usage?.costUsd ?? null,
        humanMinutes: minutes.get(r.task) ?? null,
      },
    ];
  });
}

/** Reads the manifest, the accepted history, the ledger and the calibration of the world at `path`. */
export async function readStatsInput(path: string): Promise<StatsInput> {
  const world = await LocalWorld.open(path);
  const manifest = await world.manifestAt('HEAD');
  const head = await world.head(manifest.branch);
  const [records, history, calibration] = await Promise.all([ledgerOf(world).readAll(), world.doneTasks(manifest.branch), world.calibration()]);
  const done = new Set(manifest.tasks.filter((t) => history.has(t.id)).map((t) => t.id));
  return {
    path: world.path,
    manifest,
    head,
    done,
    episodes: toStatsEpisodes(records, manifest.tasks),
    running: records.filter((r) => r.status !== 'final').length,
    spend: measureChangeCosts(records),
    calibration,
    races: measureRaceWins(records),
  };
}
