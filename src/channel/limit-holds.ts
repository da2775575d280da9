import { createHash } from 'node:crypto';

/**
 * Usage-limit holds by credential: a 429 with its reset, seen by one episode, holds every episode
 * that would use the same credential, in every world this process runs and, with a shared store,
 * on every worker of a fleet. A credential is named by a digest, never by the key.
 */
export interface LimitHolds {
  /** Until when the credential is held (ms since the epoch), or null. */
  until(credentialId: string): Promise<number | null>;
  hold(credentialId: string, untilMs: number, message: string): Promise<void>;
  /** The message of the hold in force, for the episode that meets it. */
  message(credentialId: string): Promise<string | null>;
}

/** The name a set of credentials is held under: a digest, so no key is kept or sent anywhere. */
export function credentialIdOf(values: readonly (string | null)[]): string | null {
  const reals = values.filter((v): v is string => v !== null).sort();
  return reals.length > 0 ? createHash('sha256').update(reals.join('\n')).digest('hex').slice(0, 16) : null;
}

/** The holds of one process. */
export class MemoryLimitHolds implements LimitHolds {
  private readonly holds = new Map<string, { untilMs: number; message: string }>();

  async until(credentialId: string): Promise<number | null> {
    return this.current(credentialId)?.untilMs ?? null;
  }

  async hold(credentialId: string, untilMs: number, message: string): Promise<void> {
    const held = this.holds.get(credentialId);
    if (!held || held.untilMs < untilMs) this.holds.set(credentialId, { untilMs, message });
  }

  async message(credentialId: string): Promise<string | null> {
    return this.current(credentialId)?.message ?? null;
  }

  /** Synchronous, for the gateway's check of each request. */
  current(credentialId: string, now = Date.now()): { untilMs: number; message: string } | null {
    const held = this.holds.get(credentialId);
    if (!held) return null;
    if (held.untilMs <= now) {
      this.holds.delete(credentialId);
      return null;
    }
    return held;
  }
}
