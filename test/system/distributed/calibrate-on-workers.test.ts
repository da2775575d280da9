import { afterAll, describe, expect } from 'vitest';
import { startCli, type CliProcess } from '../../helpers/cli-process.js';
import { fastClusterEnv } from '../../helpers/distributed-world.js';
import { genesis } from '../../helpers/genesis-cli.js';
import { adoptCalibrationProject } from '../../helpers/calibration-project.js';
import { itWith } from '../../helpers/services.js';

const REDIS = 'redis://127.0.0.1:6379';
const workers: CliProcess[] = [];

afterAll(() => {
  for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
});

interface Report {
  falseRejection: {
    count: number;
    of: number;
    rate: number;
    causes: unknown[];
    flaky: unknown[];
    replays: Array<{ commit: string; accepted: boolean; reason?: string; message?: string; cause?: string; flaky?: string[] }>;
  };
  recall: { count: number; of: number; sites: number; files: string[]; executedLinesOnly: boolean; survivors: unknown[] };
}

/** What a calibration measured, without its timings (and the gates' logs, which carry them). */
function measured(report: Report) {
  const f = report.falseRejection;
  const d = report.recall;
  return {
    f: {
      count: f.count,
      of: f.of,
      rate: f.rate,
      causes: f.causes,
      flaky: f.flaky,
      replays: f.replays.map(({ commit, accepted, reason, message, cause, flaky }) => ({ commit, accepted, reason, message, cause, flaky })),
    },
    d: {
      count: d.count,
      of: d.of,
      sites: d.sites,
      files: d.files,
      executedLinesOnly: d.executedLinesOnly,
      survivors: (d.survivors as Array<Record<string, unknown>>).map(({ durationMs: _, ...site }) => site),
    },
  };
}

const eventsOf = (w: CliProcess, type: string) =>
  w.lines
    .filter((l) => l.startsWith('{'))
    .flatMap((l) => {
      const e = JSON.parse(l) as { type: string; episodeId: string; task: string; verdict?: string };
      return e.type === type ? [e] : [];
    });

describe('genesis calibrate --redis', () => {
  itWith('redis')(
    "sends every gate to the world's workers and reports the f and d a calibration in this process measures",
    async () => {
      const env = fastClusterEnv();
      // Two workers that take one gate at a time, with two gates in flight: both get some.
      const fleet = [0, 1].map(() => startCli(['worker', '--redis', REDIS, '--json', '--concurrency', '1'], env));
      workers.push(...fleet);
      const world = await adoptCalibrationProject('genesis-calibrate-fleet-');
      const args = ['calibrate', '--world', world, '--commits', '4', '--mutants', '4', '--jobs', '2', '--json'];
      const local = await genesis(args);
      expect(local.status, local.stderr).toBe(0);
      await Promise.all(fleet.map((w) => w.waitFor(/"type":"ready"/)));
      const onWorkers = await genesis([...args, '--redis', REDIS], { env });
      expect(onWorkers.status, onWorkers.stderr).toBe(0);
      expect(onWorkers.stderr).toContain('sending the gates to 2 workers');

      const here = measured(JSON.parse(local.stdout) as Report);
      const there = measured(JSON.parse(onWorkers.stdout) as Report);
      expect(here.f).toMatchObject({ count: 3, of: 4 });
      expect(here.d.of).toBe(4);
      expect(there).toEqual(here);

      // Every gate ran on a worker, both workers took some, and each that started ended.
      // A worker's last lines may reach this test after the calibration's exit.
      await expect.poll(() => fleet.flatMap((w) => eventsOf(w, 'calibrate-end')).length).toBeGreaterThanOrEqual(here.f.of + here.d.of);
      const starts = fleet.map((w) => eventsOf(w, 'calibrate-start'));
      const ends = fleet.flatMap((w) => eventsOf(w, 'calibrate-end'));
      for (const s of starts) expect(s.length).toBeGreaterThan(0);
      expect(ends).toHaveLength(starts.flat().length);
      expect(new Set(ends.map((e) => e.task))).toEqual(new Set(['lib']));
      expect(ends.filter((e) => e.episodeId.startsWith('mutant-'))).toHaveLength(4);
      for (const w of fleet) w.child.kill('SIGTERM');
    },
    120_000,
  );

  itWith('redis')(
    'a gate whose worker is killed under it is taken by another worker, and the calibration ends with every replay judged',
    async () => {
      const env = fastClusterEnv();
      const fleet = [0, 1].map(() => startCli(['worker', '--redis', REDIS, '--json', '--concurrency', '1'], env));
      workers.push(...fleet);
      // Each gate's tests take a few seconds, so a worker can be killed while one runs.
      const world = await adoptCalibrationProject('genesis-calibrate-fleet-', 'sleep 3 && node --test test/');
      await Promise.all(fleet.map((w) => w.waitFor(/"type":"ready"/)));
      const run = startCli(['calibrate', '--world', world, '--commits', '2', '--jobs', '1', '--json', '--redis', REDIS], env);
      const [first] = (await Promise.race(fleet.map((w, i) => w.waitFor(/"type":"calibrate-start"/).then(() => [i])))) as [number];
      const victim = fleet[first]!;
      const gate = eventsOf(victim, 'calibrate-start')[0]!.episodeId;
      victim.child.kill('SIGKILL');
      expect(await run.exited, run.stderr()).toBe(0);
      const report = JSON.parse(run.lines.join('\n')) as Report;
      // Judged as in one process: of the two newest commits, the one that edits a protected file is rejected.
      expect(report.falseRejection).toMatchObject({ count: 1, of: 2 });
      // The killed worker's gate was run again, and ended, on the other one.
      const survivor = fleet[1 - first]!;
      expect(eventsOf(survivor, 'calibrate-end').map((e) => e.episodeId)).toContain(gate);
      survivor.child.kill('SIGTERM');
    },
    120_000,
  );

  itWith('redis')(
    'refuses at once, saying to start a worker, when no worker is alive',
    async () => {
      const world = await adoptCalibrationProject('genesis-calibrate-fleet-');
      const started = Date.now();
      const run = await genesis(['calibrate', '--world', world, '--commits', '2', '--redis', REDIS], { env: fastClusterEnv() });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('[calibrate-no-workers]');
      expect(run.stderr).toMatch(new RegExp(`what to do: start one .*worker --redis ${REDIS}`));
      expect(Date.now() - started).toBeLessThan(15_000);
    },
    60_000,
  );
});
