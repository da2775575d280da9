import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { describeQueue } from './integration-queue.js';

export type QueueSnapshot = { at: string; head: string | null; entries: ReturnType<typeof describeQueue> };

const FILE = 'integration-queue.json';

/** Writes what the running scheduler's integration queue holds, for `genesis status --world` and the dashboard. */
export async function writeQueueSnapshot(scratchDir: string, head: string | null, entries: ReturnType<typeof describeQueue>): Promise<void> {
  const path = join(scratchDir, FILE);
  const snapshot: QueueSnapshot = { at: new Date().toISOString(), head, entries };
  await writeFile(`${path}.tmp`, `${JSON.stringify(snapshot)}\n`);
  await rename(`${path}.tmp`, path);
}

/** The last snapshot a run wrote, or null when no run has written one. */
export async function readQueueSnapshot(scratchDir: string): Promise<QueueSnapshot | null> {
  try {
    return JSON.parse(await readFile(join(scratchDir, FILE), 'utf8')) as QueueSnapshot;
  } catch {
    return null;
  }
}

/** One line per change: what is verified on top of what, and what waits. */
export function formatQueueSnapshot(snapshot: QueueSnapshot | null): string {
  if (!snapshot || snapshot.entries.length === 0) return `integration queue: empty${snapshot ? ` (as of ${snapshot.at})` : ''}`;
  const lines = [`integration queue (as of ${snapshot.at}), front first, on head ${snapshot.head?.slice(0, 12) ?? '?'}:`];
  for (const e of snapshot.entries) {
    const what = e.stage === 'verifying' ? `verifying ${e.commit?.slice(0, 12)} on ${e.onto?.slice(0, 12)}` : e.stage === 'verified' ? `verified on ${e.onto?.slice(0, 12)}, lands when those ahead have` : e.stage === 'built' ? `built on ${e.onto?.slice(0, 12)}, waits for a verification slot` : e.stage === 'landing' ? `landing ${e.commit?.slice(0, 12)}` : `waits to be built on the change ahead`;
    lines.push(`  ${e.task.padEnd(16)} ${e.id}  ${what}`);
  }
  return lines.join('\n');
}
