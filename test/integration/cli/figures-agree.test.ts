import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEpisodeRecord } from '../../../src/ledger/episode-record.js';
import { ledgerOf } from '../../../src/ledger/git-ledger.js';
import { createServerApp } from '../../../src/server/create-app.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { startCli } from '../../helpers/cli-process.js';
import { fastClusterEnv } from '../../helpers/distributed-world.js';
import { genesis } from '../../helpers/genesis-cli.js';
import { bwrapAnswers } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

// One world that went through what a night does to one: a run stopped by its budget, two lifts,
// a run that died (its episode left running), a restart, an amendment, a reopened task landed
// again, and another landed again by a fleet (a worker of the distributed queue). Then every
// figure a person reads is asked of the CLI's --json and of the HTTP API.
const REDIS = 'redis://127.0.0.1:6379';
let world = '';
beforeAll(async () => {
  if (!bwrapAnswers()) return;
  const built = await makeWorld({
    sandbox: 'bwrap',
    manifest: baseManifest({ goal: { outcome: 'modules a and b exist', stop: { maxEpisodes: 1 } } }),
    recording: {
      a: [{ say: 'crashing on purpose', exit: 1 }, { write: { 'src/a.js': GOOD_A } }, { write: { 'src/a.js': `${GOOD_A}// done again\n` } }],
      b: [{ write: { 'src/b.js': GOOD_B } }, { write: { 'src/b.js': `${GOOD_B}// done again\n` } }],
    },
  });
  world = join(await mkdtemp(join(tmpdir(), 'genesis-figures-')), 'w.world');
  await cp(built.world.path, world, { recursive: true });
  const run = () => genesis(['run', '--world', world, '--sandbox', 'bwrap']);
  expect((await run()).stdout).toContain('maxEpisodes');
  for (const n of ['2', '4']) expect((await genesis(['budget', 'lift', '--world', world, '--episodes', n, '--reason', 'one more night'])).status).toBe(0);
  // A run that died: its scheduler (a pid of this host that is not running) left an episode open.
  const dead = `${hostname()}:2147483646`;
  const base = execFileSync('git', ['rev-parse', 'main'], { cwd: world, encoding: 'utf8' }).trim();
  await ledgerOf(await LocalWorld.open(world)).write(
    openEpisodeRecord({ id: '20200101-000000-000-dead00', world: 'fixture', task: 'b', attempt: 1, base, agent: 'script', worker: dead }),
  );
  const restarted = await run();
  expect(restarted.status, restarted.stderr).toBe(0);
  const clone = join(await tempDir('genesis-figures-'), 'clone');
  execFileSync('git', ['clone', '-q', world, clone]);
  await writeFile(join(clone, 'NOTES.md'), 'notes\n');
  expect((await genesis(['amend', '--world', world, '--from', clone, '--message', 'add notes', '--sandbox', 'bwrap'])).status).toBe(0);
  expect((await genesis(['task', 'reopen', 'a', '--world', world, '--reason', 'its acceptance changed'])).status).toBe(0);
  const again = await run();
  expect(again.status, again.stderr).toBe(0);
  // The last leg on a fleet: b reopened, its episode run by a worker through Redis.
  expect((await genesis(['task', 'reopen', 'b', '--world', world, '--reason', 'its acceptance changed too'])).status).toBe(0);
  expect((await genesis(['budget', 'lift', '--world', world, '--episodes', '3', '--reason', 'the fleet takes over'])).status).toBe(0);
  const env = fastClusterEnv();
  const worker = startCli(['worker', '--redis', REDIS, '--json'], env);
  try {
    await worker.waitFor(/"type":"ready"/);
    const fleet = await genesis(['run', '--world', world, '--redis', REDIS, '--sandbox', 'bwrap'], { env });
    expect(fleet.status, `${fleet.stdout}\n${fleet.stderr}`).toBe(0);
    expect(worker.lines.some((l) => l.includes('"type":"end"'))).toBe(true);
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
}, 360_000);

afterAll(async () => {
  if (world) await rm(join(world, '..'), { recursive: true, force: true });
});

async function cli(args: string[]): Promise<any> {
  const r = await genesis([...args, '--world', world, '--json']);
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

async function api(url: string): Promise<any> {
  const response = await createServerApp({ world: await LocalWorld.open(world) }).app.request(url);
  expect(response.status).toBe(200);
  return response.json();
}

describe.skipIf(!bwrapAnswers())('every figure a person reads, after an amended, reopened, lifted, restarted night ending on a fleet', () => {
  it('shows the budgets in force, lifts included, alike in genesis budget, genesis status and the API', async () => {
    const [budget, status, overview] = await Promise.all([cli(['budget']), cli(['status']), api('/api/overview')]);
    expect(budget.standing).toEqual(overview.budgets);
    expect(status.budgets).toEqual(overview.budgets);
    // world.yaml's 1 and the three lifts: what genesis run held the world to, not world.yaml's figure.
    expect(overview.budgets).toEqual([
      { name: 'maxEpisodes', set: 1, lifted: 9, limit: 10, used: overview.episodes.total, unit: 'episodes', spent: overview.episodes.total >= 10 },
    ]);
  });

  it('counts attempts and episodes per task alike in status, episodes, stats and the API', async () => {
    const [status, tasks, episodes, stats] = await Promise.all([cli(['status']), api('/api/tasks'), cli(['episodes']), cli(['stats'])]);
    const figures = (list: any[]) => list.map((t) => ({ id: t.id, attempts: t.attempts, episodes: t.episodes }));
    expect(figures(status.tasks)).toEqual(figures(tasks.tasks));
    for (const t of tasks.tasks) {
      expect(t.episodes).toBe(episodes.filter((e: any) => e.task === t.id).length);
      expect(t.episodes).toBe(stats.spend.tasks.find((s: any) => s.task === t.id)?.episodes ?? 0);
    }
    // a: the crash, the landing, and after its reopening an empty change and the landing; b: the
    // abandoned episode is no attempt, then the landing and, after its reopening, the same two on the fleet.
    expect(figures(tasks.tasks)).toEqual([
      { id: 'a', attempts: 4, episodes: 4 },
      { id: 'b', attempts: 3, episodes: 4 },
    ]);
  });

  it('names what made each commit alike in genesis log and the API, a reopening as a reopening', async () => {
    const [log, history] = await Promise.all([cli(['log']), api('/api/history')]);
    expect(log.map((c: any) => c.made)).toEqual(history.commits.map((c: any) => c.made));
    expect(log.map((c: any) => c.made)).toEqual(['episode', 'reopen', 'episode', 'reopen', 'amend', 'episode', 'episode', 'init']);
    const text = await genesis(['log', '--world', world]);
    expect(text.stdout).toContain('(reopen) a');
  });

  it('draws the timeline with a row per slot of this machine, however many runs and workers ran the night', async () => {
    const timeline = await api('/api/timeline');
    const processes = new Set(timeline.slots.flatMap((s: any) => s.episodes.map((e: any) => e.worker)));
    // Runs of genesis run (one of them dead) and a fleet worker, all on this host, never more than two episodes at once.
    expect(processes.size).toBeGreaterThanOrEqual(4);
    expect(new Set(timeline.slots.map((s: any) => s.host))).toEqual(new Set([hostname()]));
    expect(timeline.slots.length).toBeLessThanOrEqual(2);
  });

  it('does not warn of a task landed twice after the reopening the docs recommend', async () => {
    const audit = await genesis(['audit', '--world', world, '--sample', '0', '--json']);
    expect(audit.stdout).not.toContain('task-landed-twice');
    expect(JSON.parse(audit.stdout).findings).toEqual([]);
  });
});
