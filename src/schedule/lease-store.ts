import { PathLeases } from './path-leases.js';

/**
 * Where path leases live: in this process for an embedded run, in Redis when workers are spread
 * over machines. Either way a holder gets all of its paths or none, and two holders never hold
 * overlapping paths.
 */
export interface LeaseStore {
  tryAcquire(holder: string, paths: readonly string[]): Promise<boolean>;
  /** Keeps a lease alive (leases in Redis expire unless renewed); false when it was lost. */
  renew(holder: string): Promise<boolean>;
  release(holder: string): Promise<void>;
}

/** The in-process store, over `PathLeases`. */
export class MemoryLeaseStore implements LeaseStore {
  private readonly leases = new PathLeases();

  async tryAcquire(holder: string, paths: readonly string[]): Promise<boolean> {
    return this.leases.tryAcquire(holder, paths);
  }

  async renew(holder: string): Promise<boolean> {
    return this.leases.holders().includes(holder);
  }

  async release(holder: string): Promise<void> {
    this.leases.release(holder);
  }
}
