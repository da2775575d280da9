import { charged, fatal, refused, transient, type FailureTraits } from './traits.js';

/**
 * Every code a GenesisError (or an API error body) may carry, with what it means as data. Scripts
 * and tests match on these codes, so they are stable: rename one only with its users.
 *
 * To add a code: add a line here with the helper that says what it is (`transient`, `fatal`,
 * `charged`, `refused`); `new GenesisError('new-code', …)` does not typecheck before that.
 */
export const ERROR_CODES = {
  // The agent cannot work at all: every next episode would fail the same way.
  'agent-auth-failed': fatal('the model endpoint refused the credentials'),
  'agent-credentials-missing': fatal('the variable that holds the API key is not set'),
  'agent-endpoint-unreachable': fatal('the model endpoint did not answer, even after retries with backoff'),
  'agent-model-not-found': fatal('the model endpoint does not know the model or the URL'),
  'agent-not-found': fatal("the agent's program is not installed where it runs"),
  'agent-endpoint-unknown': fatal("a preset's model endpoint cannot be known without agent.baseUrl, and its CLI may not go past the model gateway"),
  'agent-unreachable-model': fatal('the model endpoint agent.baseUrl names does not accept connections'),
  'agent-quota-exhausted': fatal("the model provider's quota is used up"),
  'agent-sandbox-unavailable': fatal("the agent's sandbox cannot run here (image, network, bubblewrap)"),
  'agent-sandbox-invalid': fatal("Docker refused the agent's container as configured (image, network, options)"),
  'agent-sandbox-failed': transient("Docker could not start the agent's container this time"),
  'agent-netns-slot-failed': transient('a network namespace could not be prepared ahead of an agent (it gets one made at its launch)'),
  'budget-unpriced': fatal('a budget in dollars is set for a model Genesis has no price of'),
  'recording-missing': fatal("the script agent's recording does not exist"),
  'recording-invalid': fatal("the script agent's recording is not valid"),

  // The sandboxes of gates and dependency installs.
  'docker-unavailable': transient('the Docker daemon does not answer'),
  'docker-permission-denied': fatal('this user may not talk to the Docker daemon'),
  'sandbox-image-missing': fatal('the sandbox image does not exist on this host'),
  'sandbox-image-host-toolchain': fatal("the sandbox image would judge with the host's toolchain"),
  'sandbox-config-invalid': fatal('Docker refused the sandbox container as configured'),
  'sandbox-client-missing': fatal('a docker sandbox was handed on without its Docker client (a wrapper that dropped it)'),
  'sandbox-failed': transient('Docker failed to run the sandbox (a server error or a conflict)'),
  'sandbox-spawn-failed': charged('the sandbox could not start its shell in the work dir'),
  'bwrap-unavailable': fatal('bubblewrap cannot start a sandbox here (no user namespaces, a path it may not reach)'),
  'bwrap-failed': transient('bubblewrap could not start this time (a raced mount, short of processes)'),
  'no-sandbox': fatal('neither Docker nor bubblewrap can run a sandbox here'),
  'disk-quota-unavailable': fatal('a disk quota cannot be set up on this machine'),
  'disk-quota-exceeded': charged('the work dir is over its disk quota before any command ran'),
  'sandbox-mount-invalid': charged('a sandbox mount names a path outside the work dir'),
  'sandbox-mount-missing': charged('a sandbox mount source does not exist'),
  'sandbox-read-only-path': charged('a read-only path is outside the work dir'),
  'sandbox-workdir-chown': fatal('the work dir cannot be handed to the sandbox user'),
  'sandbox-uid-exhausted': transient('every sandbox uid of this machine is held by a live sandbox'),
  'sandbox-uid-leases': fatal("sandbox uids cannot be leased here (the lease directory is not this user's alone, or /proc is missing)"),
  'sandbox-workdir-missing': charged('the sandbox work dir is not a directory'),

  // Gates and the episode's own work.
  'gate-copy-failed': charged("the gate's tree could not be copied to its work dir"),
  'holdout-copy-failed': charged("the hidden tests could not be put into the gate's work dir"),
  'holdout-missing': fatal('the holdout directory of the hidden tests is not on this machine'),
  'export-failed': charged("a tree could not be written into the gate's work dir"),
  'size-limit': charged('the change is over the size limits'),
  'episode-unknown': refused('the episode has no ledger record'),
  'task-unknown': refused("the task is not in the manifest at the episode's base"),

  // Dependency sets.
  'deps-cache-unwritable': fatal('the dependency cache cannot be written'),
  'deps-failed': refused('the dependency set could not be prepared'),
  'deps-file-invalid': refused('a file of verify.deps cannot be read'),
  'deps-file-missing': refused('a file verify.deps names is not in the tree'),
  'deps-not-configured': refused('the world has no verify.deps'),

  // The world, its manifest and its history.
  'manifest-invalid': fatal('world.yaml does not validate'),
  'commit-message-invalid': fatal('a commit message Genesis was about to write holds a control character'),
  'manifest-missing': fatal('there is no world.yaml'),
  'manifest-ignored': refused("the starting content's .gitignore leaves world.yaml (or a task file) out of the world"),
  'world-source-missing': refused('the directory a world is created from does not exist'),
  'task-paths-protected': refused('a task may change no path: protected covers them all'),
  'recording-not-found': refused("the script agent's recording is not in the world's starting content"),
  'world-exists': refused('a world already exists there'),
  'world-no-branch': refused('the world has no accepted branch'),
  'world-not-a-repo': refused('the path is not a git repository'),
  'world-not-found': refused('there is no world at that path'),
  'world-required': refused('no world was named'),
  'world-unreachable': transient("the world's server cannot be fetched from"),
  'world-push-failed': transient("the world's server did not take the push"),
  'git-failed': charged('a git command failed'),
  'spawner-lost': transient("the small process that starts Genesis's commands ended before it answered"),
  'head-moved': transient('the accepted branch moved meanwhile'),
  'initial-commit-failed': refused("the world's first commit does not pass its own gate"),
  'gate-program-missing': refused("the world's first gate needs a program its sandbox or image does not have"),
  'from-not-a-directory': refused('--from is not a directory'),
  'adopt-source-unreadable': refused('the repository to adopt cannot be fetched, or has no such branch'),
  'adopt-head-failed': refused("the adopted repository's head does not pass the gate"),
  'calibrate-not-adopted': refused('calibration replays an adopted history, and this world has none'),
  'worker-unconfined': fatal('genesis worker --refuse-unconfined found no sandbox for its gates or its agents'),
  'calibrate-no-workers': transient('calibrate --redis found no genesis worker alive to take its gates'),
  'calibrate-gate-failed': transient('a calibration gate sent to the workers failed there or was lost with its worker'),
  'calibrate-poison-pill': refused('a calibration gate stalled two workers in a row (each died or froze while it ran): no third is offered it'),
  'calibrate-verdict-invalid': refused("a worker's verdict for a calibration gate does not validate (another Genesis version)"),
  'calibrate-scratch-unreachable': refused("the calibration's scratch world is not on this worker's storage"),
  'remove-failed': refused('a directory could not be removed'),
  'run-in-progress': transient('another genesis run on this machine holds the world'),
  'run-held-elsewhere': refused('a genesis run on another machine holds the world (or its lock was left there)'),
  'run-lock': transient('the run lock could not be taken'),
  'task-add-failed': refused('the world with the new task does not pass its gate'),
  'task-exists': refused('a task with that id exists'),
  'task-not-blocked': refused('the task is not blocked'),
  'task-not-found': refused('there is no such task'),
  'retry-note-too-long': refused('the note of a task retry is too long'),
  'review-not-awaiting': refused('the episode does not wait for review'),
  'review-decided': refused('the change waiting for review was already approved or rejected'),
  'amend-branch': refused('the amendment was made on another branch'),
  'amend-empty': refused('the amendment changes nothing'),
  'amend-invalid-manifest': refused("the amendment's world.yaml does not validate"),
  'amend-message-required': refused('an amendment needs a message'),
  'amend-rejected': refused("the amendment does not pass the world's gate"),
  'amend-conflict': refused('the amendment, made on an older head, conflicts with what landed since'),
  'task-not-done': refused('only a done task can be reopened'),
  'reopen-reason-required': refused('reopening a task needs a reason'),
  'steering-timeout': transient('the running scheduler did not take the request in time'),
  'steering-lost': transient('the scheduler that took the request stopped before it answered'),

  // Queues, Redis and the integrator.
  'redis-unreachable': transient('Redis does not answer'),
  'integrator-running': transient('another integrator holds the world'),
  'invalid-argument': refused('an argument is out of range'),

  // Commands, options and the dashboard's API.
  'bad-option': refused('a command-line option is invalid'),
  'invalid-option': refused('a command-line option is invalid'),
  'invalid-model-input': refused('an input of the reliability model is out of range'),
  usage: refused('the command was used wrongly'),
  'ambiguous-episode': refused('an episode id prefix matches several episodes'),
  'episode-not-found': refused('there is no such episode or accepted commit'),
  'commit-unknown': refused('there is no such commit in the world'),
  'bad-request': refused('the API request is malformed'),
  'not-found': refused('there is no such API route'),
  'run-not-started': refused('genesis run was started and stopped before it held the world'),
  'no-run': refused('no genesis run holds the world, so there is none to stop'),
  'not-available': refused('this server cannot do that (it was started without control of the run)'),
  internal: refused('an internal error of the server'),
  'wrong-host': refused('the request names a host the server does not answer to'),
  'token-required': refused("the request needs the server's token"),
  'cross-origin': refused('a page from another origin may not change the world'),
  'json-required': refused('the request body must be JSON'),
  'serve-bad-host': refused('genesis serve was given a host it refuses'),
  'serve-listen-failed': refused('genesis serve cannot listen there'),
  'serve-port-in-use': refused('the port is in use'),
  'serve-token-required': refused('genesis serve needs a token to listen beyond this machine'),
  'serve-token-weak': refused('the token of genesis serve is too short'),
  'serve-ui-missing': refused("the dashboard's files are missing"),
} as const satisfies Record<string, FailureTraits>;

/** A code of the registry; an unregistered string is a type error. */
export type ErrorCode = keyof typeof ERROR_CODES;

const table: Readonly<Record<string, FailureTraits>> = ERROR_CODES;

/** Whether a string from outside (a worker's result, an old ledger record) is a registered code. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(table, value);
}

/** The traits of a code. */
export function errorTraits(code: ErrorCode): FailureTraits {
  return ERROR_CODES[code];
}
