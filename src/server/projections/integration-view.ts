import { findRunHolder } from '../../audit/run-holder.js';
import { describeEntries, readQueueSnapshot, type QueueEntryView } from '../../integrate/queue-snapshot.js';
import type { WorldRepo } from '../../world/world-repo.js';
import type { WorldHold } from '../../schedule/run-policy.js';
import { readWorldHold } from '../../schedule/run/carry-out/world-hold.js';
import { readLiveWaits } from '../../schedule/live-waits.js';

/** The integration queue as the dashboard shows it (`GET /api/integration`). */
export interface IntegrationView {
  /** Who runs the world now, in words (an embedded `genesis run` holding its lock), or null. */
  run: string | null;
  /** When a scheduler last wrote its queue, or null when none ever did. */
  at: string | null;
  /** Whether the queue is a running scheduler's; otherwise it is what the last run left. */
  current: boolean;
  /** The accepted head the queue was built on when it was written. */
  head: string | null;
  /** Front first: each change, its stage, and what it is built and verified on top of. */
  entries: QueueEntryView[];
  /** How many changes are in each stage. */
  counts: Record<QueueEntryView['stage'], number>;
  /** A usage or rate limit holding the world: no episode starts before `untilMs`. */
  hold: WorldHold | null;
  /** What the running scheduler waits on now (a dependency set, a tip's baseline, the goal's evidence), longest first, with how long so far. */
  waits: Array<{ task: string; what: string; ms: number }>;
}

// Every stage, so that a stage added to the queue fails typecheck here until it is counted.
const STAGE_SET: Record<QueueEntryView['stage'], true> = {
  waiting: true,
  building: true,
  built: true,
  gating: true,
  verifying: true,
  verified: true,
  landing: true,
};
const STAGES = Object.keys(STAGE_SET) as Array<QueueEntryView['stage']>;

/**
 * Reads the queue the world's scheduler writes (`integration-queue.json` in its scratch dir) and
 * says whose it is: a run going now, or one that stopped (then the entries are history; the next
 * run takes their changes up again from their records).
 */
export async function readIntegrationView(world: WorldRepo): Promise<IntegrationView> {
  const [snapshot, run, hold, waiting] = await Promise.all([
    readQueueSnapshot(world.scratchDir),
    findRunHolder(world),
    readWorldHold(world.scratchDir),
    readLiveWaits(world.scratchDir),
  ]);
  const entries = snapshot ? describeEntries(snapshot) : [];
  const counts = Object.fromEntries(STAGES.map((s) => [s, entries.filter((e) => e.stage === s).length])) as IntegrationView['counts'];
  // Only a run going now waits on anything: what a run that died left in the file is not a wait.
  const waits = run === null ? [] : waiting.map(({ task, what, ms }) => ({ task, what, ms }));
  return { run, at: snapshot?.at ?? null, current: run !== null && snapshot !== null, head: snapshot?.head ?? null, entries, counts, hold, waits };
}
