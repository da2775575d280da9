import type { AcceptedCommit } from './accepted-history.js';
import { acceptedPart, type Adoption } from './adoption.js';

/**
 * What put a commit on the accepted branch. In an adopted world, `adopt` is the first commit
 * Genesis accepted (the repository's head it continues, or the commit that added world.yaml on
 * it) and `history` every commit of the repository's own under it.
 */
export type CommitOrigin = 'episode' | 'init' | 'adopt' | 'history' | 'reopen' | 'amend' | 'task-add' | 'unattributed';

/**
 * Reads a commit's origin from its trailers: the integrator writes Genesis-Episode, `genesis amend`
 * Genesis-Amend, `genesis task reopen` Genesis-Reopen beside its Genesis-Amend (a person's act, but
 * not a change of the tree: read first, so no reader calls it an amendment), `genesis init` makes the root, and `genesis task add` a verified
 * "world: add task …" commit. Anything else came from outside Genesis. Alone, a commit cannot
 * tell an adoption: the world's adoption ref, not a trailer anyone can write, names it (see
 * {@link commitOrigins}).
 */
export function commitOrigin(c: AcceptedCommit): CommitOrigin {
  if (c.episode) return 'episode';
  if (c.parents.length === 0) return 'init';
  if (c.reopen) return 'reopen';
  if (c.amend) return 'amend';
  if (c.verified !== null && c.subject.startsWith('world: add task ')) return 'task-add';
  return 'unattributed';
}

/** The origin of each commit of a first-parent history (newest first), with the world's adoption: its commit, and the history under it. */
export function commitOrigins(history: readonly AcceptedCommit[], adoption: Adoption | null): CommitOrigin[] {
  const { accepted } = acceptedPart(history, adoption);
  return history.map((c, i) => (i >= accepted.length ? 'history' : c.commit === adoption?.commit ? 'adopt' : commitOrigin(c)));
}
