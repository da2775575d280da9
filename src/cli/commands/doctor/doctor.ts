import type { Command } from 'commander';
import { redisOption } from '../../redis-option.js';
import { worldOption } from '../../world-option.js';

interface DoctorCliOptions {
  world?: string;
  redis?: string;
  json?: boolean;
}

export function define(program: Command): void {
  program
    .command('doctor')
    .description(
      "check this machine for what Genesis needs: Node, git, Docker and its sandbox image, bubblewrap, Redis, and (with --world) the world's manifest; says what to do for each problem",
    )
    .addOption(worldOption())
    .addOption(redisOption('Redis to check (default redis://127.0.0.1:6379; needed only when given)'))
    .option('--json', 'print an array of {name, status: ok|warn|fail, detail, hint}')
    .addHelpText('after', '\nExit codes: 0 nothing needed is missing (warnings allowed), 1 something needed is missing.')
    .action(async (opts: DoctorCliOptions) => {
      const { runDoctorChecks } = await import('./checks.js');
      const { formatDoctorReport, doctorExitCode } = await import('./report.js');
      const { DEFAULT_REDIS_URL } = await import('../../../queue/redis/connection.js');
      const checks = await runDoctorChecks({ world: opts.world, redis: opts.redis ?? DEFAULT_REDIS_URL, redisNeeded: opts.redis !== undefined });
      process.stdout.write(opts.json ? `${JSON.stringify(checks, null, 2)}\n` : `${formatDoctorReport(checks)}\n`);
      process.exitCode = doctorExitCode(checks);
    });
}
