import { setTimeout as sleep } from 'node:timers/promises';

/** How long a BullMQ close may take before the connections under it are cut. @default 5 s */
export const CLOSE_MS = 5_000;

/**
 * Waits for `closing` at most `ms`. BullMQ's close waits for ever on a connection that is
 * reconnecting (taskforcesh/bullmq#4656, #2430): a scheduler that stops while Redis restarts
 * would never exit. After this, the caller cuts the connections it owns.
 */
export async function closeWithin(closing: Promise<unknown>, ms = CLOSE_MS): Promise<void> {
  const timer = new AbortController();
  await Promise.race([closing.catch(() => undefined), sleep(ms, undefined, { signal: timer.signal }).catch(() => undefined)]);
  timer.abort();
}
