import { setTimeout as sleep } from 'node:timers/promises';
import { readAcceptedHistory } from '../../src/world/history/accepted-history.js';
import type { FaultPlan } from './faults.js';
import type { GenesisProcess } from './genesis-process.js';
import type { PrivateDocker } from './private-docker.js';
import type { PrivateRedis } from './private-redis.js';

export interface InjectContext {
  workers: GenesisProcess[];
  scheduler: { current: GenesisProcess };
  startWorker: () => GenesisProcess;
  redis: PrivateRedis;
  docker: PrivateDocker | null;
  worldPath: string;
  at: () => string;
}

/**
 * What a trial did. `fired` says whether the fault met what it is meant to hit (a worker with an
 * episode in flight, a change gated on its reserved tip, a result not yet landed, a run still
 * going): a fault that hit nothing proves nothing, so the report counts it apart, never as a pass.
 */
export interface Injected {
  fired: boolean;
  what: string;
}

/** How long a fault waits for the moment it is meant for before it gives up as not fired. */
const WAIT_MS = 60_000;

export async function injectFault(plan: FaultPlan, ctx: InjectContext): Promise<Injected> {
  switch (plan.kind) {
    case 'kill-worker':
      return killWorker(plan, ctx);
    case 'kill-scheduler': {
      const running = alive(ctx.scheduler.current);
      const when = ctx.at();
      await killScheduler(ctx);
      return { fired: running, what: running ? `kill -9 scheduler at ${when}` : `the run had already ended at ${when}` };
    }
    case 'kill-integrator':
      // The scheduler takes a result and lands it within tens of ms (often under 30): a longer wait mostly finds it landed.
      return killBeforeLanding(ctx, plan.delayMs % 20, 'result');
    case 'kill-lander':
      // Half the trials strike just after a reserved gate's passing result, half as its landing starts.
      return plan.delayMs % 2 === 0 ? killBeforeLanding(ctx, plan.delayMs % 20, 'reserved') : killBeforeLanding(ctx, plan.delayMs % 15, 'landing');
    case 'kill-tip-gater':
      return killTipGater(plan, ctx);
    case 'restart-redis': {
      const running = alive(ctx.scheduler.current);
      const when = ctx.at();
      await ctx.redis.crash();
      await sleep(1500);
      await ctx.redis.start();
      return {
        fired: running,
        what: `kill -9 redis at ${when}, restarted 1.5 s later from its append-only file${running ? '' : ' (the run had already ended)'}`,
      };
    }
    case 'restart-docker': {
      // The agents sleep plan.sleepMs, then the gate runs: restart the daemon inside a gate.
      const busy = await until(() => ctx.workers.find((w) => inFlight(w).size > 0) ?? null);
      if (!busy) return { fired: false, what: `no worker ran an episode within ${WAIT_MS / 1000} s` };
      await sleep(plan.sleepMs + 400);
      const gating = ctx.workers.some((w) => inFlight(w).size > 0);
      const when = ctx.at();
      await ctx.docker!.restart();
      return {
        fired: gating,
        what: `restart of the private dockerd at ${when}${gating ? ' (an episode in flight)' : ' (no episode in flight)'}, up again at ${ctx.at()}`,
      };
    }
  }
}

/** kill -9 of a worker with an episode in flight: the planned one if it has one, else the next that does. */
async function killWorker(plan: FaultPlan, ctx: InjectContext): Promise<Injected> {
  const order = [0, 1, 2].map((i) => (plan.worker + i) % ctx.workers.length);
  const index = await until(() => order.find((i) => inFlight(ctx.workers[i]!).size > 0) ?? null);
  if (index === null) return { fired: false, what: `no worker ran an episode within ${WAIT_MS / 1000} s` };
  const episodes = [...inFlight(ctx.workers[index]!)];
  const when = ctx.at();
  await replaceWorker(ctx, index);
  return { fired: true, what: `kill -9 worker ${index} running ${episodes.join(',')} at ${when}, a new worker started` };
}

/**
 * kill -9 of a worker while it gates a change on the place the scheduler reserved for it: some ms
 * into that gate (the plan's delay), and only if the gate has not ended by then (else the next one).
 */
async function killTipGater(plan: FaultPlan, ctx: InjectContext): Promise<Injected> {
  const deadline = Date.now() + WAIT_MS;
  const tried = new Set<string>();
  while (Date.now() < deadline) {
    const found = await until(() => {
      for (const [i, w] of ctx.workers.entries()) {
        const gating = [...gatingOnTip(w)].find((id) => !tried.has(id));
        if (gating) return { i, id: gating };
      }
      return null;
    }, deadline - Date.now());
    if (!found) break;
    tried.add(found.id);
    const intoGate = plan.delayMs % 600;
    await sleep(intoGate);
    const victim = ctx.workers[found.i]!;
    if (!gatingOnTip(victim).has(found.id)) continue;
    const when = ctx.at();
    await replaceWorker(ctx, found.i);
    return { fired: true, what: `kill -9 worker ${found.i} ${intoGate} ms into the gate of ${found.id} on its reserved tip, at ${when}` };
  }
  return { fired: false, what: `no worker was gating a change on a reserved tip when the kill came (tried ${tried.size}) within ${WAIT_MS / 1000} s` };
}

/**
 * Which moment before a landing: a worker sent a passing `result`, or one for a change gated on its
 * `reserved` tip, or the scheduler says a change is `landing` (its lander is about to swap the branch).
 */
type LandingMoment = 'result' | 'reserved' | 'landing';

/**
 * kill -9 of the scheduler `delayMs` after the moment, for a change the scheduler has not reported
 * landed yet. Afterwards the world says which side of the landing transaction the kill fell on.
 */
async function killBeforeLanding(ctx: InjectContext, delayMs: number, moment: LandingMoment): Promise<Injected> {
  const deadline = Date.now() + WAIT_MS;
  const tried = new Set<string>();
  while (Date.now() < deadline && alive(ctx.scheduler.current)) {
    const id = await until(() => {
      const reported = endedBy(ctx.scheduler.current);
      const ready = moment === 'landing' ? landingIn(ctx.scheduler.current) : ctx.workers.flatMap((w) => passedBy(w, moment === 'reserved'));
      return ready.find((p) => !tried.has(p) && !reported.has(p)) ?? null;
    }, deadline - Date.now());
    if (!id) break;
    tried.add(id);
    await sleep(delayMs);
    if (endedBy(ctx.scheduler.current).has(id)) continue;
    const when = ctx.at();
    await killScheduler(ctx);
    // Its last lines are read only now: the kill came too late if it had reported the landing after all.
    await sleep(100);
    if (endedBy(ctx.scheduler.current).has(id)) return { fired: false, what: `kill -9 scheduler at ${when}, after it had reported ${id}` };
    const landed = (await readAcceptedHistory(ctx.worldPath, 'main')).some((c) => c.episode === id);
    const which = { result: 'passing result', reserved: 'passing gate on its reserved tip', landing: 'start of the landing' }[moment];
    return {
      fired: true,
      what: `kill -9 scheduler ${delayMs} ms after the ${which} of ${id}, ${landed ? 'after its landing transaction, before it was reported' : 'before it landed'}, at ${when}`,
    };
  }
  return { fired: false, what: `no ${moment} moment before a landing was met within ${WAIT_MS / 1000} s (tried ${tried.size}, ${delayMs} ms after it)` };
}

async function killScheduler(ctx: InjectContext): Promise<void> {
  ctx.scheduler.current.kill('SIGKILL');
  await ctx.scheduler.current.exited;
}

async function replaceWorker(ctx: InjectContext, index: number): Promise<void> {
  const victim = ctx.workers[index]!;
  victim.kill('SIGKILL');
  await victim.exited;
  ctx.workers[index] = ctx.startWorker();
  await ctx.workers[index]!.waitFor(/"type":"ready"/);
}

function alive(p: GenesisProcess): boolean {
  return p.child.exitCode === null && p.child.signalCode === null;
}

interface WorkerEvent {
  type: string;
  episodeId?: string;
  id?: string;
  verdict?: string;
}

const parsed = new WeakMap<GenesisProcess, { lines: number; events: WorkerEvent[] }>();

/** A process's JSON lines so far; each line is parsed once, so polling every few ms stays cheap. */
function events(p: GenesisProcess): WorkerEvent[] {
  const seen = parsed.get(p) ?? { lines: 0, events: [] };
  for (const line of p.lines.slice(seen.lines)) {
    try {
      const e = JSON.parse(line) as WorkerEvent;
      if (typeof e === 'object' && e !== null) seen.events.push(e);
    } catch {
      // not an event
    }
  }
  seen.lines = p.lines.length;
  parsed.set(p, seen);
  return seen.events;
}

/** The episodes a worker started and has not ended, from its output so far. */
function inFlight(p: GenesisProcess): Set<string> {
  const open = new Set<string>();
  for (const e of events(p)) {
    if (e.type === 'start' && e.episodeId) open.add(e.episodeId);
    if (e.type === 'end' && e.episodeId) open.delete(e.episodeId);
  }
  return open;
}

/** The episodes a worker is gating on a reserved tip now. */
function gatingOnTip(p: GenesisProcess): Set<string> {
  const open = inFlight(p);
  return new Set(
    events(p)
      .filter((e) => e.type === 'gate-on-tip' && e.episodeId && open.has(e.episodeId))
      .map((e) => e.episodeId!),
  );
}

/** The episodes a worker sent a passing result for (with `reservedOnly`, gated on a reserved tip). */
function passedBy(p: GenesisProcess, reservedOnly: boolean): string[] {
  const all = events(p);
  const reserved = new Set(all.filter((e) => e.type === 'gate-on-tip').map((e) => e.episodeId));
  return all.filter((e) => e.type === 'end' && e.verdict === 'passed' && e.episodeId && (!reservedOnly || reserved.has(e.episodeId))).map((e) => e.episodeId!);
}

/** The changes the scheduler says are landing now or were (the lander swaps the branch next). */
function landingIn(p: GenesisProcess): string[] {
  const ids = new Set<string>();
  for (const e of events(p) as Array<WorkerEvent & { entries?: Array<{ id: string; stage: string }> }>)
    if (e.type === 'integration') for (const x of e.entries ?? []) if (x.stage === 'landing') ids.add(x.id);
  return [...ids];
}

/** The episodes the scheduler reported ended (landed or not). */
function endedBy(p: GenesisProcess): Set<string> {
  return new Set(
    events(p)
      .filter((e) => e.type === 'episode-end' && e.id)
      .map((e) => e.id!),
  );
}

/** Polls `check` every 2 ms (a result lands within tens of ms) until it returns something, or null after `timeoutMs`. */
async function until<T>(check: () => T | null, timeoutMs = WAIT_MS): Promise<T | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = check();
    if (found !== null) return found;
    if (Date.now() >= deadline) return null;
    await sleep(2);
  }
}
