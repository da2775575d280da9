import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, vi } from 'vitest';
import { define } from '../../../src/cli/commands/stats/stats.js';
import { createSandbox } from '../../../src/sandbox/create-sandbox.js';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import type { EpisodeRecord } from '../../../src/ledger/episode-record.js';
import { initWorld } from '../../../src/operations/init-world.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { bwrapAnswers, itWith } from '../../helpers/services.js';
import { runSimFixture } from '../agents/sim/sim-fixture.js';

const CALC = fileURLToPath(new URL('../../../worlds/calc', import.meta.url));

afterEach(() => {
  vi.restoreAllMocks();
});

/** Runs `genesis stats …` in process and returns what it printed. */
async function genesis(...args: string[]): Promise<string> {
  let output = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    output += String(chunk);
    return true;
  });
  const program = new Command('genesis').exitOverride();
  define(program);
  await program.parseAsync(['node', 'genesis', ...args]);
  vi.restoreAllMocks();
  return output;
}

const ratio = (count: number, of: number) => ({ count, of, rate: count / of });

describe('genesis stats on the calc demo world', () => {
  let root = '';
  let world = '';
  let records: EpisodeRecord[] = [];

  // One world for every test here (tempDir would remove it after the first test).
  beforeAll(async () => {
    if (!bwrapAnswers()) return;
    root = await mkdtemp(join(tmpdir(), 'genesis-stats-'));
    const sandbox = await createSandbox('bwrap', { image: 'genesis/node:20' });
    const init = await initWorld({ worldPath: join(root, 'calc.world'), from: CALC, sandbox: async () => sandbox });
    await runEmbedded({ world: init.world, sandbox });
    world = init.world.path;
    records = await new GitLedger(world).readAll();
  }, 120_000);

  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  itWith('bwrap')('counts what the ledger holds: episodes, outcomes, reasons, acceptance per attempt', async () => {
    const json = JSON.parse(await genesis('stats', '--world', world, '--json')) as Record<string, any>;
    const of = (outcome: string) => records.filter((r) => r.outcome === outcome);
    expect(json.world).toMatchObject({ name: 'calc', path: world, tasks: 5, tasksDone: 5, running: 0, maxAttempts: 3 });
    expect(json.counts).toEqual({
      episodes: records.length,
      accepted: of('accepted').length,
      rejected: of('rejected').length,
      failed: of('failed').length,
      abandoned: 0,
      tasks: 5,
      tasksAccepted: 5,
    });
    const reasons = new Map<string, number>();
    for (const r of of('rejected')) reasons.set(r.reason!, (reasons.get(r.reason!) ?? 0) + 1);
    expect(Object.fromEntries(json.rejectedByReason.map((r: { reason: string; count: number }) => [r.reason, r.count]))).toEqual(Object.fromEntries(reasons));
    const attempts = [...new Set(records.map((r) => r.attempt))].sort();
    expect(json.acceptanceByAttempt.map((a: any) => ({ attempt: a.attempt, count: a.count, of: a.of }))).toEqual(
      attempts.map((attempt) => ({
        attempt,
        count: records.filter((r) => r.attempt === attempt && r.outcome === 'accepted').length,
        of: records.filter((r) => r.attempt === attempt).length,
      })),
    );
  });

  itWith('bwrap')('derives p, its horizons, retry recovery and time per accepted change from the same records', async () => {
    const json = JSON.parse(await genesis('stats', '--world', world, '--json')) as Record<string, any>;
    const accepted = records.filter((r) => r.outcome === 'accepted').length;
    const p = accepted / records.length;
    expect(json.episodeSuccess).toMatchObject(ratio(accepted, records.length));
    expect(json.horizons[0]).toMatchObject({ threshold: 0.5, steps: expect.closeTo(Math.log(0.5) / Math.log(p), 9) });
    const failedFirst = new Set(records.filter((r) => r.attempt === 1 && r.outcome !== 'accepted').map((r) => r.task));
    const recovered = [...failedFirst].filter((t) => records.some((r) => r.task === t && r.outcome === 'accepted')).sort();
    expect(json.retryRecovery).toMatchObject({ ...ratio(recovered.length, failedFirst.size), tasks: recovered });
    const totalMs = records.reduce((sum, r) => sum + Date.parse(r.endedAt!) - Date.parse(r.startedAt), 0);
    expect(json.perAcceptedChange).toMatchObject({
      accepted,
      knownDurationMs: totalMs,
      durationMs: expect.closeTo(totalMs / accepted, 6),
      costUsd: null,
      episodesWithoutCost: records.length,
    });
    expect(json.humanMinutesFit).toEqual({ fit: null, reason: 'only 5 tasks with humanMinutes and a verdict; the fit needs 10' });
    expect(json.prediction).toMatchObject({ tasks: 0, success: 1 });
  });

  itWith('bwrap')('measures what each task and each accepted change spent from the same records', async () => {
    const json = JSON.parse(await genesis('stats', '--world', world, '--json')) as Record<string, any>;
    const tasks = [...new Set(records.map((r) => r.task))];
    expect(json.spend.tasks.map((t: any) => t.task).sort()).toEqual([...tasks].sort());
    for (const task of tasks) {
      const mine = records.filter((r) => r.task === task).sort((x, y) => Date.parse(x.startedAt) - Date.parse(y.startedAt));
      const landed = mine.find((r) => r.outcome === 'accepted')!;
      expect(json.spend.tasks.find((t: any) => t.task === task)).toMatchObject({
        episodes: mine.length,
        landed: 1,
        agentMs: mine.reduce((sum, r) => sum + (r.phases.agent ?? 0), 0),
        gateMs: mine.reduce((sum, r) => sum + (r.phases.gate ?? 0) + (r.phases['gate-on-base'] ?? 0), 0),
        toLandingMs: Date.parse(landed.endedAt!) - Date.parse(mine[0]!.startedAt),
        costUsd: null,
        episodesWithoutCost: mine.length,
      });
      expect(json.spend.changes.find((c: any) => c.task === task)).toMatchObject({ episode: landed.id, commit: landed.commit, episodes: mine.length });
    }
    expect(await genesis('stats', '--world', world)).toMatch(/^task +landed +episodes +tokens +cost +agent +gate +to land$/m);
  });

  itWith('bwrap')('prints the same numbers as readable tables', async () => {
    const text = await genesis('stats', '--world', world);
    const accepted = records.filter((r) => r.outcome === 'accepted').length;
    expect(text).toContain(`world calc (${world}): 5 of 5 tasks done`);
    expect(text).toContain(`${records.length} episodes: ${accepted} accepted`);
    expect(text).toMatch(/^attempt +accepted +decided +rate +95% interval$/m);
    expect(text).toContain(`Per-episode success p:   ${accepted} of ${records.length} decided episodes accepted`);
    expect(text).toMatch(/^50\.0% +\d+\.\d\d +\d+\.\d\d - \d+\.\d\d$/m);
    expect(text).toContain('What is left:            nothing: every task is done');
  });
});

describe('genesis stats on a world that stopped blocked', () => {
  itWith('bwrap')(
    'predicts what is left from the measured p and the repeated failure signatures',
    async () => {
      const { world } = await runSimFixture({ steps: 3, e: 1, w: 0, f: 0, attempts: 2 });
      const json = JSON.parse(await genesis('stats', '--world', world.path, '--json')) as Record<string, any>;
      expect(json.counts).toMatchObject({ episodes: 2, failed: 2, accepted: 0 });
      expect(json.failedByReason).toEqual([{ reason: 'agent-exit', count: 2 }]);
      // The sim agent's crash prints the same words every time, so its signature repeats.
      expect(json.deterministicFraction).toMatchObject(ratio(1, 1));
      expect(json.horizons[0]).toMatchObject({ steps: 0 });
      expect(json.prediction).toMatchObject({ tasks: 3, attempts: 2, deterministic: 1, pTask: 0, success: 0 });
      const text = await genesis('stats', '--world', world.path);
      expect(text).toContain('agent-exit');
      expect(text).toContain('What is left:            3 tasks');
    },
    120_000,
  );
});
