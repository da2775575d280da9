/**
 * Where a run's time goes, change by change, from the events `genesis run --json` prints, each
 * stamped when it arrived: when the episode started, its agent and its own gate, when it joined the
 * integration queue, when a verification of it started and on what, when it landed. Pure: the bar
 * script stamps the events, this turns them into rows and totals.
 */
export interface StampedEvent {
  /** Milliseconds since the run started. */
  at: number;
  event: { type: string; [key: string]: unknown };
}

export interface ChangeTimeline {
  id: string;
  task: string;
  start: number;
  agent?: [number, number];
  /** The episode's own gate: from its `gate` phase to its result (joining the queue, leaving `gating`, or ending). */
  gate?: [number, number];
  /** When it took its place in the integration queue (before its own gate when it reserved one). */
  joined?: number;
  /** Each verification on a tip: when it started, ended, and the commit it was built on. */
  verifications: Array<{ start: number; end?: number; onto: string | null }>;
  /** Landed (or ended otherwise) at. */
  end?: number;
  outcome?: string;
}

interface QueueEntryView {
  id: string;
  task: string;
  stage: string;
  onto: string | null;
}

export function buildTimeline(events: readonly StampedEvent[]): ChangeTimeline[] {
  const changes = new Map<string, ChangeTimeline & { phase?: string; lastStage?: string }>();
  for (const { at, event } of events) {
    const id = event.id as string | undefined;
    if (event.type === 'episode-start' && id) changes.set(id, { id, task: event.task as string, start: at, verifications: [] });
    const change = id ? changes.get(id) : undefined;
    if (event.type === 'episode-phase' && change) {
      if (change.phase === 'agent' && change.agent) change.agent[1] = at;
      if (event.phase === 'agent') change.agent = [at, at];
      if (event.phase === 'gate') change.gate = [at, at];
      change.phase = event.phase as string;
    }
    if (event.type === 'integration') {
      for (const entry of event.entries as QueueEntryView[]) {
        const c = changes.get(entry.id);
        if (!c) continue;
        if (c.joined === undefined) {
          c.joined = at;
          if (c.phase === 'agent' && c.agent) c.agent[1] = at;
        }
        // Its own gate ends when it joins after it, or when its place (taken before it) stops waiting for it.
        if (c.gate && c.gate[1] === c.gate[0] && entry.stage !== 'gating' && (c.lastStage === 'gating' || c.lastStage === undefined) && at > c.gate[0])
          c.gate[1] = at;
        if (entry.stage === 'verifying' && c.lastStage !== 'verifying') c.verifications.push({ start: at, onto: entry.onto });
        if (entry.stage !== 'verifying' && c.lastStage === 'verifying') c.verifications.at(-1)!.end = at;
        c.lastStage = entry.stage;
      }
    }
    if (event.type === 'episode-end' && change) {
      change.end = at;
      change.outcome = event.outcome as string;
      if (change.gate && change.gate[1] === change.gate[0]) change.gate[1] = at;
      const open = change.verifications.at(-1);
      if (open && open.end === undefined) open.end = at;
    }
  }
  return [...changes.values()].map(({ phase: _phase, lastStage: _stage, ...rest }) => rest);
}

/** Totals over all changes, in seconds: what the makespan is made of. */
export function summarizeTimeline(rows: readonly ChangeTimeline[], makespanMs: number): Record<string, number> {
  const sum = (f: (r: ChangeTimeline) => number) => Math.round(rows.reduce((s, r) => s + Math.max(0, f(r)), 0) / 100) / 10;
  const landed = rows.filter((r) => r.outcome === 'accepted');
  return {
    makespanS: Math.round(makespanMs / 100) / 10,
    episodes: rows.length,
    beforeAgentS: sum((r) => (r.agent ? r.agent[0] - r.start : 0)),
    agentS: sum((r) => (r.agent ? r.agent[1] - r.agent[0] : 0)),
    agentToGateS: sum((r) => (r.agent && r.gate ? r.gate[0] - r.agent[1] : 0)),
    ownGateS: sum((r) => (r.gate ? r.gate[1] - r.gate[0] : 0)),
    verifyWaitS: sum((r) => (r.joined !== undefined && r.verifications[0] ? r.verifications[0].start - r.joined : 0)),
    verifyS: sum((r) => r.verifications.reduce((s, v) => s + ((v.end ?? v.start) - v.start), 0)),
    joinToLandS: sum((r) => (r.joined !== undefined && r.end !== undefined && r.outcome === 'accepted' ? r.end - r.joined : 0)),
    verifications: rows.reduce((s, r) => s + r.verifications.length, 0),
    lastLandS: Math.round(Math.max(0, ...landed.map((r) => r.end ?? 0)) / 100) / 10,
  };
}

/** One line per change: times in seconds since the run started. */
export function formatTimeline(rows: readonly ChangeTimeline[]): string {
  const s = (ms: number | undefined) => (ms === undefined ? '-' : (ms / 1000).toFixed(1));
  const lines = rows.map((r) => {
    const v = r.verifications.map((x) => `${s(x.start)}-${s(x.end)}@${x.onto?.slice(0, 7) ?? '?'}`).join(' ');
    return `${r.task.padEnd(5)} start ${s(r.start)} agent ${s(r.agent?.[0])}-${s(r.agent?.[1])} gate ${s(r.gate?.[0])}-${s(r.gate?.[1])} joined ${s(r.joined)} verify [${v}] end ${s(r.end)} ${r.outcome ?? ''}`;
  });
  return lines.join('\n');
}
