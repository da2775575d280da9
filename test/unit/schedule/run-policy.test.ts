import { describe, expect, it } from 'vitest';
import {
  crashClosing,
  decide,
  initialPolicyState,
  nextWake,
  racesOf,
  taskStatuses,
  type PolicyCommand,
  type PolicyEvent,
  type PolicyState,
} from '../../../src/schedule/run-policy.js';
import { openEpisodeRecord, type EpisodeRecord } from '../../../src/ledger/episode-record.js';
import type { TaskSpec } from '../../../src/manifest/schema.js';
import type { EpisodeResult } from '../../../src/episode/episode-job.js';

function task(id: string, dependsOn: string[] = []): TaskSpec {
  return { id, title: id, description: '', acceptance: '', paths: [`src/${id}.js`], dependsOn, witness: false, review: false, kind: 'build' };
}

const T0 = Date.parse('2026-12-01T08:00:00Z');

function record(id: string, taskId: string, fields: Partial<EpisodeRecord> = {}): EpisodeRecord {
  const open = openEpisodeRecord({ id, world: 'w', task: taskId, attempt: 1, agent: 'a', base: 'b'.repeat(40), worker: 'w' });
  return { ...open, startedAt: new Date(T0).toISOString(), ...fields };
}

function final(r: EpisodeRecord, outcome: EpisodeRecord['outcome'], reason: EpisodeRecord['reason'] = null, extra: Partial<EpisodeRecord> = {}): EpisodeRecord {
  return { ...r, status: 'final', outcome, reason, message: reason, signature: reason, endedAt: new Date(T0 + 1000).toISOString(), ...extra };
}

const CANDIDATE = 'c'.repeat(40);

/** A worker's result for the episode of `r`; a passing one names the candidate its gate passed. */
function resultOf(r: EpisodeRecord, fields: Partial<EpisodeResult> = {}): EpisodeResult {
  return {
    episodeId: r.id,
    task: r.task,
    attempt: r.attempt,
    base: r.base,
    candidate: CANDIDATE,
    verdict: 'passed',
    reason: null,
    message: null,
    signature: null,
    ...fields,
  };
}

/** The record a worker leaves for a change its gate passed. */
function gated(r: EpisodeRecord): EpisodeRecord {
  return { ...r, candidate: CANDIDATE, gate: { ok: true } as EpisodeRecord['gate'] };
}

function policy(tasks: TaskSpec[], config: Partial<Parameters<typeof initialPolicyState>[0]['config']> = {}, records: EpisodeRecord[] = []): PolicyState {
  return initialPolicyState({
    config: { parallelism: 2, maxAttempts: 2, blockOnRepeat: true, budgets: {}, distributed: false, ...config },
    tasks,
    done: new Set(),
    records,
    now: T0,
  });
}

/** Plays events through the policy, starting every task it asks for (as the loop does when leases are free). */
class Harness {
  commands: PolicyCommand[] = [];
  private n = 0;
  /** The records of the episodes this harness started, as the loop keeps them. */
  private readonly started = new Map<string, EpisodeRecord>();
  constructor(public state: PolicyState) {}
  feed(event: PolicyEvent): PolicyCommand[] {
    if (event.type === 'started' || event.type === 'finished') this.started.set(event.record.id, event.record);
    const { state, commands } = decide(this.state, event);
    this.state = state;
    this.commands.push(...commands);
    for (const c of commands) if (c.type === 'start') this.start(c);
    return commands;
  }
  private start(c: Extract<PolicyCommand, { type: 'start' }>): void {
    for (const { task: t, attempt } of c.tasks.slice(0, c.limit)) this.feed({ type: 'started', record: record(`e${++this.n}`, t.id, { attempt }) });
    this.feed({ type: 'starts-done', now: this.state.now });
  }
  running(): string[] {
    return [...this.state.running.values()];
  }
  recordOf(taskId: string): EpisodeRecord {
    const id = [...this.state.running].find(([, t]) => t === taskId)?.[0] ?? [...this.state.integrating].find(([, t]) => t === taskId)?.[0];
    return this.started.get(id!)!;
  }
  stop() {
    return this.commands.find((c) => c.type === 'finish');
  }
}

describe('the run policy', () => {
  it('starts ready tasks up to its parallelism, in manifest order, and none whose dependency is not done', () => {
    const h = new Harness(policy([task('a'), task('b', ['a']), task('c'), task('d')]));
    h.feed({ type: 'tick', now: T0 });
    expect(h.running()).toEqual(['a', 'c']);
  });

  it('frees an episode slot when a change joins the integration queue, while its task stays busy', () => {
    const h = new Harness(policy([task('a'), task('b'), task('c')]));
    h.feed({ type: 'tick', now: T0 });
    const a = h.recordOf('a');
    h.feed({ type: 'passed', id: a.id });
    expect(h.running()).toEqual(['b', 'c']);
    expect([...h.state.integrating.values()]).toEqual(['a']);
    // No second episode for a while its change is being integrated.
    h.feed({ type: 'tick', now: T0 + 10 });
    expect(h.running()).toEqual(['b', 'c']);
  });

  it('stops done when every task landed, and only once nothing is integrating', () => {
    const h = new Harness(policy([task('a')]));
    h.feed({ type: 'tick', now: T0 });
    const a = h.recordOf('a');
    h.feed({ type: 'passed', id: a.id });
    expect(h.stop()).toBeUndefined();
    h.feed({ type: 'landed', task: 'a', tasks: h.state.tasks });
    h.feed({ type: 'finished', record: final(a, 'accepted'), now: T0 + 5 });
    expect(h.stop()).toEqual({ type: 'finish', reason: { kind: 'done' } });
    expect(h.state.tally).toMatchObject({ accepted: 1, episodes: 1 });
  });

  it('retries a rejected task and blocks it after its attempts, then stops blocked naming the reason', () => {
    const h = new Harness(policy([task('a')]));
    h.feed({ type: 'tick', now: T0 });
    h.feed({ type: 'finished', record: final(h.recordOf('a'), 'rejected', 'check-failed', { signature: 's1' }), now: T0 + 1 });
    expect(h.recordOf('a').attempt).toBe(2);
    h.feed({ type: 'finished', record: final(h.recordOf('a'), 'rejected', 'test-failed', { signature: 's2' }), now: T0 + 2 });
    expect(h.stop()).toMatchObject({ reason: { kind: 'blocked', blocked: [{ task: 'a', reason: 'test-failed' }] } });
  });

  it('numbers the attempts of a retried task against the retry (round), while the attempt keeps counting every try', () => {
    const h = new Harness(policy([task('a')], { parallelism: 1, blockOnRepeat: false }));
    h.feed({ type: 'tick', now: T0 });
    h.feed({ type: 'finished', record: final(h.recordOf('a'), 'rejected', 'check-failed', { signature: 's1' }), now: T0 + 1 });
    h.feed({ type: 'finished', record: final(h.recordOf('a'), 'rejected', 'check-failed', { signature: 's2' }), now: T0 + 2 });
    expect(h.stop()).toMatchObject({ reason: { kind: 'blocked' } });
    const retried = decide(
      { ...h.state, stop: null, finished: null },
      { type: 'tick', now: T0 + 5000, retries: [{ task: 'a', at: new Date(T0 + 4000).toISOString() }] },
    );
    const start = retried.commands.find((c) => c.type === 'start');
    expect(start).toMatchObject({ tasks: [{ task: { id: 'a' }, attempt: 3, round: 1 }] });
  });

  it("takes a person's change that lands while it runs: a new task starts, and a run that had nothing left to do looks again", () => {
    const h = new Harness(policy([task('a')]));
    h.feed({ type: 'tick', now: T0 });
    const a = h.recordOf('a');
    h.feed({ type: 'passed', id: a.id });
    h.feed({ type: 'landed', task: 'a', tasks: h.state.tasks });
    h.feed({ type: 'finished', record: final(a, 'accepted'), now: T0 + 5 });
    expect(h.state.finished).toEqual({ kind: 'done' });
    // A task added and a done one reopened while the run was about to end: both start, the evidence is checked on the new head.
    const steered = h.feed({ type: 'steered', tasks: [task('a'), task('c')], done: new Set() });
    expect(steered[0]).toEqual({ type: 'check-evidence' });
    expect(h.state.finished).toBeNull();
    expect(h.running().sort()).toEqual(['a', 'c']);
  });

  it("does not resume an interrupted run for a person's change", () => {
    const h = new Harness(policy([task('a')]));
    h.feed({ type: 'aborted' });
    expect(h.state.finished).toEqual({ kind: 'interrupted' });
    h.feed({ type: 'steered', tasks: [task('a'), task('c')], done: new Set() });
    expect(h.state.finished).toEqual({ kind: 'interrupted' });
    expect(h.running()).toEqual([]);
  });

  it('holds a task whose gate found the head itself broken, and does not charge it', () => {
    const h = new Harness(policy([task('a'), task('b')], { parallelism: 1 }));
    h.feed({ type: 'tick', now: T0 });
    h.feed({ type: 'finished', record: final(h.recordOf('a'), 'abandoned', 'broken-base'), now: T0 + 1 });
    expect(h.running()).toEqual(['b']);
    h.feed({ type: 'finished', record: final(h.recordOf('b'), 'rejected', 'test-failed'), now: T0 + 2 });
    expect(h.running()).toEqual(['b']);
  });

  it('tries a task held by a broken base again in the same run once a person retries it', () => {
    const h = new Harness(policy([task('a'), task('b')], { parallelism: 2 }));
    h.feed({ type: 'tick', now: T0 });
    h.feed({ type: 'finished', record: final(h.recordOf('a'), 'abandoned', 'broken-base'), now: T0 + 1 });
    h.feed({ type: 'tick', now: T0 + 2500 });
    expect(h.running()).toEqual(['b']); // a is held while b still works, past its cooldown too
    // The retry marker comes after a's broken-base episode ended (T0 + 1000 in final()).
    h.feed({ type: 'tick', now: T0 + 2500, retries: [{ task: 'a', at: new Date(T0 + 2000).toISOString() }] }); // past the outage cooldown
    expect(h.running().sort()).toEqual(['a', 'b']);
  });

  it('cools a task down after an outage and wakes when the cooldown ends', () => {
    const h = new Harness(policy([task('a')], { cooldownMs: 2000 }));
    h.feed({ type: 'tick', now: T0 });
    h.feed({ type: 'finished', record: final(h.recordOf('a'), 'abandoned', 'docker-unavailable'), now: T0 + 100 });
    expect(h.running()).toEqual([]);
    expect(h.stop()).toBeUndefined();
    expect(nextWake(h.state)).toBe(T0 + 2100);
    h.feed({ type: 'tick', now: T0 + 2100 });
    expect(h.running()).toEqual(['a']);
  });

  it('waits longer after each outage in a row, up to a minute, and starts afresh after an episode that did not meet one', () => {
    const h = new Harness(policy([task('a')], { cooldownMs: 2000 }));
    h.feed({ type: 'tick', now: T0 });
    let now = T0;
    const waits: number[] = [];
    for (let i = 0; i < 7; i++) {
      h.feed({ type: 'finished', record: final(h.recordOf('a'), 'abandoned', 'docker-unavailable'), now });
      const wake = nextWake(h.state)!;
      waits.push(wake - now);
      now = wake;
      h.feed({ type: 'tick', now });
      expect(h.running()).toEqual(['a']);
    }
    expect(waits).toEqual([2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]);
    h.feed({ type: 'finished', record: final(h.recordOf('a'), 'rejected', 'test-failed'), now });
    h.feed({ type: 'tick', now: now + 1 });
    h.feed({ type: 'finished', record: final(h.recordOf('a'), 'abandoned', 'lease-lost'), now: now + 2 });
    expect(nextWake(h.state)).toBe(now + 2 + 2000);
  });

  it('cools a task down only for a transient reason: a stopped run or a configuration mistake needs none', () => {
    for (const reason of ['aborted', 'sandbox-image-missing'] as const) {
      const h = new Harness(policy([task('a')], { cooldownMs: 2000 }));
      h.feed({ type: 'tick', now: T0 });
      h.feed({ type: 'finished', record: final(h.recordOf('a'), 'abandoned', reason), now: T0 + 100 });
      expect(nextWake(h.state)).toBeNull();
    }
  });

  it('opens the circuit on a fatal agent failure: nothing new starts, the run stops when the rest ended', () => {
    const h = new Harness(policy([task('a'), task('b'), task('c')]));
    h.feed({ type: 'tick', now: T0 });
    h.feed({
      type: 'finished',
      record: final(h.recordOf('a'), 'failed', 'agent-not-found'),
      fatal: { reason: 'agent-not-found', message: 'no such binary' },
      now: T0 + 1,
    });
    expect(h.running()).toEqual(['b']);
    expect(h.stop()).toBeUndefined();
    h.feed({ type: 'finished', record: final(h.recordOf('b'), 'failed', 'agent-not-found'), now: T0 + 2 });
    expect(h.stop()).toMatchObject({ reason: { kind: 'circuit-open', reason: 'agent-not-found' } });
  });

  describe('budgets', () => {
    it('starts no episode that would cross maxEpisodes, counted across runs', () => {
      const earlier = final(record('e0', 'a'), 'rejected', 'test-failed');
      const h = new Harness(policy([task('a'), task('b'), task('c')], { budgets: { maxEpisodes: 2 }, parallelism: 3 }, [earlier]));
      h.feed({ type: 'tick', now: T0 });
      expect(h.running()).toHaveLength(1);
      h.feed({ type: 'finished', record: final(h.recordOf(h.running()[0]!), 'rejected', 'build-failed'), now: T0 + 1 });
      expect(h.stop()).toMatchObject({ reason: { kind: 'budget', budget: 'maxEpisodes', limit: 2, used: 2 } });
    });

    it('stops the running episodes at once when the hours budget runs out in process', () => {
      const h = new Harness(policy([task('a')], { budgets: { maxHours: 1 } }));
      h.feed({ type: 'tick', now: T0 });
      expect(nextWake(h.state)).toBe(T0 + 3_600_050);
      const commands = h.feed({ type: 'tick', now: T0 + 3_600_050 });
      expect(commands).toEqual([{ type: 'stop-episodes' }]);
      h.feed({ type: 'finished', record: final(h.recordOf('a'), 'abandoned', 'aborted'), now: T0 + 3_600_100 });
      expect(h.stop()).toMatchObject({ reason: { kind: 'budget', budget: 'maxHours' } });
    });

    it('lets distributed workers finish what they run when a hard budget is crossed', () => {
      const h = new Harness(policy([task('a'), task('b')], { budgets: { maxCostUsd: 1 }, distributed: true, parallelism: 1 }));
      h.feed({ type: 'tick', now: T0 });
      const spent = final(h.recordOf('a'), 'rejected', 'test-failed', { usage: { inputTokens: 1, outputTokens: 1, costUsd: 2 } });
      const commands = h.feed({ type: 'finished', record: spent, now: T0 + 1 });
      expect(commands).toContainEqual({ type: 'finish', reason: { kind: 'budget', budget: 'maxCostUsd', limit: 1, used: 2 } });
      expect(h.running()).toEqual([]);
    });
  });

  describe("the goal's evidence", () => {
    it('stops the run when it passes after a landing, naming the tasks left pending', () => {
      const h = new Harness(policy([task('a'), task('b')], { parallelism: 1 }));
      h.feed({ type: 'tick', now: T0 });
      const a = h.recordOf('a');
      h.feed({ type: 'passed', id: a.id });
      const commands = h.feed({ type: 'landed', task: 'a', tasks: h.state.tasks });
      expect(commands).toEqual([{ type: 'check-evidence' }]);
      h.feed({ type: 'evidence', passed: true, command: 'npm test' });
      h.feed({ type: 'finished', record: final(a, 'accepted'), now: T0 + 1 });
      // b started when a's slot freed; the run stops once it ends.
      h.feed({ type: 'finished', record: final(h.recordOf('b'), 'rejected', 'test-failed'), now: T0 + 2 });
      expect(h.stop()).toMatchObject({ reason: { kind: 'evidence', command: 'npm test', pending: ['b'] } });
    });

    it('runs on past it when asked to, so tasks added or retried after it passed still run', () => {
      const h = new Harness(policy([task('a')], { pastEvidence: true }));
      h.feed({ type: 'evidence', passed: true, command: 'npm test' });
      h.feed({ type: 'tick', now: T0 });
      expect(h.running()).toEqual(['a']);
    });
  });

  it('stops interrupted and tells the episodes to stop, finishing once they have', () => {
    const h = new Harness(policy([task('a')]));
    h.feed({ type: 'tick', now: T0 });
    expect(h.feed({ type: 'aborted' })).toEqual([{ type: 'withdraw-changes' }, { type: 'stop-episodes' }]);
    h.feed({ type: 'tick', now: T0 + 1 });
    expect(h.running()).toEqual(['a']);
    h.feed({ type: 'finished', record: final(h.recordOf('a'), 'abandoned', 'aborted'), now: T0 + 2 });
    expect(h.stop()).toEqual({ type: 'finish', reason: { kind: 'interrupted' } });
  });

  it('stops blocked when the ready tasks cannot be started at all and the loop names no refused lease', () => {
    let state = policy([task('a')]);
    const started = decide(state, { type: 'tick', now: T0 });
    expect(started.commands).toMatchObject([{ type: 'start', limit: 2 }]);
    state = started.state;
    const { commands } = decide(state, { type: 'starts-done', now: T0 });
    expect(commands).toEqual([{ type: 'finish', reason: { kind: 'blocked', blocked: [], waiting: [{ task: 'a', on: 'unschedulable' }] } }]);
  });

  describe('when a lease is refused by a holder outside the run (a duplicate run, a lease Redis brought back)', () => {
    it('does not stop: the task waits, uncharged, and is tried again after a backoff that grows while the refusals go on', () => {
      let state = policy([task('a')], { cooldownMs: 1000 });
      state = decide(state, { type: 'tick', now: T0 }).state;
      const first = decide(state, { type: 'starts-done', now: T0, refused: ['a'] });
      expect(first.commands).toEqual([]);
      expect(nextWake(first.state)).toBe(T0 + 1000);
      // Not before the wake: nothing starts.
      expect(decide(first.state, { type: 'tick', now: T0 + 500 }).commands).toEqual([]);
      const again = decide(first.state, { type: 'tick', now: T0 + 1000 });
      expect(again.commands).toMatchObject([{ type: 'start', tasks: [{ task: { id: 'a' }, attempt: 1 }] }]);
      const second = decide(again.state, { type: 'starts-done', now: T0 + 1000, refused: ['a'] });
      expect(second.commands).toEqual([]);
      expect(nextWake(second.state)).toBe(T0 + 1000 + 2000);
      // Once the lease is free, the task starts as its first attempt and the run ends as usual.
      const h = new Harness({ ...second.state, now: T0 + 3000 });
      h.feed({ type: 'tick', now: T0 + 3000 });
      expect(h.running()).toEqual(['a']);
      expect(h.recordOf('a').attempt).toBe(1);
      h.feed({ type: 'passed', id: h.recordOf('a').id });
      h.feed({ type: 'landed', task: 'a', tasks: h.state.tasks });
      h.feed({ type: 'finished', record: final(h.recordOf('a'), 'accepted'), now: T0 + 4000 });
      expect(h.stop()).toEqual({ type: 'finish', reason: { kind: 'done' } });
    });

    it('leaves a refused task to the next event while an episode of the run is busy (its own lease may be the one in the way)', () => {
      let state = policy([task('a'), task('b')], { parallelism: 1 });
      state = decide(state, { type: 'tick', now: T0 }).state;
      state = decide(state, { type: 'started', record: record('e1', 'a') }).state;
      const after = decide(state, { type: 'starts-done', now: T0, refused: ['b'] });
      expect(after.commands).toEqual([]);
      expect(after.state.cooldown.size).toBe(0);
    });
  });

  it('ignores the end of an episode it does not know (a result delivered twice)', () => {
    const state = policy([task('a')]);
    const stray = final(record('zz', 'a'), 'accepted');
    expect(decide(state, { type: 'finished', record: stray, now: T0 })).toEqual({ state, commands: [] });
  });

  describe("when the model provider's usage limit is reached", () => {
    it('holds the whole world, uncharged, until the reset, then starts again by itself', () => {
      const h = new Harness(policy([task('a'), task('b')], { parallelism: 2, cooldownMs: 1000 }));
      h.feed({ type: 'tick', now: T0 });
      expect(h.running().sort()).toEqual(['a', 'b']);
      const limited = final(h.recordOf('a'), 'abandoned', 'agent-usage-limit');
      const hold = { untilMs: T0 + 60_000, message: 'the usage limit is reached' };
      h.feed({ type: 'finished', record: limited, hold, now: T0 + 100 });
      expect(h.state.hold).toEqual(hold);
      // b ends too; before the reset nothing starts, and the run does not stop as stuck.
      h.feed({ type: 'finished', record: final(h.recordOf('b'), 'abandoned', 'agent-usage-limit'), now: T0 + 200 });
      expect(h.feed({ type: 'tick', now: T0 + 30_000 })).toEqual([]);
      expect(h.stop()).toBeUndefined();
      expect(nextWake(h.state)).toBe(T0 + 60_000);
      // At the reset both start again, each as its first attempt: the limit was not their failure.
      h.feed({ type: 'tick', now: T0 + 60_000 });
      expect(h.running().sort()).toEqual(['a', 'b']);
      expect(h.recordOf('a').attempt).toBe(1);
      expect(h.state.tally.failed).toBe(0);
    });

    it('keeps the later of two holds', () => {
      const h = new Harness(policy([task('a'), task('b')]));
      h.feed({ type: 'tick', now: T0 });
      h.feed({ type: 'finished', record: final(h.recordOf('a'), 'abandoned', 'agent-usage-limit'), hold: { untilMs: T0 + 90_000, message: 'late' }, now: T0 });
      h.feed({ type: 'finished', record: final(h.recordOf('b'), 'abandoned', 'agent-usage-limit'), hold: { untilMs: T0 + 10_000, message: 'early' }, now: T0 });
      expect(h.state.hold?.message).toBe('late');
    });
  });

  describe('an interrupt', () => {
    it('in process withdraws the changes waiting for integration, stops the episodes and ends once both are gone', () => {
      const h = new Harness(policy([task('a'), task('b')]));
      h.feed({ type: 'tick', now: T0 });
      h.feed({ type: 'passed', id: h.recordOf('a').id });
      expect(h.feed({ type: 'aborted' })).toEqual([{ type: 'withdraw-changes' }, { type: 'stop-episodes' }]);
      expect(h.feed({ type: 'withdrawn', id: h.recordOf('a').id })).toEqual([]);
      expect(h.state.finished).toBeNull();
      h.feed({ type: 'finished', record: final(h.recordOf('b'), 'abandoned', 'aborted'), now: T0 + 1 });
      expect(h.stop()).toEqual({ type: 'finish', reason: { kind: 'interrupted' } });
      expect(h.state.finished).toEqual({ kind: 'interrupted' });
    });

    it('with workers elsewhere ends the run at once, leaving their episodes running for the next run', () => {
      const h = new Harness(policy([task('a'), task('b')], { distributed: true }));
      h.feed({ type: 'tick', now: T0 });
      const commands = h.feed({ type: 'aborted' });
      expect(commands).toEqual([{ type: 'withdraw-changes' }, { type: 'stop-episodes' }, { type: 'finish', reason: { kind: 'interrupted' } }]);
      expect(h.running()).toEqual(['a', 'b']);
      expect(h.state.finished).toEqual({ kind: 'interrupted' });
    });

    it('after a stop reason keeps it in process and waits for the episodes; with workers elsewhere it ends the run as interrupted', () => {
      for (const distributed of [false, true]) {
        const h = new Harness(policy([task('a'), task('b')], { distributed }));
        h.feed({ type: 'tick', now: T0 });
        h.feed({ type: 'evidence', passed: true, command: 'npm test' });
        expect(h.state.stop).toMatchObject({ kind: 'evidence' });
        const commands = h.feed({ type: 'aborted' });
        if (distributed) expect(commands).toEqual([{ type: 'finish', reason: { kind: 'interrupted' } }]);
        else expect(commands).toEqual([]);
        expect(h.state.stop).toMatchObject({ kind: 'evidence' });
        expect(h.running()).toEqual(['a', 'b']);
      }
    });
  });

  describe('the earlier attempts a prompt reflects on', () => {
    it('are the last ten of the task that ended without landing, oldest first, and none of another task', () => {
      const ids = Array.from({ length: 12 }, (_, i) => `e${String(i).padStart(2, '0')}`);
      const history = [
        ...ids.map((id) => final(record(id, 'a'), id === 'e05' ? 'accepted' : 'rejected', id === 'e05' ? null : 'test-failed')),
        final(record('e99', 'b'), 'rejected', 'test-failed'),
      ];
      const state = policy([task('a'), task('b')], { maxAttempts: 100, blockOnRepeat: false }, history);
      const { commands } = decide({ ...state, done: new Set() }, { type: 'tick', now: T0 });
      const start = commands.find((c) => c.type === 'start');
      expect(start?.tasks.find((t) => t.task.id === 'a')?.earlier).toEqual(['e01', 'e02', 'e03', 'e04', 'e06', 'e07', 'e08', 'e09', 'e10', 'e11']);
      expect(start?.tasks.find((t) => t.task.id === 'b')?.earlier).toEqual(['e99']);
    });

    it('leave out an attempt still running', () => {
      const state = policy([task('a')], {}, [record('e1', 'a'), final(record('e0', 'a'), 'failed', 'agent-exit')]);
      const { commands } = decide(state, { type: 'tick', now: T0 });
      expect(commands).toMatchObject([{ type: 'start', tasks: [{ task: { id: 'a' }, earlier: ['e0'] }] }]);
    });
  });

  describe("a worker's result", () => {
    it('that passed and that the ledger confirms moves its episode to integration and joins the queue after what its freed slot starts', () => {
      const h = new Harness(policy([task('a'), task('b')], { parallelism: 1 }));
      h.feed({ type: 'tick', now: T0 });
      const a = h.recordOf('a');
      const onTip = 'd'.repeat(40);
      const commands = h.feed({ type: 'result', result: resultOf(a, { gatedOn: onTip, source: 'e'.repeat(40) }), record: gated(a) });
      expect(commands.map((c) => c.type)).toEqual(['start', 'integrate']);
      expect(commands.at(-1)).toEqual({ type: 'integrate', change: { id: a.id, task: 'a', candidate: CANDIDATE, base: onTip, source: 'e'.repeat(40) } });
      expect([...h.state.integrating.values()]).toEqual(['a']);
      expect(h.running()).toEqual(['b']);
    });

    it('that claims a pass the ledger does not hold is refused: its record is closed as unverified and nothing joins the queue', () => {
      const forgeries: Array<[string, (r: EpisodeRecord) => EpisodeRecord | null, RegExp]> = [
        ['no record', () => null, /has no ledger record/],
        ['another candidate', (r) => ({ ...gated(r), candidate: 'f'.repeat(40) }), /the result names candidate c{12}, the ledger f{12}/],
        ['another base', (r) => ({ ...gated(r), base: 'f'.repeat(40) }), /the result names base b{12}, the ledger f{12}/],
        ['no passing gate', (r) => ({ ...gated(r), gate: null }), /no passing gate/],
        ['a closed record', (r) => final(gated(r), 'rejected', 'test-failed'), /is already rejected/],
      ];
      for (const [what, ledgerHolds, why] of forgeries) {
        const h = new Harness(policy([task('a')]));
        h.feed({ type: 'tick', now: T0 });
        const a = h.recordOf('a');
        const before = h.state;
        const commands = h.feed({ type: 'result', result: resultOf(a), record: ledgerHolds(a) });
        expect(commands, what).toHaveLength(1);
        const refused = commands[0]!;
        expect(refused, what).toMatchObject({
          type: 'refuse-result',
          id: a.id,
          record: ledgerHolds(a),
          closing: { outcome: 'rejected', reason: 'unverified-result', signature: 'unverified-result' },
        });
        expect(refused.type === 'refuse-result' && refused.closing.message, what).toMatch(why);
        expect(h.state, what).toBe(before);
      }
    });

    it('handed to the queue unjudged joins it as ungated when the ledger hands it over, and is refused otherwise or where a person or a race needs a verdict', () => {
      const onTip = 'd'.repeat(40);
      const source = 'e'.repeat(40);
      const handed = (r: EpisodeRecord): EpisodeRecord => ({
        ...r,
        candidate: CANDIDATE,
        gatedOn: onTip,
        handedOver: true,
        gate: { ok: false } as EpisodeRecord['gate'],
      });
      const queued = (r: EpisodeRecord) => resultOf(r, { verdict: 'queued', gatedOn: onTip, source });
      const h = new Harness(policy([task('a'), task('b')], { parallelism: 1 }));
      h.feed({ type: 'tick', now: T0 });
      const a = h.recordOf('a');
      const commands = h.feed({ type: 'result', result: queued(a), record: handed(a) });
      expect(commands.at(-1)).toEqual({ type: 'integrate', change: { id: a.id, task: 'a', candidate: CANDIDATE, base: onTip, source, ungated: true } });
      expect([...h.state.integrating.values()]).toEqual(['a']);
      // A record that does not hand it over (a forged result) is refused, as a claimed pass would be.
      const forged = new Harness(policy([task('a')]));
      forged.feed({ type: 'tick', now: T0 });
      const fa = forged.recordOf('a');
      expect(forged.feed({ type: 'result', result: queued(fa), record: { ...handed(fa), handedOver: undefined } })[0]).toMatchObject({
        type: 'refuse-result',
        closing: { reason: 'unverified-result' },
      });
      // A change under review must be judged before a person sees it: never handed over.
      const reviewedWorld = new Harness(policy([{ ...task('a'), review: true }]));
      reviewedWorld.feed({ type: 'tick', now: T0 });
      const ra = reviewedWorld.recordOf('a');
      expect(reviewedWorld.feed({ type: 'result', result: queued(ra), record: handed(ra) })[0]).toMatchObject({ type: 'refuse-result' });
    });

    it('that did not pass closes its episode; a fatal one names its reason for the circuit (a worker error when it gives none), a usage limit the hold of the world', () => {
      const h = new Harness(policy([task('a'), task('b')]));
      h.feed({ type: 'tick', now: T0 });
      const [a, b] = [h.recordOf('a'), h.recordOf('b')];
      const failed = resultOf(a, { verdict: 'failed', reason: 'agent-exit', message: 'exit 1', candidate: null });
      expect(h.feed({ type: 'result', result: failed, record: null })).toEqual([{ type: 'close-episode', result: failed, fatal: null, hold: null }]);
      const fatal = resultOf(b, { verdict: 'failed', reason: null, message: null, fatal: true });
      expect(h.feed({ type: 'result', result: fatal, record: null })).toEqual([
        { type: 'close-episode', result: fatal, fatal: { reason: 'worker-error', message: '' }, hold: null },
      ]);
      const limited = resultOf(a, { verdict: 'abandoned', reason: 'agent-usage-limit', message: 'limit reached', candidate: null, holdUntil: T0 + 60_000 });
      expect(h.feed({ type: 'result', result: limited, record: null })).toEqual([
        { type: 'close-episode', result: limited, fatal: null, hold: { untilMs: T0 + 60_000, message: 'limit reached' } },
      ]);
      expect(h.running()).toEqual(['a', 'b']);
    });

    it('of an episode the run does not run (delivered twice, or already integrating) is dropped', () => {
      const h = new Harness(policy([task('a')]));
      h.feed({ type: 'tick', now: T0 });
      const a = h.recordOf('a');
      h.feed({ type: 'passed', id: a.id });
      const before = h.state;
      expect(h.feed({ type: 'result', result: resultOf(a), record: gated(a) })).toEqual([{ type: 'drop-result', id: a.id }]);
      expect(h.feed({ type: 'result', result: resultOf(record('zz', 'a')), record: null })).toEqual([{ type: 'drop-result', id: 'zz' }]);
      expect(h.state).toBe(before);
    });
  });
});

describe('closing an episode the run before left open', () => {
  it('charges nothing for a crash outside the gate, nor for the first crash in it, and charges the second in a row as a poison pill', () => {
    expect(crashClosing(false, [{ reason: 'gate-crashed' }])).toMatchObject({ outcome: 'abandoned', reason: 'orchestrator-stopped' });
    expect(crashClosing(true, [])).toMatchObject({ outcome: 'abandoned', reason: 'gate-crashed' });
    expect(crashClosing(true, [{ reason: 'gate-crashed' }, { reason: 'test-failed' }])).toMatchObject({ outcome: 'abandoned', reason: 'gate-crashed' });
    expect(crashClosing(true, [{ reason: 'test-failed' }, { reason: 'gate-crashed' }])).toMatchObject({ outcome: 'failed', reason: 'poison-pill' });
    // After a person's retry the count starts again: a poison pill before it is not a crash of this kind.
    expect(crashClosing(true, [{ reason: 'poison-pill' }])).toMatchObject({ reason: 'gate-crashed' });
  });
});

describe('the run policy with reviews', () => {
  const reviewed = (id: string): TaskSpec => ({ ...task(id), review: true });

  it('parks a passing change of a review task instead of integrating it: its slot is free, its task busy, the loop looks for decisions', () => {
    const h = new Harness(policy([reviewed('a'), task('b'), task('c')]));
    h.feed({ type: 'tick', now: T0 });
    const a = h.recordOf('a');
    const commands = h.feed({ type: 'result', result: resultOf(a), record: gated(a) });
    expect(commands[0]).toEqual({ type: 'park', change: { id: a.id, task: 'a', candidate: CANDIDATE, base: a.base } });
    expect(commands.some((c) => c.type === 'integrate')).toBe(false);
    expect(h.running()).toEqual(['b', 'c']);
    expect([...h.state.reviewing.keys()]).toEqual([a.id]);
    expect(nextWake(h.state)).toBe(h.state.now + 2000);
    h.feed({ type: 'tick', now: T0 + 10 });
    expect(h.running()).toEqual(['b', 'c']);
  });

  it('reviews every change with review: all', () => {
    const h = new Harness(policy([task('a')], { reviewAll: true }));
    h.feed({ type: 'tick', now: T0 });
    const a = h.recordOf('a');
    expect(h.feed({ type: 'result', result: resultOf(a), record: gated(a) })[0]).toMatchObject({ type: 'park' });
  });

  it('integrates an approved change while the run goes on, and the run then ends done', () => {
    const h = new Harness(policy([reviewed('a'), task('b')]));
    h.feed({ type: 'tick', now: T0 });
    const a = h.recordOf('a');
    h.feed({ type: 'result', result: resultOf(a), record: gated(a) });
    expect(h.feed({ type: 'reviewed', id: a.id, decision: 'approve', note: null })).toEqual([
      { type: 'integrate', change: { id: a.id, task: 'a', candidate: CANDIDATE, base: a.base } },
    ]);
    expect([...h.state.integrating.keys()]).toEqual([a.id]);
    h.feed({ type: 'landed', task: 'a', tasks: h.state.tasks });
    h.feed({ type: 'finished', record: final(a, 'accepted'), now: T0 + 5 });
    expect(h.stop()).toBeUndefined();
    const b = h.recordOf('b');
    h.feed({ type: 'landed', task: 'b', tasks: h.state.tasks });
    h.feed({ type: 'finished', record: final(b, 'accepted'), now: T0 + 6 });
    expect(h.stop()).toEqual({ type: 'finish', reason: { kind: 'done' } });
  });

  it('closes a rejected change and tries its task again, charging the attempt', () => {
    const h = new Harness(policy([reviewed('a'), task('b')], { maxAttempts: 3 }));
    h.feed({ type: 'tick', now: T0 });
    const a = h.recordOf('a');
    h.feed({ type: 'result', result: resultOf(a), record: gated(a) });
    expect(h.feed({ type: 'reviewed', id: a.id, decision: 'reject', note: 'use the parser' })).toEqual([
      { type: 'close-review', id: a.id, note: 'use the parser' },
    ]);
    h.feed({ type: 'finished', record: final(a, 'rejected', 'review-rejected'), now: T0 + 5 });
    expect(h.state.reviewing.size).toBe(0);
    expect(h.recordOf('a').attempt).toBe(2);
    const start = h.commands.filter((c) => c.type === 'start').at(-1);
    expect(start).toMatchObject({ tasks: [{ earlier: [a.id] }] });
  });

  it('ends awaiting-review when nothing else can go on, and ignores a decision once it stops', () => {
    const h = new Harness(policy([reviewed('a'), task('b', ['a'])]));
    h.feed({ type: 'tick', now: T0 });
    const a = h.recordOf('a');
    h.feed({ type: 'result', result: resultOf(a), record: gated(a) });
    expect(h.stop()).toEqual({ type: 'finish', reason: { kind: 'awaiting-review', episodes: [{ id: a.id, task: 'a' }] } });
    expect(decide(h.state, { type: 'reviewed', id: a.id, decision: 'approve', note: null }).commands).toEqual([]);
  });

  it('keeps a change found waiting at its start waiting', () => {
    const a = { ...gated(record('e1', 'a')), outcome: 'awaiting-review' as const };
    const state = initialPolicyState({
      config: { parallelism: 2, maxAttempts: 2, blockOnRepeat: true, budgets: {}, distributed: false },
      tasks: [reviewed('a')],
      done: new Set(),
      records: [a],
      reviewing: new Map([[a.id, { task: 'a', change: { id: a.id, task: 'a', candidate: CANDIDATE, base: a.base } }]]),
      now: T0,
    });
    const { commands } = decide(state, { type: 'tick', now: T0 });
    expect(commands).toEqual([{ type: 'finish', reason: { kind: 'awaiting-review', episodes: [{ id: 'e1', task: 'a' }] } }]);
  });
});

describe('the run policy with races', () => {
  const raced = (id: string, race: number): TaskSpec => ({ ...task(id), race });

  /** Starts the racers a start command asks for, as the loop does: attempts counted on, every racer naming its race (the first). */
  function startRace(state: PolicyState, ids: string[]): { state: PolicyState; racers: EpisodeRecord[] } {
    const { commands } = decide(state, { type: 'tick', now: T0 });
    const start = commands.find((c) => c.type === 'start')!;
    const { task: t, attempt } = start.tasks[0]!;
    const racers = ids.map((id, k) => record(id, t.id, { attempt: attempt + k, race: ids[0]! }));
    let next = state;
    for (const r of racers) next = decide(next, { type: 'started', record: r }).state;
    return { state: decide(next, { type: 'starts-done', now: T0 }).state, racers };
  }

  it('asks for every racer of a raced task (the task, or agent.race), as many as the parallelism and the budgets leave room for', () => {
    const start = (s: PolicyState) => decide(s, { type: 'tick', now: T0 }).commands.find((c) => c.type === 'start')!;
    expect(start(policy([raced('a', 3)], { parallelism: 4 }))).toMatchObject({ tasks: [{ racers: 3 }], limit: 4 });
    expect(start(policy([task('a')], { parallelism: 4, race: 2 }))).toMatchObject({ tasks: [{ racers: 2 }] });
    // Every racer is an episode: the budget of two leaves room for two of the three.
    expect(start(policy([raced('a', 3)], { parallelism: 4, budgets: { maxEpisodes: 2 } }))).toMatchObject({ limit: 2 });
    const { state } = startRace(policy([raced('a', 3)], { parallelism: 4, budgets: { maxEpisodes: 3 } }), ['r1', 'r2', 'r3']);
    expect(state.ledger.count).toBe(3);
    expect(state.tally.episodes).toBe(3);
  });

  it('lands the first racer to pass, stops the others, and closes each of them outrun when it ends', () => {
    const { state, racers } = startRace(policy([raced('a', 3)], { parallelism: 3 }), ['r1', 'r2', 'r3']);
    const [r1, r2, r3] = racers as [EpisodeRecord, EpisodeRecord, EpisodeRecord];
    const won = decide(state, { type: 'result', result: resultOf(r2), record: gated(r2) });
    expect(won.commands).toEqual([
      { type: 'integrate', change: { id: 'r2', task: 'a', candidate: CANDIDATE, base: r2.base } },
      { type: 'stop-racers', ids: ['r1', 'r3'] },
    ]);
    expect(won.state.races.get('r1')).toMatchObject({ winner: 'r2' });
    // A stopped racer, and one whose gate passed too late: both outrun, neither charged.
    const stopped = decide(won.state, { type: 'result', result: resultOf(r1, { verdict: 'abandoned', reason: 'aborted', candidate: null }), record: null });
    expect(stopped.commands).toEqual([{ type: 'outrun', id: 'r1', winner: 'r2' }]);
    expect(decide(won.state, { type: 'result', result: resultOf(r3), record: gated(r3) }).commands).toEqual([{ type: 'outrun', id: 'r3', winner: 'r2' }]);
    let s = decide(won.state, { type: 'finished', record: final(r1, 'outrun', 'outrun'), now: T0 + 1 }).state;
    s = decide(s, { type: 'finished', record: final(r3, 'outrun', 'outrun'), now: T0 + 1 }).state;
    expect(s.tally).toMatchObject({ outrun: 2, failed: 0, rejected: 0 });
    expect(taskStatuses(s).get('a')).toMatchObject({ state: 'running', failures: 0 });
    s = decide(s, { type: 'landed', task: 'a', tasks: s.tasks }).state;
    const done = decide(s, { type: 'finished', record: final(r2, 'accepted'), now: T0 + 2 });
    expect(done.commands.at(-1)).toEqual({ type: 'finish', reason: { kind: 'done' } });
    expect(done.state.races.size).toBe(0);
  });

  it('leaves the other racers running with race.stopOnWin off, and charges a racer that failed before the race was decided', () => {
    const { state, racers } = startRace(policy([raced('a', 3)], { parallelism: 3, stopOnWin: false, maxAttempts: 5 }), ['r1', 'r2', 'r3']);
    const [r1, r2] = racers as [EpisodeRecord, EpisodeRecord];
    const failed = decide(state, { type: 'result', result: resultOf(r1, { verdict: 'rejected', reason: 'test-failed', candidate: null }), record: null });
    expect(failed.commands).toMatchObject([{ type: 'close-episode' }]);
    const after = decide(state, { type: 'finished', record: final(r1, 'rejected', 'test-failed'), now: T0 + 1 }).state;
    expect(taskStatuses(after).get('a')).toMatchObject({ state: 'running', failures: 1 });
    const won = decide(after, { type: 'result', result: resultOf(r2), record: gated(r2) });
    expect(won.commands.map((c) => c.type)).toEqual(['integrate']);
  });

  it('gives the race back to the racers still working when its winner is rejected on the tip', () => {
    const { state, racers } = startRace(policy([raced('a', 2)], { parallelism: 2, stopOnWin: false, maxAttempts: 5 }), ['r1', 'r2']);
    const [r1, r2] = racers as [EpisodeRecord, EpisodeRecord];
    const won = decide(state, { type: 'result', result: resultOf(r1), record: gated(r1) }).state;
    const lost = decide(won, { type: 'finished', record: final(r1, 'rejected', 'replay-conflict'), now: T0 + 1 }).state;
    expect(lost.races.get('r1')).toMatchObject({ winner: null });
    expect(decide(lost, { type: 'result', result: resultOf(r2), record: gated(r2) }).commands.map((c) => c.type)).toEqual(['integrate']);
  });

  it('in a ratchet world waits for every racer, then lands the highest score, a tie going to the smaller change', () => {
    const { state, racers } = startRace(policy([raced('a', 3)], { parallelism: 3, ratchet: true, maxAttempts: 5 }), ['r1', 'r2', 'r3']);
    const [r1, r2, r3] = racers as [EpisodeRecord, EpisodeRecord, EpisodeRecord];
    const scored = (r: EpisodeRecord, score: number, files: string[]) => ({
      ...gated(r),
      gate: { ok: true, score } as EpisodeRecord['gate'],
      changedFiles: files,
    });
    let s = decide(state, { type: 'result', result: resultOf(r1), record: scored(r1, 7, ['src/a.js', 'src/a2.js']) });
    expect(s.commands).toEqual([]);
    s = decide(s.state, { type: 'result', result: resultOf(r2), record: scored(r2, 7, ['src/a.js']) });
    expect(s.commands).toEqual([]);
    s = decide(s.state, { type: 'result', result: resultOf(r3, { verdict: 'rejected', reason: 'score-fell', candidate: null }), record: null });
    expect(s.commands).toMatchObject([{ type: 'close-episode' }]);
    const decided = decide(s.state, { type: 'finished', record: final(r3, 'rejected', 'score-fell'), now: T0 + 1 });
    expect(decided.commands).toEqual([
      { type: 'integrate', change: { id: 'r2', task: 'a', candidate: CANDIDATE, base: r2.base } },
      { type: 'outrun', id: 'r1', winner: 'r2' },
    ]);
  });

  it('keeps the racers a starting run takes over in their race: the first that passed wins, another that passed is outrun', () => {
    const taken = [
      { id: 'r3', task: 'a', race: 'r1' },
      { id: 'r2', task: 'a', race: 'r1' },
      { id: 'r1', task: 'a', race: 'r1' },
      { id: 'e9', task: 'b', race: null },
    ];
    const { races, outrun } = racesOf(taken, new Set(['r2', 'r3']));
    expect([...races]).toEqual([['r1', { task: 'a', racers: ['r1', 'r2', 'r3'], winner: 'r2', passes: [] }]]);
    expect(outrun).toEqual([{ id: 'r3', winner: 'r2' }]);
    const state = initialPolicyState({
      config: { parallelism: 3, maxAttempts: 3, blockOnRepeat: true, budgets: {}, distributed: true },
      tasks: [raced('a', 3)],
      done: new Set(),
      records: [],
      now: T0,
      running: new Map([['r1', 'a']]),
      integrating: new Map([['r2', 'a']]),
      races,
    });
    const r1 = record('r1', 'a', { race: 'r1' });
    expect(decide(state, { type: 'result', result: resultOf(r1), record: gated(r1) }).commands).toEqual([{ type: 'outrun', id: 'r1', winner: 'r2' }]);
  });

  it('sends a winning change of a review task to review', () => {
    const { state, racers } = startRace(policy([{ ...raced('a', 2), review: true }], { parallelism: 2 }), ['r1', 'r2']);
    const won = decide(state, { type: 'result', result: resultOf(racers[1]!), record: gated(racers[1]!) });
    expect(won.commands.map((c) => c.type)).toEqual(['park', 'stop-racers']);
  });
});
