import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorldHold } from '../../run-policy.js';

const FILE = 'hold.json';

/**
 * Writes the world's hold (a usage or rate limit: no episode starts before `untilMs`), for
 * `genesis status` and the dashboard, beside the other state a running scheduler shares.
 */
export async function writeWorldHold(scratchDir: string, hold: WorldHold): Promise<void> {
  const path = join(scratchDir, FILE);
  await writeFile(`${path}.tmp`, `${JSON.stringify(hold)}\n`);
  await rename(`${path}.tmp`, path);
}

/** The world's hold if it still holds at `now`, else null. */
export async function readWorldHold(scratchDir: string, now = Date.now()): Promise<WorldHold | null> {
  try {
    const hold = JSON.parse(await readFile(join(scratchDir, FILE), 'utf8')) as WorldHold;
    return typeof hold.untilMs === 'number' && hold.untilMs > now ? hold : null;
  } catch {
    return null;
  }
}

/** One line for a person: why nothing starts and when it resumes. */
export function describeWorldHold(hold: WorldHold, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((hold.untilMs - now) / 1000));
  return `held until ${new Date(hold.untilMs).toISOString()} (in ${seconds}s), then it resumes by itself: ${hold.message}`;
}
