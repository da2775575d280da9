import { randomBytes } from 'node:crypto';

/**
 * Names of the directories one run of an episode or a gate keeps under the world's scratch space
 * (`genesis/episodes`, `genesis/gates`). An episode may run twice at once: BullMQ hands a job out
 * again when its worker stalls past the lock or Redis lost it, while the first run still works.
 * Each run therefore gets a directory of its own, `<owner>+<nonce>`, and never removes another
 * run's; stale clean-up recognises a directory by its owner (the part before `+`).
 */
const SEPARATOR = '+';

/** A fresh directory name for one run of `owner` (an episode or verification id). */
export function runScratchName(owner: string): string {
  return `${owner}${SEPARATOR}${randomBytes(4).toString('hex')}`;
}

/** Whose run left `name` (a directory or one of its siblings, `<name>.tree`, `<name>-head`, ...). */
export function scratchOwnerOf(name: string): string {
  const at = name.indexOf(SEPARATOR);
  return at === -1 ? name : name.slice(0, at);
}

/** The episode whose run made a directory of this owner: its own, or one of its verifications (`<episode>-v<n>`). */
export function scratchEpisodeOf(owner: string): string {
  return owner.replace(/-v\d+$/, '');
}
