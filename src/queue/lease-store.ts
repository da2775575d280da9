/**
 * Where path leases live: in this process for an embedded run, in Redis when workers are spread
 * over machines. Either way a holder gets all of its paths or none, and two holders never hold
 * overlapping paths.
 *
 * Who holds a lease, the same in both stores: the scheduler takes it in the episode's name when
 * the episode starts and releases it when the episode's record is final, that is after its change
 * landed or was rejected by the integration stage, not when its worker finishes. A worker only
 * re-takes (same holder) and renews it while it runs; the scheduler renews it while the change
 * waits for integration. A holder that stops renewing (a dead scheduler) loses it after the ttl.
 */
export interface LeaseStore {
  tryAcquire(holder: string, paths: readonly string[]): Promise<boolean>;
  /** Keeps a lease alive (leases in Redis expire unless renewed); false when it was lost. */
  renew(holder: string): Promise<boolean>;
  release(holder: string): Promise<void>;
  /** Every holder with a live lease: a starting run releases those it does not take over. */
  holders(): Promise<string[]>;
}
