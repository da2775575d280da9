import { InvalidArgumentError, Option, type Command } from 'commander';
import { redisOption } from '../../redis-option.js';
import { requireWorld, worldOption } from '../../world-option.js';

interface ServeCliOptions {
  world?: string;
  host: string;
  port: number;
  redis?: string;
}

export function define(program: Command): void {
  program
    .command('serve')
    .description(
      'serve the dashboard and the JSON API of a world: overview, accepted history, episodes, tasks (with retry) and reliability, live; Prometheus metrics at /metrics',
    )
    .addOption(worldOption())
    .addOption(new Option('--host <address>', 'address to listen on; anything but loopback requires GENESIS_TOKEN').default('127.0.0.1'))
    .addOption(new Option('--port <n>', 'port to listen on (0: any free port)').default(4600).argParser(parsePort))
    .addOption(redisOption('Redis of the distributed queue: mounts its BullMQ board under /queues'))
    .addHelpText(
      'after',
      '\nEnvironment: GENESIS_TOKEN, when set (required with --host other than loopback), must be sent as\n' +
        '`Authorization: Bearer <token>` on every request that changes anything.\nExit codes: 0 stopped by Ctrl-C or SIGTERM, 1 error (world unreadable, port in use, no token).',
    )
    .action(async (opts: ServeCliOptions) => {
      const { serveCommand } = await import('./action.js');
      process.exitCode = await serveCommand({
        world: requireWorld(opts),
        host: opts.host,
        port: opts.port,
        redis: opts.redis,
        token: process.env.GENESIS_TOKEN,
      });
    });
}

function parsePort(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError('expected an integer from 0 to 65535');
  }
  return port;
}
