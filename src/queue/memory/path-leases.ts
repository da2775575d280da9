import { patternSetsOverlap } from '../../manifest/path-patterns.js';

/**
 * In-process path leases: a holder gets all of a task's paths or none, and two holders never
 * hold overlapping paths. (The Redis-backed leases of distributed runs keep the same contract.)
 */
export class PathLeases {
  private readonly held = new Map<string, readonly string[]>();

  tryAcquire(holder: string, paths: readonly string[]): boolean {
    for (const [other, otherPaths] of this.held) {
      if (other !== holder && patternSetsOverlap(paths, otherPaths)) return false;
    }
    this.held.set(holder, paths);
    return true;
  }

  release(holder: string): void {
    this.held.delete(holder);
  }

  holders(): string[] {
    return [...this.held.keys()];
  }
}
