import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono, type Context } from 'hono';
import type { WorldRepo } from '../world/world-repo.js';
import { createApiRoutes } from './api/create-routes.js';
import { steerWorld } from '../operations/steer-world.js';
import { ChangeFeed } from './projections/change-feed.js';
import { hostGuard, jsonBodyGuard, writeGuard } from './http/guards.js';
import { resolveServeSecurity, type ServeSecurity } from './http/security.js';
import { createUiRoutes } from './static-ui.js';
import { formatPrometheusText, PROMETHEUS_CONTENT_TYPE } from '../telemetry/prometheus-text.js';
import { readIntegrationView } from './projections/integration-view.js';
import { buildTaskBoard } from './projections/task-board.js';
import { buildWorldMetrics, type QueueDepth } from './projections/world-metrics.js';
import { probeLocalWorker, type ClusterWorker, type LivenessProbe } from './projections/worker-liveness.js';
import { WorldSnapshots } from './projections/world-snapshot.js';
import type { WorldControl } from './world-control.js';

/** Settings of {@link createServerApp}. */
export interface ServerAppOptions {
  world: WorldRepo;
  /** How the app protects itself. @default loopback, no token */
  security?: ServeSecurity;
  /** How often the live feed looks for changes while a dashboard is open. @default 1000 */
  pollMs?: number;
  /** Keep-alive interval of the event stream. @default 15000 */
  keepAliveMs?: number;
  /** Workers alive in the distributed queue (`genesis serve --redis`). */
  listWorkers?: () => Promise<ClusterWorker[]>;
  /** Whether a worker holding an episode is alive. @default probes pids on this host */
  probe?: LivenessProbe;
  now?: () => Date;
  /** Jobs in the distributed queues by state, for /metrics (`genesis serve --redis`). */
  queueDepths?: () => Promise<QueueDepth[]>;
  /** Starts and stops the run and adds tasks (`genesis serve`); absent, those routes answer 501. */
  control?: WorldControl;
}

/** The server's Hono app and the parts that outlive a request. */
export interface ServerApp {
  app: Hono;
  snapshots: WorldSnapshots;
  feed: ChangeFeed;
}

/**
 * Builds the whole HTTP app of `genesis serve`: host and write guards first, then the JSON API
 * under /api and the dashboard at /. The queue board is mounted separately (`mountQueueBoard`).
 */
export function createServerApp(options: ServerAppOptions): ServerApp {
  const security = options.security ?? resolveServeSecurity('127.0.0.1', undefined);
  const snapshots = new WorldSnapshots(options.world);
  const feed = new ChangeFeed(() => snapshots.stamp(), options.pollMs);
  const probe = options.probe ?? ((worker: string) => probeLocalWorker(worker));
  const app = new Hono();
  app.use('*', hostGuard(security));
  app.use('*', writeGuard(security));
  app.use('/api/*', jsonBodyGuard());
  app.route(
    '/api',
    createApiRoutes({
      world: options.world,
      snapshots,
      feed,
      probe,
      now: options.now ?? (() => new Date()),
      requester,
      listWorkers: options.listWorkers,
      control: options.control,
      // A reopening changes no tree, so it needs no gate and no sandbox.
      reopen: (input) =>
        steerWorld(
          options.world,
          { kind: 'reopen', ...input },
          {
            what: `the reopening of task ${input.task}`,
            sandboxFor: () => Promise.reject(new Error('a reopening runs no gate')),
          },
        ),
      queueBoardPath: () => (app.routes.some((r) => r.path === '/queues' || r.path.startsWith('/queues/')) ? '/queues' : null),
      ...(options.keepAliveMs === undefined ? {} : { keepAliveMs: options.keepAliveMs }),
    }),
  );
  // Prometheus scrapes this: a read, open like every read (see README on exposing reads).
  app.get('/metrics', async () => {
    const snapshot = await snapshots.current();
    // Redis being down costs those series, not the page.
    const cluster = options.listWorkers ? await options.listWorkers().catch(() => null) : null;
    const queues = options.queueDepths ? await options.queueDepths().catch(() => null) : null;
    const families = buildWorldMetrics({
      snapshot,
      board: buildTaskBoard(snapshot, probe),
      integration: await readIntegrationView(options.world),
      probe,
      cluster,
      queues,
    });
    return new Response(formatPrometheusText(families), { headers: { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' } });
  });
  app.route('/', createUiRoutes());
  return { app, snapshots, feed };
}

// In-process requests (tests through app.request) have no socket to name.
function requester(c: Context): string {
  try {
    const address = getConnInfo(c).remote.address;
    return address ? `dashboard ${address}` : 'dashboard';
  } catch {
    return 'dashboard';
  }
}
