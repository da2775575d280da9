import { isErrorCode, errorTraits, type ErrorCode } from './error-codes.js';
import { charged, refused, transient, type FailureTraits } from './traits.js';

/**
 * Why an episode, a gate or the lander turned a change down or an episode ended without one: the
 * `reason` of ledger records and results. Charged reasons count as a failed attempt of the task
 * (retry.maxAttempts, the reliability figures); the others end the episode `abandoned`.
 *
 * To add a reason: add a line here; a verdict naming an unregistered reason does not typecheck.
 */
export const REJECTION_REASONS = {
  // The agent.
  'agent-exit': charged('the agent exited with a non-zero code'),
  'agent-timeout': charged('the agent ran out of its time'),
  'agent-context-length': charged("the conversation outgrew the model's context window"),
  'agent-rate-limited': charged('the model endpoint kept refusing for too many requests'),
  'agent-model-error': charged('the model endpoint answered with an error'),
  'agent-usage-limit': transient("the model provider's usage or rate limit is reached: the world holds until it resets"),
  'agent-overloaded': transient('the model is overloaded: tried again later, with backoff'),
  'model-stalled': transient('the model sent nothing for agent.stallSec: the call was ended and the task is tried again after a backoff'),
  'model-unreachable': transient('the model endpoint could not be reached: the world waits for it with backoff'),
  'model-stream-cut': transient("the model's answer was cut before its end and the agent did not recover: tried again, uncharged"),
  'agent-token-budget': charged('the agent spent its token budget before it finished'),
  'agent-turn-budget': charged('the agent used all its turns without finishing'),
  'budget-reached': refused("the world's budget was spent while the agent worked: the model gateway refused its next call"),
  'disk-quota': charged('the agent or a gate step filled its disk quota'),
  'empty-change': charged('the agent left no change'),
  'unreadable-change': charged('the workspace could not be read as a git tree'),

  // The pre-gate: the change's shape.
  'unsafe-path': charged('the change names a path that is not safe'),
  'reserved-name': charged('the change uses a reserved name'),
  'not-a-regular-file': charged('the change holds something other than files and symlinks'),
  'git-metadata': charged('the change writes git metadata'),
  'protected-path': charged('the change touches a protected path'),
  'outside-paths': charged("the change leaves the task's paths"),
  'symlink-escape': charged('a symbolic link of the change leaves the tree'),
  'size-limit': charged('the change is over the size limits'),
  'invalid-plan': charged('the gate plan at the head is not valid'),
  'no-witness': charged("the task's check passes without the change: it witnesses nothing"),

  // The gate's steps.
  'setup-failed': charged('verify.setup failed'),
  'build-failed': charged('verify.build failed'),
  'test-failed': charged('verify.test failed'),
  'check-failed': charged("a task's check failed"),
  'holdout-failed': charged('a hidden acceptance check failed'),
  'gate-timeout': charged("a gate step ran out of the gate's time"),
  'gate-oom': charged('a gate step ran out of memory'),
  'deps-failed': charged('the dependency set could not be prepared'),
  'no-tests-ran': charged('the test step reported no test that ran'),
  'tests-vanished': charged('tests that pass on the accepted head, defined by a protected file or by no file the change edited, were not reported passing'),
  'no-score': charged('ratchet mode found no count of passing tests'),
  'score-fell': charged('fewer tests pass than on the accepted head'),
  'report-missing': charged('the test report verify.report names was not written'),
  'report-invalid': charged('the test report cannot be read'),
  'report-too-large': charged("the test report files of one step are over the gate's limit in total"),
  'report-mismatch': charged("the test report file disagrees with the runner's own printed summary"),
  'runner-tampered': charged("the gate's canary tests did not come out as they must: the code under test changed its test runner or assertions"),

  // Landing on the accepted head with the changes ahead of it.
  'replay-conflict': charged('the change conflicts with changes landed or queued ahead of it'),
  'replay-empty': charged('the accepted head already contains the change'),
  'task-removed': charged('the task is no longer in world.yaml'),
  'review-rejected': charged('a person reviewing the change rejected it'),
  'episode-unknown': charged("the change's episode has no ledger record"),
  'unverified-result': charged('a result claimed the gate passed, but the ledger does not agree'),
  'verification-failed': charged('the verification on the tip failed'),
  replayed: refused('the change landed after a verification on a newer tip'),

  // Ends that are not the change's failure: abandoned, not charged.
  'broken-base': refused('the accepted head fails its own gate without the change'),
  'replay-broken-base': refused('the tip fails its gate without the change'),
  aborted: refused('the run was stopped'),
  outrun: refused('another racer of the same task won its race (its work is kept in the ledger)'),
  'replay-aborted': refused('the run stopped before the verification on the tip'),
  'orchestrator-stopped': refused('the orchestrator stopped before the episode ended'),
  'gate-crashed': refused("the orchestrator died while the episode's gate ran (once: it may have been the machine)"),
  'episode-closed': refused('the episode was already closed when this run of it ended'),
  'lease-lost': transient("the episode's path lease was lost before it ran"),
  'worker-lost': charged('no worker finished the episode'),
  'replay-worker-lost': transient('no worker finished the verification on the tip'),
  'worker-error': charged('the worker failed with an unexpected error'),
  'poison-pill': charged(
    "the task's gate killed the orchestrator, or a job of it (its episode, a verification of its change) stalled a worker, twice in a row: the task is blocked until `genesis task retry`",
  ),
  'replay-worker-error': transient('the verifier failed with an unexpected error'),
} as const satisfies Record<string, FailureTraits>;

export type RejectionReason = keyof typeof REJECTION_REASONS;

/**
 * What a record's `reason` may hold: a rejection reason, or the code of the GenesisError that
 * ended the episode (see workerError).
 */
export type EpisodeReason = RejectionReason | ReplayReason | ErrorCode;

/** A reason given on the speculative tip for a verdict any gate could give (see reasonOnTip). */
export type ReplayReason = `replay-${RejectionReason}`;

/** Whether a string from outside (a worker's result) is a reason this version knows. */
export function isEpisodeReason(value: unknown): value is EpisodeReason {
  if (typeof value !== 'string') return false;
  if (isRejectionReason(value) || isErrorCode(value)) return true;
  return value.startsWith('replay-') && isRejectionReason(value.slice('replay-'.length));
}

const table: Readonly<Record<string, FailureTraits>> = REJECTION_REASONS;

export function isRejectionReason(value: unknown): value is RejectionReason {
  return typeof value === 'string' && Object.hasOwn(table, value);
}

/**
 * The traits of a reason as found in a record, null when it names nothing registered (a record
 * written by another version). A verification's reason on the tip is `replay-<reason>`: it has its
 * own line when it differs, else the reason's.
 */
export function reasonTraits(reason: string | null | undefined): FailureTraits | null {
  if (reason === null || reason === undefined) return null;
  if (isRejectionReason(reason)) return REJECTION_REASONS[reason];
  if (isErrorCode(reason)) return errorTraits(reason);
  const replayed = reason.startsWith('replay-') ? reason.slice('replay-'.length) : null;
  return replayed !== null && replayed !== '' && !replayed.startsWith('replay-') ? reasonTraits(replayed) : null;
}

/** Reasons that only the integration stage gives (the tip, the lander): they keep their name there. */
const TIP_REASONS: ReadonlySet<string> = new Set<RejectionReason>([
  'replay-conflict',
  'replay-empty',
  'replay-broken-base',
  'replay-aborted',
  'replay-worker-lost',
  'replay-worker-error',
  'task-removed',
  'unverified-result',
]);

/**
 * The reason a change rejected on the tip is recorded with: `replay-<reason>` for a verdict any
 * gate could give (`replay-test-failed`), the reason itself when only the tip gives it.
 */
export function reasonOnTip(reason: RejectionReason | ReplayReason): RejectionReason | ReplayReason {
  return TIP_REASONS.has(reason) || reason.startsWith('replay-') ? reason : `replay-${reason as RejectionReason}`;
}

/** A charged reason counts as a failed attempt; an unknown one is charged too, as it always was. */
export function isChargedReason(reason: string | null | undefined): boolean {
  return reasonTraits(reason)?.charged ?? true;
}
