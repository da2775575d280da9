import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { GenesisError } from '../errors/genesis-error.js';
import type { WorldRepo } from '../world/world-repo.js';
import { createServerApp, type ServerApp } from './create-app.js';
import { resolveServeSecurity, type ServeSecurity } from './http/security.js';
import type { ClusterWorker } from './projections/worker-liveness.js';
import type { WorldControl } from './world-control.js';
import type { QueueDepth } from './projections/world-metrics.js';

/** Settings of {@link startServer}. */
export interface StartServerOptions {
  world: WorldRepo;
  /** Address to listen on; anything but loopback needs `token`. @default '127.0.0.1' */
  host?: string;
  /** Port; 0 picks a free one. @default 4600 */
  port?: number;
  /** Required on changes as a bearer token; usually GENESIS_TOKEN. */
  token?: string | undefined;
  pollMs?: number;
  keepAliveMs?: number;
  /** Workers alive in the distributed queue, shown on the overview. */
  listWorkers?: () => Promise<ClusterWorker[]>;
  /** Jobs in the distributed queues by state, for /metrics. */
  queueDepths?: () => Promise<QueueDepth[]>;
  /** Starts and stops the run and adds tasks for the API. */
  control?: WorldControl;
  /** Runs before the server listens, e.g. to mount the queue board on `serverApp.app`. */
  configure?: (serverApp: ServerApp) => void | Promise<void>;
}

/** A running server. */
export interface RunningServer extends ServerApp {
  /** `http://host:port/`, with the port actually bound. */
  url: string;
  port: number;
  security: ServeSecurity;
  /** Stops listening, ends open event streams and the change feed. */
  close(): Promise<void>;
}

/**
 * Starts `genesis serve`: checks the world opens and its manifest reads before listening, so a
 * broken world fails at once with its own error rather than on the first page load.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const security = resolveServeSecurity(host, options.token);
  const serverApp = createServerApp({
    world: options.world,
    security,
    ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
    ...(options.keepAliveMs === undefined ? {} : { keepAliveMs: options.keepAliveMs }),
    ...(options.listWorkers === undefined ? {} : { listWorkers: options.listWorkers }),
    ...(options.control === undefined ? {} : { control: options.control }),
    ...(options.queueDepths === undefined ? {} : { queueDepths: options.queueDepths }),
  });
  await serverApp.snapshots.current();
  await options.configure?.(serverApp);
  const server = await listen(serverApp, host, options.port ?? 4600);
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    ...serverApp,
    url: `http://${shown}:${port}/`,
    port,
    security,
    close: async () => {
      serverApp.feed.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Event streams never end by themselves; without this, close would wait for every tab.
      server.closeAllConnections();
      await closed;
    },
  };
}

function listen(serverApp: ServerApp, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: serverApp.app.fetch, hostname: host, port }, () => resolve(server)) as Server;
    server.once('error', (error: NodeJS.ErrnoException) => {
      serverApp.feed.stop();
      if (error.code === 'EADDRINUSE') {
        reject(
          new GenesisError('serve-port-in-use', `port ${port} on ${host} is in use`, {
            hint: 'pass --port <another port>, or stop the program using it',
            cause: error,
          }),
        );
      } else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') {
        reject(
          new GenesisError('serve-bad-host', `cannot listen on ${host}: no such address on this machine`, {
            hint: 'pass --host with an address of this machine, or 0.0.0.0 for all',
            cause: error,
          }),
        );
      } else {
        reject(
          new GenesisError('serve-listen-failed', `cannot listen on ${host}:${port}: ${error.message}`, {
            hint: 'pass another --host or --port',
            cause: error,
          }),
        );
      }
    });
  });
}
