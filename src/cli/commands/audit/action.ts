import { auditWorld, findRunHolder, type ReadDistributedHolder } from '../../../audit/index.js';
import { createSandbox } from '../../../sandbox/create-sandbox.js';
import { LocalWorld } from '../../../world/local-world.js';
import { printJson } from '../../output.js';
import { AUDIT_EXIT } from './exit.js';
import type { AuditCliOptions } from './audit.js';
import { renderAudit } from './report.js';

/** Runs the audit and prints it; returns the exit code. The composition root: builds the sandbox and the Redis reader. */
export async function runAudit(path: string, opts: AuditCliOptions): Promise<number> {
  const world = await LocalWorld.open(path);
  const manifest = await world.manifestAt('HEAD');
  const runHolder = await findRunHolder(world, opts.redis ? integratorLockReader(opts.redis, manifest.name, world.path) : undefined);
  const tty = !opts.json && process.stderr.isTTY;
  let verified = 0;
  const report = await auditWorld({
    world,
    sample: opts.sample,
    seed: opts.seed,
    jobs: opts.jobs,
    sandbox: (m) => createSandbox(opts.sandbox ?? m.verify.sandbox, { image: m.verify.image }),
    runHolder,
    // A progress counter on a terminal only: logs and --json stay clean.
    onVerified: tty ? () => process.stderr.write(`\rverified again: ${++verified}`) : undefined,
  });
  if (tty && verified > 0) process.stderr.write('\n');
  if (opts.json) printJson(report);
  else process.stdout.write(`${renderAudit(report)}\n`);
  return report.violations > 0 ? AUDIT_EXIT.violations : AUDIT_EXIT.clean;
}

/** Reads the holder of the world's integrator lock from the Redis at `url`, over one short-lived connection. */
function integratorLockReader(url: string, name: string, path: string): ReadDistributedHolder {
  return async () => {
    // Loaded only when asked for: most audits have no Redis, and ioredis is slow to load.
    const [{ connectRedis }, { IntegratorLock }, { worldKeyOf }] = await Promise.all([
      import('../../../queue/redis/connection.js'),
      import('../../../queue/redis/integrator-lock.js'),
      import('../../../queue/bullmq/distributed-job.js'),
    ]);
    const redis = await connectRedis(url, { name: 'genesis-audit' });
    try {
      return (await IntegratorLock.readHolder(redis, worldKeyOf(name, path)))?.owner ?? null;
    } finally {
      redis.disconnect();
    }
  };
}
