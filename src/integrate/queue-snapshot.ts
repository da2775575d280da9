import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { describeQueue } from './integration-queue.js';

export type QueueSnapshot = { at: string; head: string | null; entries: ReturnType<typeof describeQueue> };

const FILE = 'integration-queue.json';

/** Where a world's scheduler keeps its queue snapshot. */
export function queueSnapshotPath(scratchDir: string): string {
  return join(scratchDir, FILE);
}

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

/** One change of the queue as people read it: what it is built (and verified) on top of. */
export type QueueEntryView = QueueSnapshot['entries'][number] & {
  /** Its position, 1 at the front. */
  position: number;
  /** What its speculative commit extends: the accepted head, the change ahead of it, or nothing yet. */
  onTopOf: { kind: 'head' } | { kind: 'change'; id: string; task: string } | { kind: 'nothing-yet' };
};

/** Each change of a snapshot with what it sits on: the head, or the change ahead whose commit it extends. */
export function describeEntries(snapshot: QueueSnapshot): QueueEntryView[] {
  return snapshot.entries.map((e, i) => {
    const ahead = snapshot.entries[i - 1];
    const onTopOf: QueueEntryView['onTopOf'] =
      e.onto === null ? { kind: 'nothing-yet' } : ahead && ahead.commit === e.onto ? { kind: 'change', id: ahead.id, task: ahead.task } : { kind: 'head' };
    return { ...e, position: i + 1, onTopOf };
  });
}

/** One line per change: what is verified on top of what, and what waits. */
export function formatQueueSnapshot(snapshot: QueueSnapshot | null): string {
  if (!snapshot || snapshot.entries.length === 0) return `integration queue: empty${snapshot ? ` (as of ${snapshot.at})` : ''}`;
  const lines = [`integration queue (as of ${snapshot.at}), front first, on head ${snapshot.head?.slice(0, 12) ?? '?'}:`];
  for (const e of describeEntries(snapshot)) {
    const on = `${e.onto?.slice(0, 12)}${e.onTopOf.kind === 'change' ? ` (${e.onTopOf.task})` : e.onTopOf.kind === 'head' ? ' (head)' : ''}`;
    const what =
      e.stage === 'verifying'
        ? `verifying ${e.commit?.slice(0, 12)} on ${on}`
        : e.stage === 'verified'
          ? `verified on ${on}, lands when those ahead have`
          : e.stage === 'built'
            ? `built on ${on}, waits for a verification slot`
            : e.stage === 'landing'
              ? `landing ${e.commit?.slice(0, 12)} on ${on}`
              : e.stage === 'building'
                ? `being built on ${on}`
                : e.stage === 'gating'
                  ? `its own gate runs on ${e.commit?.slice(0, 12)}, built on ${on}`
                  : 'waits to be built on the change ahead';
    lines.push(`  ${e.task.padEnd(16)} ${e.id}  ${what}`);
  }
  return lines.join('\n');
}
