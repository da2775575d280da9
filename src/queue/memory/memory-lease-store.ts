import type { LeaseStore } from '../lease-store.js';
import { PathLeases } from './path-leases.js';

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

  async holders(): Promise<string[]> {
    return this.leases.holders();
  }
}
