import type { EpisodeReason } from '../errors/rejection-reasons.js';

/**
 * The durable record of one episode, kept in the world under `refs/genesis/episodes/<id>`.
 * Open (status `running`) from the episode's start, final when it ends. An episode run in the
 * process that started it is written to git once, final, and kept in the ledger's journal until
 * then (ledger-journal.ts); one run by a worker elsewhere is written at its start, after its gate
 * (the proof of its result) and at its end. A record still `running` after its orchestrator died
 * is closed as `abandoned` on the next start, or taken up again when its gate had passed.
 */
/**
 * `awaiting-review`: the change passed its gate and waits for a person (`genesis review approve|reject`); the record stays open until then.
 * `outrun`: a racer of a race another racer of the same task won (nobody's failure; its candidate stays in the ledger).
 */
export type EpisodeOutcome = 'accepted' | 'rejected' | 'failed' | 'abandoned' | 'awaiting-review' | 'outrun';

export interface GateStepRecord {
  name: string;
  command: string;
  exitCode: number;
  timedOut: boolean;
  oomKilled: boolean;
  durationMs: number;
  tests: { format: string; passed: number; failed: number; skipped: number } | null;
  /** A hidden (holdout) check: its output is kept out of the ledger and out of every prompt. */
  hidden?: boolean;
  /** Why the gate ran it: the change, a re-run of the tests that failed, tests asked of the base (what a rejection cost). */
  why?: string;
}

export interface GateRecord {
  ok: boolean;
  sandbox: string;
  summary: string;
  steps: GateStepRecord[];
  durationMs: number;
  /** Steps that failed once and passed when run again: reported, not charged to the episode. */
  flaky?: string[];
  /** Tests passed in the `test` step, when its output could be read (the ratchet's measure). */
  score?: number | null;
  /** The image that judged (docker gates): the name asked for and the content id it resolved to. */
  image?: { name: string; id: string } | null;
}

export interface EpisodeRecord {
  version: 1;
  id: string;
  world: string;
  task: string;
  attempt: number;
  agent: string;
  /** The accepted head the episode started from. */
  base: string;
  /** Commit holding base + the episode's change, or null when the agent produced none. */
  candidate: string | null;
  /** The accepted commit that carries this change, when accepted. */
  commit: string | null;
  status: 'running' | 'final';
  outcome: EpisodeOutcome | null;
  /** Stable code of why it ended this way: `test-failed`, `protected-path`, `agent-exit`, … */
  reason: EpisodeReason | null;
  /** The reason in words, for a person. */
  message: string | null;
  /** Normalized failure signature: equal signatures mean "failed the same way". */
  signature: string | null;
  startedAt: string;
  endedAt: string | null;
  /** Milliseconds spent in each phase: workspace, agent, collect, gate, integrate. */
  phases: Record<string, number>;
  gate: GateRecord | null;
  changedFiles: string[];
  /**
   * Tokens and cost the agent reported, or null when it reported nothing. Input tokens include
   * cached ones; `cachedTokens` is their cached share (absent in records written before it existed).
   * A figure the agent did not report is null, never 0.
   */
  usage: { inputTokens: number | null; outputTokens: number | null; cachedTokens?: number | null; costUsd: number | null } | null;
  /** What was wrong with the usage the agent reported (negative, not a number, absurd), or how the agent's report disagrees with the measured figures; absent when nothing was. */
  usageProblems?: string[];
  /** Where `usage` comes from: `wire`, measured at the model gateway on every call; `agent`, the agent's own report (absent in records written before the gateway). */
  usageSource?: 'wire' | 'agent';
  /** With `usageSource: wire`: what the agent itself reported, kept as a cross-check. */
  usageReported?: { inputTokens: number | null; outputTokens: number | null; cachedTokens?: number | null; costUsd: number | null } | null;
  /** Model calls the gateway forwarded for the episode. */
  modelCalls?: number;
  /** When `genesis prune` dropped the change of this episode (one that did not land) after the retention; absent while it is kept. */
  candidatePrunedAt?: string;
  /** A ref holding the partial change of an episode cut short (timeout, stopped run), or null. */
  quarantine?: string | null;
  /** Requests the agent's egress proxy refused (hosts not on agent.network.allow); absent without a list. */
  egressRefused?: number;
  worker: string;
  /**
   * How the change that landed was verified, when it landed on a newer head than its base: the
   * speculative commit's parent, its tree (exactly the accepted commit's) and that gate's record.
   * Absent when the change landed on its own base, as the episode's gate passed it.
   */
  verification?: { id: string; onto: string; tree: string; gate: GateRecord } | null;
  /** The speculative tip the episode's own gate judged its change on, when not its base (the candidate's parent). */
  gatedOn?: string | null;
  /** With `gatedOn`: the change as the agent made it, on its base. */
  source?: string | null;
  /**
   * Its own gate judged a place in the integration queue that was rebuilt under it (a change ahead
   * failed there): that gate's record stays as evidence, and the queue's verification on the change's
   * new place is its gate (the lander lands it only with that verification, and closes it as that says).
   */
  handedOver?: boolean;
  /** The race this episode ran in (a task's `race: N`): the id of its first racer. Absent for an episode that raced nobody. */
  race?: string | null;
}

/** The logs stored next to record.json in the episode's ledger tree. */
export interface EpisodeArtifacts {
  prompt?: string;
  agentLog?: string;
  diff?: string;
  gateLog?: string;
  /** The conversation of an agent that holds one (the `openai` adapter), as JSON. */
  transcript?: string;
}

export const ARTIFACT_FILES: Record<keyof EpisodeArtifacts, string> = {
  prompt: 'prompt.md',
  agentLog: 'agent.log',
  diff: 'diff.patch',
  gateLog: 'gate.log',
  transcript: 'transcript.json',
};

/** The record the scheduler opens when it starts an episode, before its job goes out: running, nothing judged yet. */
export function openEpisodeRecord(
  start: Pick<EpisodeRecord, 'id' | 'world' | 'task' | 'attempt' | 'base' | 'agent' | 'worker'> & Pick<EpisodeRecord, 'race'>,
): EpisodeRecord {
  return {
    version: 1,
    id: start.id,
    world: start.world,
    task: start.task,
    attempt: start.attempt,
    agent: start.agent,
    base: start.base,
    candidate: null,
    commit: null,
    status: 'running',
    outcome: null,
    reason: null,
    message: null,
    signature: null,
    startedAt: new Date().toISOString(),
    endedAt: null,
    phases: {},
    gate: null,
    changedFiles: [],
    usage: null,
    worker: start.worker,
    ...(start.race ? { race: start.race } : {}),
  };
}
