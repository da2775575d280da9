import type { EpisodeRecord } from '../../ledger/episode-record.js';

/** One row of the episodes table: what a person scans for, without the logs. */
export interface EpisodeRow {
  id: string;
  task: string;
  attempt: number;
  /** The outcome, or `running` while the episode is in flight. */
  outcome: string;
  reason: string | null;
  message: string | null;
  signature: string | null;
  agent: string;
  worker: string;
  startedAt: string;
  endedAt: string | null;
  durationMs: number | null;
  gateMs: number | null;
  costUsd: number | null;
  commit: string | null;
  changedFiles: number;
}

/** Filters of the episodes table; each absent filter lets everything through. */
export interface EpisodeFilter {
  task?: string | undefined;
  outcome?: string | undefined;
}

/** The episodes table, newest first, filtered by task and outcome (`running` selects those in flight). */
export function listEpisodeRows(records: readonly EpisodeRecord[], filter: EpisodeFilter = {}): EpisodeRow[] {
  return records
    .filter((r) => (!filter.task || r.task === filter.task) && (!filter.outcome || (r.outcome ?? 'running') === filter.outcome))
    .map(toRow)
    .reverse();
}

function toRow(r: EpisodeRecord): EpisodeRow {
  return {
    id: r.id,
    task: r.task,
    attempt: r.attempt,
    outcome: r.outcome ?? 'running',
    reason: r.reason,
    message: r.message,
    signature: r.signature,
    agent: r.agent,
    worker: r.worker,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
    durationMs: r.endedAt ? Date.parse(r.endedAt) - Date.parse(r.startedAt) : null,
    gateMs: r.phases.gate ?? null,
    costUsd: r.usage?.costUsd ?? null,
    commit: r.commit,
    changedFiles: r.changedFiles.length,
  };
}
