import { describe, expect, it } from 'vitest';
import { computeHorizonSteps, computeLedgerStats, computeWilsonInterval, createRng, type StatsEpisode } from '../../../src/reliability/index.js';

let counter = 0;
function episode(task: string, attempt: number, outcome: StatsEpisode['outcome'], extra: Partial<StatsEpisode> = {}): StatsEpisode {
  counter += 1;
  return {
    id: `ep-${counter}`,
    task,
    attempt,
    outcome,
    reason: null,
    signature: null,
    startedAt: new Date(Date.UTC(2026, 0, 1, 0, counter)).toISOString(),
    durationMs: 60_000,
    costUsd: 0.5,
    humanMinutes: null,
    ...extra,
  };
}

// Six tasks: A is rejected twice for the same test, then accepted; B passes at once; C's agent
// crashes once, then passes; D is rejected, crashes differently, then is abandoned; E passes with
// an unknown cost; F is abandoned at once.
const LEDGER: StatsEpisode[] = [
  episode('A', 1, 'rejected', { reason: 'tests', signature: 'test/a.test.ts: expected 2' }),
  episode('A', 2, 'rejected', { reason: 'tests', signature: 'test/a.test.ts: expected 2' }),
  episode('A', 3, 'accepted'),
  episode('B', 1, 'accepted'),
  episode('C', 1, 'failed', { reason: 'agent-exit', signature: 'exit 1: ENOENT' }),
  episode('C', 2, 'accepted'),
  episode('D', 1, 'rejected', { reason: 'protected-path', signature: 'edited test/protected.ts' }),
  episode('D', 2, 'failed', { reason: 'agent-exit', signature: 'exit 137' }),
  episode('D', 3, 'abandoned', { durationMs: null }),
  episode('E', 1, 'accepted', { costUsd: null }),
  episode('F', 1, 'abandoned'),
];

describe('computeLedgerStats', () => {
  const stats = computeLedgerStats(LEDGER);

  it('counts episodes by outcome and tasks by whether any attempt was accepted', () => {
    expect(stats.counts).toEqual({ episodes: 11, accepted: 4, rejected: 3, failed: 2, abandoned: 2, tasks: 6, tasksAccepted: 4 });
  });

  it('counts rejections and failures by reason, most frequent first', () => {
    expect(stats.rejectedByReason).toEqual([
      { reason: 'tests', count: 2 },
      { reason: 'protected-path', count: 1 },
    ]);
    expect(stats.failedByReason).toEqual([{ reason: 'agent-exit', count: 2 }]);
  });

  it('measures acceptance per attempt number among decided episodes, with Wilson intervals', () => {
    expect(stats.acceptanceByAttempt).toEqual([
      { attempt: 1, count: 2, of: 5, rate: 0.4, ...computeWilsonInterval(2, 5) },
      { attempt: 2, count: 1, of: 3, rate: 1 / 3, ...computeWilsonInterval(1, 3) },
      { attempt: 3, count: 1, of: 1, rate: 1, ...computeWilsonInterval(1, 1) },
    ]);
  });

  it('names the tasks that retries recovered after a failed first attempt', () => {
    expect(stats.retryRecovery).toMatchObject({ count: 2, of: 3, rate: 2 / 3, tasks: ['A', 'C'] });
  });

  it('estimates the deterministic fraction from signatures that repeat on the next attempt', () => {
    // A1→A2 repeats; A2→A3, C1→C2 and D1→D2 do not; D2→D3 is abandoned and says nothing.
    expect(stats.deterministicFraction).toEqual({ count: 1, of: 4, rate: 0.25, ...computeWilsonInterval(1, 4) });
  });

  it('measures p over decided episodes and the horizons it implies, the interval ends swapped', () => {
    expect(stats.episodeSuccess).toEqual({ count: 4, of: 9, rate: 4 / 9, ...computeWilsonInterval(4, 9) });
    const interval = computeWilsonInterval(4, 9);
    expect(stats.horizons.map((h) => h.threshold)).toEqual([0.5, 0.8, 0.95]);
    expect(stats.horizons[0]).toEqual({
      threshold: 0.5,
      steps: computeHorizonSteps(4 / 9, 0.5),
      low: computeHorizonSteps(interval.low, 0.5),
      high: computeHorizonSteps(interval.high, 0.5),
    });
  });

  it('charges every episode to the accepted changes and leaves an unknown cost null, not 0', () => {
    expect(stats.perAcceptedChange).toEqual({
      accepted: 4,
      durationMs: null,
      costUsd: null,
      knownDurationMs: 10 * 60_000,
      knownCostUsd: 10 * 0.5,
      episodesWithoutDuration: 1,
      episodesWithoutCost: 1,
    });
    const known = computeLedgerStats(LEDGER.filter((e) => e.task !== 'D' && e.task !== 'E'));
    expect(known.perAcceptedChange.durationMs).toBe((7 * 60_000) / 3);
    expect(known.perAcceptedChange.costUsd).toBeCloseTo((7 * 0.5) / 3, 12);
  });

  it("orders a task's attempts by number, not by their place in the list", () => {
    expect(computeLedgerStats([...LEDGER].reverse())).toEqual(stats);
  });

  it('skips the METR-style fit, with a reason, when too few tasks carry humanMinutes', () => {
    expect(stats.humanMinutesFit).toEqual({
      fit: null,
      reason: 'only 0 tasks with humanMinutes and a verdict; the fit needs 10',
    });
  });

  it('predicts what is left of the world from p, the attempts and the deterministic fraction', () => {
    const withPrediction = computeLedgerStats(LEDGER, { remaining: { tasks: 5, attempts: 3 } });
    const q = 5 / 9;
    const pTask = 1 - q * (0.25 + 0.75 * q ** 2);
    expect(withPrediction.prediction).toEqual({
      tasks: 5,
      attempts: 3,
      deterministic: 0.25,
      pTask: expect.closeTo(pTask, 12),
      success: expect.closeTo(pTask ** 5, 12),
    });
  });

  it('reports no rate and no horizon for a ledger without verdicts', () => {
    const empty = computeLedgerStats([episode('Z', 1, 'abandoned')]);
    expect(empty.episodeSuccess.rate).toBeNull();
    expect(empty.horizons.every((h) => h.steps === null)).toBe(true);
    expect(empty.perAcceptedChange.durationMs).toBeNull();
  });

  it('reports an infinite horizon when every decided episode was accepted', () => {
    const perfect = computeLedgerStats([episode('Y', 1, 'accepted')]);
    expect(perfect.horizons[0]?.steps).toBe(Number.POSITIVE_INFINITY);
  });

  it('fits success against human minutes when enough tasks carry them', () => {
    const rng = createRng(4);
    const episodes: StatsEpisode[] = [];
    for (let t = 0; t < 60; t += 1) {
      const humanMinutes = 2 ** (rng.next() * 8);
      const p = 1 / (1 + Math.exp(-(4 - Math.log2(humanMinutes))));
      for (let attempt = 1; attempt <= 3; attempt += 1) {
        episodes.push(episode(`task-${t}`, attempt, rng.next() < p ? 'accepted' : 'rejected', { humanMinutes }));
      }
    }
    const { fit, reason } = computeLedgerStats(episodes, { bootstrap: 50 }).humanMinutesFit;
    expect(reason).toBeNull();
    expect(fit?.tasks).toBe(60);
    expect(fit?.bootstrap.resampled).toBe('tasks');
    // True 50% horizon: 2^4 = 16 minutes; 60 tasks pin it down to within a factor of two.
    expect(fit?.horizons[0]?.minutes).toBeGreaterThan(8);
    expect(fit?.horizons[0]?.minutes).toBeLessThan(32);
  });
});
