import { GenesisError } from '../../../errors/genesis-error.js';
import type { CalibrationGates } from '../../../operations/calibrate/calibration-gate.js';
import { calibrateWorld, type CalibrationReport } from '../../../operations/calibrate/calibrate-world.js';
import { BullmqCalibrationGates, listFleetWorkers } from '../../../queue/bullmq/calibration-queue.js';
import { worldKeyOf } from '../../../queue/bullmq/distributed-job.js';
import { connectRedis } from '../../../queue/redis/connection.js';
import { createSandbox } from '../../../sandbox/create-sandbox.js';
import { LocalWorld } from '../../../world/local-world.js';
import { printJson } from '../../output.js';
import type { CalibrateCliOptions } from './calibrate.js';

/**
 * The composition root of `genesis calibrate`: builds the sandbox and, with --redis, the gates
 * that go to the workers; prints progress on stderr and the report on stdout.
 */
export async function runCalibrate(path: string, opts: CalibrateCliOptions): Promise<void> {
  const world = await LocalWorld.open(path);
  const say = opts.quiet ? undefined : (line: string) => process.stderr.write(`${line}\n`);
  const fleet = opts.redis ? await joinFleet(opts.redis, world) : null;
  let report: CalibrationReport;
  try {
    if (fleet) say?.(`sending the gates to ${fleet.workers} worker${fleet.workers === 1 ? '' : 's'} through ${opts.redis}`);
    report = await calibrateWorld({
      world,
      commits: opts.commits,
      mutants: opts.mutants,
      seed: opts.seed,
      jobs: opts.jobs,
      sandbox: (m) => createSandbox(opts.sandbox ?? m.verify.sandbox, { image: m.verify.image }),
      ...(fleet ? { gates: fleet.gates } : {}),
      onProgress: say,
    });
  } finally {
    await fleet?.leave();
  }
  if (opts.json) return printJson(report);
  process.stdout.write(`${renderCalibration(report)}\n`);
}

/** The workers' side of a calibration: refused at once when no worker is alive, since its gates would wait for ever. */
async function joinFleet(url: string, world: LocalWorld): Promise<{ gates: CalibrationGates; workers: number; leave(): Promise<void> }> {
  const redis = await connectRedis(url, { name: 'genesis-calibrate' });
  try {
    const workers = (await listFleetWorkers(redis)).length;
    if (workers === 0) {
      throw new GenesisError('calibrate-no-workers', `no genesis worker is alive at ${url} to take the calibration's gates`, {
        hint: `start one or more on machines that share the world's storage (genesis worker --redis ${url}), then calibrate again; or drop --redis to gate in this process`,
      });
    }
    const manifest = await world.manifestAt('HEAD');
    const sent = new BullmqCalibrationGates(redis, { worldKey: worldKeyOf(manifest.name, world.path) });
    return {
      gates: sent.gates,
      workers,
      async leave() {
        await sent.close();
        redis.disconnect();
      },
    };
  } catch (error) {
    redis.disconnect();
    throw error;
  }
}

const percent = (x: number) => `${(x * 100).toFixed(1)}%`;

export function renderCalibration(report: CalibrationReport): string {
  const lines = [`calibration of ${report.world} at ${report.head.slice(0, 12)} (${(report.durationMs / 1000).toFixed(1)}s)`];
  const f = report.falseRejection;
  if (f) {
    lines.push(
      '',
      `false rejections f = ${percent(f.rate)} (95% ${percent(f.low)}–${percent(f.high)}): ${f.count} of ${f.of} of the project's own commits rejected; ${(f.msPerCommit / 1000).toFixed(1)}s per replayed commit`,
    );
    for (const g of f.causes) {
      lines.push(`  ${g.cause} (${g.count}): ${g.advice}`);
      for (const c of g.commits.slice(0, 5)) lines.push(`    ${c.commit.slice(0, 12)} ${c.subject}: ${c.reason}: ${c.message.split('\n')[0]?.slice(0, 160)}`);
      if (g.commits.length > 5) lines.push(`    … and ${g.commits.length - 5} more`);
    }
    for (const c of f.flaky) lines.push(`  flaky but accepted: ${c.commit.slice(0, 12)} ${c.subject} (${c.steps.join(', ')} passed on its re-run)`);
  }
  const d = report.recall;
  if (d) {
    lines.push(
      '',
      `recall d = ${percent(d.rate)} (95% ${percent(d.low)}–${percent(d.high)}): ${d.count} of ${d.of} mutants caught, from ${d.sites} sites ${d.executedLinesOnly ? 'on lines the tests execute' : 'on every line of some (TypeScript without a source map, or no coverage from this suite)'} in ${d.files.length} files; ${(d.msPerMutant / 1000).toFixed(1)}s per mutant, each gate given ${d.timeoutSec}s`,
    );
    lines.push(`  by language: ${d.byLanguage.map((l) => `${l.language} ${l.count} of ${l.of}`).join(', ')}`);
    for (const s of d.survivors.slice(0, 20)) lines.push(`  survived: ${s.path}:${s.line} ${s.kind}: ${s.before.trim()}  →  ${s.after.trim() || '(removed)'}`);
    if (d.survivors.length > 20) lines.push(`  … and ${d.survivors.length - 20} more survivors (--json lists them all)`);
  }
  if (report.recallUnmeasured) lines.push('', `recall d not measured: ${report.recallUnmeasured}`);
  if (f || d) lines.push('', 'kept with the world: genesis model chain --world and genesis stats use these for the verifier terms');
  return lines.join('\n');
}
