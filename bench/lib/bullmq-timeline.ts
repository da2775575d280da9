/**
 * Where a BullMQ episode's time goes: the scheduler's events (stamped when they happened) and
 * the workers' JSON lines (stamped by the worker) merged per episode into the hops between them.
 * Pure: `bench/pipeline-workers.ts` collects the stamps, this turns them into rows and totals.
 */
import type { RunEvent } from '../../src/schedule/run/ports/events.js';
import type { WorkerLine } from './bullmq-run.js';
import { summarize } from './stats.js';

export interface StampedRunEvent {
  at: number;
  event: RunEvent;
}

/** The hops of one episode, in epoch ms (undefined: not seen). */
export interface EpisodeHops {
  id: string;
  task: string;
  worker?: number;
  submitted: number;
  picked?: number;
  phases: Record<string, number>;
  tipAsked?: number;
  tipAnswered?: number;
  sent?: number;
  /** The scheduler had its result: its change left `gating` or joined the queue, or the episode ended. */
  seen?: number;
  ended?: number;
  outcome?: string;
}

export function buildHops(events: readonly StampedRunEvent[], lines: readonly WorkerLine[]): EpisodeHops[] {
  const hops = new Map<string, EpisodeHops>();
  for (const { at, event } of events) if (event.type === 'episode-start') hops.set(event.id, { id: event.id, task: event.task, submitted: at, phases: {} });
  for (const line of lines) {
    const h = line.episodeId ? hops.get(line.episodeId) : undefined;
    if (!h) continue;
    if (line.type === 'start') {
      h.picked = line.at;
      h.worker = line.worker;
    }
    if (line.type === 'phase' && line.phase) h.phases[line.phase] ??= line.at;
    if (line.type === 'tip-asked') h.tipAsked = line.at;
    if (line.type === 'tip-answered') h.tipAnswered = line.at;
    if (line.type === 'end') h.sent = line.at;
  }
  const lastStage = new Map<string, string>();
  for (const { at, event } of events) {
    if (event.type === 'integration') {
      for (const e of event.entries) {
        const h = hops.get(e.id);
        const before = lastStage.get(e.id);
        lastStage.set(e.id, e.stage);
        if (!h || h.seen !== undefined || h.sent === undefined || at < h.sent - 5) continue;
        // Joined with its result, or its reserved place stopped waiting for its own gate.
        if (e.stage !== 'gating' && (before === undefined || before === 'gating')) h.seen = at;
      }
    }
    if (event.type === 'episode-end') {
      const h = hops.get(event.id);
      if (!h) continue;
      h.ended = at;
      h.outcome = event.outcome;
      h.seen ??= at;
    }
  }
  return [...hops.values()];
}

/** The hops as parts, in ms, for one episode (null where a stamp is missing). */
export function partsOf(h: EpisodeHops, gateMs: number | undefined): Record<string, number | null> {
  const d = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? null : b - a);
  const p = h.phases;
  const afterAgent = p.collect;
  return {
    pickup: d(h.submitted, h.picked),
    'job setup': d(h.picked, p.workspace),
    'workspace + deps': d(p.workspace, p.agent),
    agent: d(p.agent, afterAgent),
    collect: d(afterAgent, h.tipAsked ?? p.gate),
    'tip round trip': d(h.tipAsked, h.tipAnswered),
    'tip to gate': d(h.tipAnswered, p.gate),
    gate: gateMs ?? null,
    'after gate (record, send)': p.gate !== undefined && h.sent !== undefined && gateMs !== undefined ? h.sent - p.gate - gateMs : null,
    'result delivery': d(h.sent, h.seen),
    'seen to end': d(h.seen, h.ended),
  };
}

/** Medians and sums of each part over the episodes, and how long each worker sat between jobs. */
export function summarizeHops(hops: readonly EpisodeHops[], gateMs: ReadonlyMap<string, number>, run: { start: number; end: number }): string {
  const rows = hops.map((h) => partsOf(h, gateMs.get(h.id)));
  const names = Object.keys(rows[0] ?? {});
  const lines = names.map((name) => {
    const values = rows.map((r) => r[name]).filter((v): v is number => v !== null && v !== undefined);
    if (values.length === 0) return `${name.padEnd(26)} -`;
    const s = summarize(values);
    const sum = values.reduce((a, b) => a + b, 0);
    return `${name.padEnd(26)} median ${fmt(s.median)}  p90 ${fmt(s.p90)}  max ${fmt(s.max)}  sum ${fmt(sum)}  (n=${values.length})`;
  });
  const byWorker = new Map<number, EpisodeHops[]>();
  for (const h of hops) if (h.worker !== undefined) byWorker.set(h.worker, [...(byWorker.get(h.worker) ?? []), h]);
  let idle = 0;
  for (const list of byWorker.values()) {
    list.sort((a, b) => a.picked! - b.picked!);
    let free = run.start;
    for (const h of list) {
      idle += h.picked! - free;
      free = h.sent ?? h.picked!;
    }
    idle += run.end - free;
  }
  lines.push(`workers idle (before their first job, between jobs, after their last): ${fmt(idle)} of ${fmt(byWorker.size * (run.end - run.start))}`);
  return lines.join('\n');
}

/** One line per episode: times in seconds since the run's first submit. */
export function formatHops(hops: readonly EpisodeHops[]): string {
  const t0 = Math.min(...hops.map((h) => h.submitted));
  const s = (ms: number | undefined) => (ms === undefined ? '-' : ((ms - t0) / 1000).toFixed(2));
  return hops
    .map(
      (h) =>
        `${h.task.padEnd(4)} w${h.worker ?? '?'} submit ${s(h.submitted)} picked ${s(h.picked)} ws ${s(h.phases.workspace)} agent ${s(h.phases.agent)} collect ${s(h.phases.collect)} tip ${s(h.tipAsked)}-${s(h.tipAnswered)} gate ${s(h.phases.gate)} sent ${s(h.sent)} seen ${s(h.seen)} end ${s(h.ended)} ${h.outcome ?? ''}`,
    )
    .join('\n');
}

function fmt(ms: number): string {
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms)}ms`;
}
