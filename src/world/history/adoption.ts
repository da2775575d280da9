import { git } from '../../git/git.js';
import { resolveObject } from '../../git/object-reader.js';

/**
 * Where a world that continues an existing repository (`genesis init --adopt`) keeps its
 * adoption: the ref names the first commit Genesis accepted (the repository's head, verified, or
 * the commit that added world.yaml on top of it). Everything under it is the repository's own
 * history, which Genesis neither made nor judges; a ref, so a mirror clone carries it.
 */
export const ADOPTED_REF = 'refs/genesis/adopted';

const SOURCE_KEY = 'genesis.adoptedFrom';

export interface Adoption {
  /** The first Genesis-accepted commit. */
  commit: string;
  /** Where the history came from (a path or URL, as given to --adopt), when this copy knows it. */
  source: string | null;
}

export async function readAdoption(repo: string): Promise<Adoption | null> {
  const found = await resolveObject(repo, `${ADOPTED_REF}^{commit}`);
  if (!found) return null;
  const source = (await git(['config', '--get', SOURCE_KEY], { cwd: repo, okExitCodes: [1] })).stdout.trim();
  return { commit: found.sha, source: source || null };
}

export async function writeAdoption(repo: string, adoption: Adoption): Promise<void> {
  await git(['update-ref', ADOPTED_REF, adoption.commit], { cwd: repo });
  if (adoption.source) await git(['config', SOURCE_KEY, adoption.source], { cwd: repo });
}

/** Commits of a first-parent history (newest first) that Genesis accepted: all of them unless the world was adopted. */
export function acceptedPart<T extends { commit: string }>(history: readonly T[], adoption: Adoption | null): { accepted: T[]; before: T[] } {
  if (!adoption) return { accepted: [...history], before: [] };
  const at = history.findIndex((c) => c.commit === adoption.commit);
  if (at < 0) return { accepted: [...history], before: [] };
  return { accepted: history.slice(0, at + 1), before: history.slice(at + 1) };
}
