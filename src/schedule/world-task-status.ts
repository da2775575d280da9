import type { RejectionReason } from '../errors/rejection-reasons.js';
import type { WorldManifest } from '../manifest/schema.js';
import { deriveTaskStatusesWithRetries, episodesSinceRetry, type RetriedTaskStatus, type RetryFacts, type TimedEpisodeFacts } from './task-retry-status.js';

/** Reasons of an episode whose gate found the accepted head itself failing (not the change's fault). */
export const BROKEN_BASE_REASONS: ReadonlySet<string> = new Set<RejectionReason>(['broken-base', 'replay-broken-base']);
/** A poison pill found by the episode, or by a verification of its change on the tip (recorded `replay-poison-pill`). */
const POISON_PILL_REASONS: ReadonlySet<string> = new Set(['poison-pill', 'replay-poison-pill']);

/** What is known of a world at one moment: enough to say what state each task is in. */
export interface WorldTaskFacts {
  manifest: Pick<WorldManifest, 'tasks' | 'retry'>;
  /** Tasks done on the accepted branch. */
  done: ReadonlySet<string>;
  /** Every episode record, oldest first. */
  episodes: readonly TimedEpisodeFacts[];
  /** Tasks with an episode running now. */
  running: ReadonlySet<string>;
  /** Every retry marker. */
  retries: readonly RetryFacts[];
}

/**
 * The one derivation of task states that `genesis run`, `genesis task retry`, `genesis status`
 * and the dashboard share, so they can never disagree about whether a task is blocked. A task is
 * blocked, counting only what happened since its latest retry, when its failures reach
 * `retry.maxAttempts`, when its last two failures share a signature (`retry.blockOnRepeat`), or
 * when its last attempt found the accepted head itself failing (a broken base: trying again on
 * the same head would only fail again), or when its gate killed the orchestrator twice in a row
 * (`poison-pill`: every next run would die the same way). A retry marker lifts every kind of block.
 */
export function deriveWorldTaskStatuses(facts: WorldTaskFacts): Map<string, RetriedTaskStatus> {
  const { manifest } = facts;
  const statuses = deriveTaskStatusesWithRetries(
    manifest.tasks,
    facts.done,
    facts.episodes,
    facts.running,
    manifest.retry.maxAttempts,
    facts.retries,
    manifest.retry.blockOnRepeat,
  );
  const counted = episodesSinceRetry(facts.episodes, facts.retries);
  for (const [id, status] of statuses) {
    if (status.state !== 'pending') continue;
    const last = counted.filter((e) => e.task === id && e.status === 'final' && (e.outcome !== 'abandoned' || BROKEN_BASE_REASONS.has(e.reason ?? ''))).at(-1);
    if (last && BROKEN_BASE_REASONS.has(last.reason ?? ''))
      statuses.set(id, { ...status, state: 'blocked', lastReason: 'broken-base', lastMessage: last.message, lastOutcome: last.outcome });
    else if (POISON_PILL_REASONS.has(last?.reason ?? '')) statuses.set(id, { ...status, state: 'blocked' });
  }
  return statuses;
}
