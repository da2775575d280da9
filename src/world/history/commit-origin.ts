import type { AcceptedCommit } from './accepted-history.js';

/** What put a commit on the accepted branch. */
export type CommitOrigin = 'episode' | 'init' | 'amend' | 'task-add' | 'unattributed';

/**
 * Reads a commit's origin from its trailers: the integrator writes Genesis-Episode, `genesis amend`
 * Genesis-Amend, `genesis init` makes the root, and `genesis task add` a verified
 * "world: add task …" commit. Anything else came from outside Genesis.
 */
export function commitOrigin(c: AcceptedCommit): CommitOrigin {
  if (c.episode) return 'episode';
  if (c.parents.length === 0) return 'init';
  if (c.amend) return 'amend';
  if (c.verified !== null && c.subject.startsWith('world: add task ')) return 'task-add';
  return 'unattributed';
}
