import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createServerApp } from '../../../src/server/create-app.js';
import { readQueueDepths } from '../../../src/server/queue-board.js';
import { startServer, type RunningServer } from '../../../src/server/start-server.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { itWith } from '../../helpers/services.js';
import { buildDashboardWorld, removeWorld } from './dashboard-world.js';
import { ensurePrometheus, startPrometheus, type RunningPrometheus } from './prometheus-server.js';

const describeWithDocker = itWith('docker') === it ? describe : describe.skip;

describeWithDocker('the Prometheus metrics of genesis serve', () => {
  let worldPath = '';
  let server: RunningServer | undefined;

  beforeAll(async () => {
    worldPath = (await buildDashboardWorld()).path;
    server = await startServer({ world: await LocalWorld.open(worldPath), host: '127.0.0.1', port: 0 });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    if (worldPath) await removeWorld(worldPath);
  });

  it('writes the text format: episodes by outcome and reason, spend, histograms, queue depths, workers', async () => {
    const response = await fetch(`${server!.url}metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await response.text();
    // The run behind this world: 7 episodes, 2 accepted, 4 rejected (2 check-failed, 2 outside-paths), 1 failed.
    expect(text).toContain('# TYPE genesis_episodes_total counter');
    expect(text).toContain('genesis_episodes_total{world="fixture",outcome="rejected",reason="check-failed"} 2');
    expect(text).toContain('genesis_episodes_total{world="fixture",outcome="rejected",reason="outside-paths"} 2');
    expect(text).toContain('genesis_accepted_changes_total{world="fixture"} 2');
    expect(text).toContain('genesis_gate_duration_seconds_bucket{world="fixture",gate="own",le="+Inf"}');
    expect(text).toContain('genesis_agent_duration_seconds_count{world="fixture"} 7');
    expect(text).toContain('genesis_tasks{world="fixture",state="blocked"} 2');
    expect(text).toContain('genesis_integration_queue_depth{world="fixture",stage="waiting"} 0');
    expect(text).toContain('genesis_workers_alive{world="fixture",source="local"} 0');
    expect(text).toContain('genesis_cost_usd_total{world="fixture",source="wire"} 0');
    expect(text).toContain('genesis_episodes_without_cost_total{world="fixture"} 7');
  });

  itWith('redis')('counts the jobs of the distributed queues by state when Redis is given', async () => {
    const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
    const queue = new Queue(`test-${randomUUID()}`, { connection: redis });
    try {
      await queue.add('episode', { task: 'a' });
      await queue.add('episode', { task: 'b' }, { delay: 60_000 });
      const app = createServerApp({ world: await LocalWorld.open(worldPath), queueDepths: () => readQueueDepths([queue]) }).app;
      const text = await (await app.request('/metrics')).text();
      expect(text).toContain(`genesis_queue_jobs{world="fixture",queue="${queue.name}",state="waiting"} 1`);
      expect(text).toContain(`genesis_queue_jobs{world="fixture",queue="${queue.name}",state="delayed"} 1`);
      // Without Redis the series are absent, not zero.
      expect(await (await createServerApp({ world: await LocalWorld.open(worldPath) }).app.request('/metrics')).text()).not.toContain('genesis_queue_jobs');
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
      redis.disconnect();
    }
  });

  it('is scraped by a real Prometheus server, which answers queries over its HTTP API with the same values', async (ctx) => {
    const { binary, why } = await ensurePrometheus();
    if (!binary) {
      // Debian's package could not be installed here (no rights, no network): say so instead of passing.
      console.warn(`skipping the Prometheus scrape: ${why}`);
      ctx.skip();
      return;
    }
    const prometheus: RunningPrometheus = await startPrometheus(binary, `127.0.0.1:${server!.port}`);
    try {
      const deadline = Date.now() + 30_000;
      let up: Awaited<ReturnType<RunningPrometheus['query']>> = [];
      while (Date.now() < deadline) {
        up = await prometheus.query('up{job="genesis"}');
        if (up[0]?.value[1] === '1') break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      // 1: Prometheus reached /metrics and parsed every line of it.
      expect(up.map((s) => s.value[1])).toEqual(['1']);
      const rejected = await prometheus.query('sum by (outcome) (genesis_episodes_total{outcome="rejected"})');
      expect(rejected.map((s) => [s.metric.outcome, s.value[1]])).toEqual([['rejected', '4']]);
      const all = await prometheus.query('sum(genesis_episodes_total)');
      expect(all[0]!.value[1]).toBe('7');
      // The histogram is one Prometheus understands: a quantile over its buckets is a number of seconds.
      const p50 = await prometheus.query('histogram_quantile(0.5, sum by (le) (genesis_gate_duration_seconds_bucket{gate="own"}))');
      expect(Number(p50[0]!.value[1])).toBeGreaterThan(0);
    } finally {
      await prometheus.stop();
    }
  }, 120_000);
});
