import { auditWorld, findRunHolder } from '../../audit/index.js';
import { WorldRepo } from '../../world/world-repo.js';
import { printJson } from '../output.js';
import { AUDIT_EXIT } from './audit-exit.js';
import type { AuditCliOptions } from './audit.js';
import { renderAudit } from './audit-report.js';

/** Runs the audit and prints it; returns the exit code. */
export async function runAudit(path: string, opts: AuditCliOptions): Promise<number> {
  const world = await WorldRepo.open(path);
  const manifest = await world.manifestAt('HEAD');
  const runHolder = await findRunHolder(world, manifest.name, opts.redis);
  const tty = !opts.json && process.stderr.isTTY;
  let verified = 0;
  const report = await auditWorld({
    world,
    sample: opts.sample,
    seed: opts.seed,
    jobs: opts.jobs,
    sandbox: opts.sandbox,
    runHolder,
    // A progress counter on a terminal only: logs and --json stay clean.
    onVerified: tty ? () => process.stderr.write(`\rverified again: ${++verified}`) : undefined,
  });
  if (tty && verified > 0) process.stderr.write('\n');
  if (opts.json) printJson(report);
  else process.stdout.write(`${renderAudit(report)}\n`);
  return report.violations > 0 ? AUDIT_EXIT.violations : AUDIT_EXIT.clean;
}
