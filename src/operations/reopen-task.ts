import { GenesisError } from '../errors/genesis-error.js';
import { TRAILERS } from '../world/history/accepted-history.js';
import { formatCommitMessage, toBody, toOneLine } from '../world/commit-message.js';
import type { StoredTaskRetry } from '../world/task-retries.js';
import type { WorldRepo } from '../world/world-repo.js';
import { landByCompareAndSwap, type LandSteering } from './land-steering.js';

/** The longest reason a reopening keeps: it is read by people and by the next attempt's prompt. */
const MAX_REASON = 2000;

export interface ReopenInput {
  task: string;
  /** Why the done work must be done again (its acceptance changed, a bug found): recorded and shown to the next attempt. */
  reason: string;
  by: string;
}

export interface ReopenResult {
  task: string;
  head: string;
  commit: string;
  retry: StoredTaskRetry;
}

/**
 * `genesis task reopen`: a done task becomes pending again. Done-ness is read from the accepted
 * history, so the reopening is a commit there too: the head's tree unchanged (nothing to verify:
 * that very tree passed), with a Genesis-Reopen trailer that every reader of done tasks honours
 * (doneTasksOf), so the task's check stops judging other changes until it is done again, and a
 * Genesis-Amend trailer, since it is a person's act. A retry marker with the reason follows: the
 * failures before it stop counting and the next prompt carries the reason.
 */
export async function reopenTask(world: WorldRepo, input: ReopenInput, land?: LandSteering): Promise<ReopenResult> {
  const reason = input.reason.trim();
  if (!reason) {
    throw new GenesisError('reopen-reason-required', `reopening task ${input.task} needs a --reason: what changed, so the work must be done again`, {
      hint: 'pass --reason "…"; it is recorded with the reopening and shown to the next attempt',
    });
  }
  if (reason.length > MAX_REASON) {
    throw new GenesisError('retry-note-too-long', `the reason has ${reason.length} characters; at most ${MAX_REASON} are kept`, {
      hint: 'shorten the reason; link to a longer text instead',
    });
  }
  const manifest = await world.manifestAt('HEAD');
  const head = await world.head(manifest.branch);
  if (!manifest.tasks.some((t) => t.id === input.task)) {
    throw new GenesisError('task-not-found', `no task "${input.task}" in world.yaml`, {
      hint: `the tasks are: ${manifest.tasks.map((t) => t.id).join(', ') || '(none)'}`,
    });
  }
  if (!(await world.doneTasks(manifest.branch, head)).has(input.task)) {
    throw new GenesisError('task-not-done', `task ${input.task} is not done; only a done task can be reopened`, {
      hint: 'a pending task is tried by the next genesis run; a blocked one gets new attempts with genesis task retry',
    });
  }
  const message = formatCommitMessage(`world: reopen task ${input.task}`, toBody(reason), [
    [TRAILERS.reopen, input.task],
    [TRAILERS.amend, `${toOneLine(input.by)}: reopen task ${input.task}`],
    [TRAILERS.verified, `the tree of ${head.slice(0, 12)}, unchanged`],
  ]);
  const commit = await world.commitTree(await world.treeOf(head), [head], message);
  if (!(await (land ?? landByCompareAndSwap(world, manifest.branch))(commit, head))) {
    throw new GenesisError('head-moved', 'the accepted branch moved while the task was being reopened', { hint: 'run the command again' });
  }
  const retry = await world.writeTaskRetry({ task: input.task, note: `reopened: ${toOneLine(reason)}`, by: input.by });
  return { task: input.task, head, commit, retry };
}
