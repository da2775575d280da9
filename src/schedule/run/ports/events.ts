import type { EpisodeOutcome, EpisodeRecord } from '../../../ledger/episode-record.js';
import type { StopReason } from '../../scheduler.js';

/** What `genesis run` reports while it works; the CLI turns these into lines or JSON. */
export type RunEvent =
  | { type: 'start'; world: string; head: string; sandbox: string; agent: string; tasks: number; done: number; recovered: number; parallelism: number }
  | { type: 'episode-start'; id: string; task: string; attempt: number }
  | { type: 'episode-phase'; id: string; task: string; phase: string }
  /** An episode's or verification's long wait (what it is on, a sentence) began, or ended (`what` null). */
  | { type: 'wait'; id: string; task: string; what: string | null }
  | {
      type: 'episode-end';
      id: string;
      task: string;
      attempt: number;
      outcome: EpisodeOutcome;
      reason: string | null;
      message: string | null;
      commit: string | null;
      durationMs: number;
    }
  /** A task ran out of attempts (or failed the same way twice): no episode of it starts until a person retries it. */
  | { type: 'task-blocked'; task: string; failures: number; reason: string | null; message: string | null }
  | { type: 'evidence'; commit: string; passed: boolean; command: string }
  /** The accepted branch was moved by something other than the integrator, and put back. */
  | { type: 'foreign-move'; commit: string; quarantine: string }
  /** The integration queue changed: each change, front first, with the commit it is verified on. */
  | { type: 'integration'; entries: Array<{ id: string; task: string; stage: string; onto: string | null; commit: string | null }> }
  /** A task's paths are leased by a holder outside this run: it waits (uncharged) and is tried again at `untilMs` (epoch ms). */
  | { type: 'lease-wait'; task: string; untilMs: number }
  /** The model provider's usage or rate limit holds the world: no episode starts before `untilMs` (epoch ms), then the run resumes by itself. */
  | { type: 'hold'; untilMs: number; message: string }
  /** A person's request (amend, task add, task reopen) was taken by this run, or carried out: `commit` what landed, `message` why nothing did. */
  | {
      type: 'steering';
      id: string;
      kind: 'amend' | 'add-task' | 'reopen';
      by: string | null;
      state: 'taken' | 'done';
      commit: string | null;
      message: string | null;
    }
  /**
   * Who runs an episode on a fleet changed: `worker` null when the worker that had it (`was`) is
   * lost (no heartbeat), or the worker that took it again after one was lost.
   */
  | { type: 'episode-holder'; id: string; task: string; worker: string | null; was: string | null }
  | { type: 'progress'; done: number; tasks: number; running: string[]; accepted: number; rejected: number; failed: number }
  | { type: 'stop'; reason: StopReason };

export interface RunSummary {
  stop: StopReason;
  head: string;
  episodes: number;
  accepted: number;
  rejected: number;
  failed: number;
  abandoned: number;
  /** Racers whose race another racer of their task won. */
  outrun: number;
  durationMs: number;
  evidence: { command: string; passed: boolean } | null;
}

/** The report of an episode's end, from its final record. */
export function episodeEndEvent(final: EpisodeRecord): RunEvent {
  return {
    type: 'episode-end',
    id: final.id,
    task: final.task,
    attempt: final.attempt,
    outcome: final.outcome!,
    reason: final.reason,
    message: final.message,
    commit: final.commit,
    durationMs: Date.parse(final.endedAt!) - Date.parse(final.startedAt),
  };
}
