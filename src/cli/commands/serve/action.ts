import { startServer, type RunningServer } from '../../../server/start-server.js';
import { LocalWorld } from '../../../world/local-world.js';
import { createWorldControl } from './world-control.js';
import { EXIT } from '../../exit-codes.js';

export interface ServeCommandOptions {
  world: string;
  host: string;
  port: number;
  /** Redis of the distributed queue; its board is mounted under /queues. */
  redis?: string | undefined;
  token?: string | undefined;
}

/** Serves until SIGINT or SIGTERM, then closes the server (and the queue board's connections). */
export async function serveCommand(opts: ServeCommandOptions): Promise<number> {
  const world = await LocalWorld.open(opts.world);
  const board = opts.redis ? await import('./queues.js').then((m) => m.openQueueBoard(opts.redis!, world)) : null;
  let server: RunningServer;
  try {
    server = await startServer({
      world,
      host: opts.host,
      port: opts.port,
      token: opts.token,
      ...(board ? { listWorkers: () => board.listWorkers(), queueDepths: () => board.queueDepths() } : {}),
      control: createWorldControl(world),
      configure: (s) => board?.mount(s.app),
    });
  } catch (error) {
    await board?.close();
    throw error;
  }
  const lines = [
    `genesis serve: ${server.url} (world ${world.path})`,
    `  API: ${server.url}api/overview · described by ${server.url}api/openapi.json`,
    board ? `  queues: ${server.url}queues (BullMQ at ${opts.redis})` : null,
    server.security.token ? '  changes need Authorization: Bearer $GENESIS_TOKEN' : '  bound to loopback: only this machine can reach it',
    '  Ctrl-C to stop',
  ];
  process.stdout.write(`${lines.filter(Boolean).join('\n')}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
  await board?.close();
  return EXIT.ok;
}
