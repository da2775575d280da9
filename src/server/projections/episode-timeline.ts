import type { EpisodeRecord } from '../../ledger/episode-record.js';

/** The four things an episode's time goes to, each drawn in its own colour. */
export type TimelinePhase = 'agent' | 'gate' | 'waiting' | 'integration';

/** One stretch of an episode in one phase; times in ms since the epoch. */
export interface TimelineBar {
  phase: TimelinePhase;
  startMs: number;
  endMs: number;
}

export interface TimelineEpisode {
  id: string;
  task: string;
  /** The process that ran it, as the record names it (`<host>:<pid>`, a fleet worker's id). */
  worker: string;
  attempt: number;
  /** The outcome, or `running` while the episode is in flight. */
  outcome: string;
  startMs: number;
  endMs: number;
  bars: TimelineBar[];
}

/** One lane of a machine: episodes that never overlap, in the order they started. */
export interface TimelineSlot {
  /** The machine, from the worker's name; every process on it (each `genesis run`, each fleet worker) shares its lanes. */
  host: string;
  /** 1 for the machine's first lane; a machine running n episodes at once has n lanes. */
  slot: number;
  episodes: TimelineEpisode[];
}

export interface EpisodeTimeline {
  fromMs: number | null;
  toMs: number | null;
  slots: TimelineSlot[];
}

/**
 * The episodes laid out per worker slot, from the ledger's records. Lanes belong to the machine,
 * not to the process: each restart of `genesis run` is a new process, and keyed by process a run
 * with two slots restarted five times would draw ten rows; keyed by machine it draws two, since
 * the episodes of one run end (or are closed as abandoned) before the next run's start. A record keeps each phase's
 * duration, not its start, so (as for the traces) the agent's share (workspace, agent, collect)
 * starts at the episode's start, the gate (and the gate on the base) follows, integration ends
 * where the episode did, and what is left between the gate and integration is waiting (the
 * integration queue, a review). A running episode's time past its recorded phases is counted to
 * the phase that comes next. Episodes that overlap on one machine go to separate lanes (the first
 * free lane, so there are as many as the most episodes that ran there at once), and a lane is what
 * one of its parallel slots did. The `limit` most recently started episodes are kept.
 */
export function buildEpisodeTimeline(records: readonly EpisodeRecord[], now: Date, limit = 200): EpisodeTimeline {
  const episodes = records
    .map((r) => ({ host: hostOf(r.worker), episode: layOut(r, now.getTime()) }))
    .sort((a, b) => a.episode.startMs - b.episode.startMs || a.episode.id.localeCompare(b.episode.id))
    .slice(-limit);
  const lanes = new Map<string, TimelineEpisode[][]>();
  for (const { host, episode } of episodes) {
    const mine = lanes.get(host) ?? [];
    lanes.set(host, mine);
    const free = mine.find((lane) => lane.at(-1)!.endMs <= episode.startMs);
    if (free) free.push(episode);
    else mine.push([episode]);
  }
  const slots = [...lanes.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .flatMap(([host, mine]) => mine.map((lane, i) => ({ host, slot: i + 1, episodes: lane })));
  return {
    fromMs: episodes.length ? Math.min(...episodes.map((e) => e.episode.startMs)) : null,
    toMs: episodes.length ? Math.max(...episodes.map((e) => e.episode.endMs)) : null,
    slots,
  };
}

/** The machine in a worker's name: `genesis run` writes `<host>:<pid>`, a fleet worker `<host>:<pid>:<tag>`. */
function hostOf(worker: string): string {
  const at = worker.indexOf(':');
  return at > 0 ? worker.slice(0, at) : worker;
}

function layOut(r: EpisodeRecord, nowMs: number): TimelineEpisode {
  const start = Date.parse(r.startedAt);
  const running = r.endedAt === null;
  const end = Math.max(start, running ? nowMs : Date.parse(r.endedAt!));
  const p = r.phases;
  const sum = (...names: string[]) => {
    const present = names.filter((n) => p[n] !== undefined);
    return present.length ? present.reduce((total, n) => total + Math.max(0, p[n]!), 0) : undefined;
  };
  const agentMs = sum('workspace', 'agent', 'collect');
  const gateMs = sum('gate', 'gate-on-base');
  const bars: TimelineBar[] = [];
  let at = start;
  const push = (phase: TimelinePhase, to: number) => {
    const clamped = Math.min(Math.max(to, at), end);
    if (clamped > at) bars.push({ phase, startMs: at, endMs: clamped });
    at = clamped;
  };
  if (agentMs !== undefined) push('agent', at + agentMs);
  if (gateMs !== undefined) push('gate', at + gateMs);
  if (running) {
    push(gateMs !== undefined ? 'waiting' : agentMs !== undefined ? 'gate' : 'agent', end);
  } else {
    const integrateMs = p.integrate;
    push('waiting', integrateMs === undefined ? end : end - Math.max(0, integrateMs));
    push('integration', end);
  }
  return { id: r.id, task: r.task, worker: r.worker, attempt: r.attempt, outcome: r.outcome ?? 'running', startMs: start, endMs: end, bars };
}
