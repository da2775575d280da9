import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect } from 'vitest';
import { listWorkers, startHeartbeat, type WorkerAnnouncement } from '../../../src/queue/redis/worker-registry.js';
import { itWith } from '../../helpers/services.js';
import { testRedis, testWorkerPrefix } from './redis-test-world.js';

const it = itWith('redis');

function announcement(id: string): WorkerAnnouncement {
  return { id, host: 'build-7', pid: 4242, concurrency: 4, queue: 'genesis-episodes' };
}

/** The listed workers whose ids start with `prefix`: other tests' workers may share this Redis. */
async function listed(prefix: string): Promise<Awaited<ReturnType<typeof listWorkers>>> {
  return (await listWorkers(await testRedis())).filter((worker) => worker.id.startsWith(prefix));
}

describe('worker registry', () => {
  it('lists an announced worker with what it said about itself', async () => {
    const prefix = testWorkerPrefix();
    const redis = await testRedis();
    const heartbeat = await startHeartbeat(redis, announcement(`${prefix}-a`));

    const [worker, ...others] = await listed(prefix);
    expect(others).toEqual([]);
    expect(worker).toEqual({ ...announcement(`${prefix}-a`), episodes: [], startedAt: expect.any(Number), lastSeen: expect.any(Number) });
    expect(worker!.lastSeen).toBeGreaterThanOrEqual(worker!.startedAt);
    await heartbeat.stop();
  });

  it('lists several workers by id', async () => {
    const prefix = testWorkerPrefix();
    const redis = await testRedis();
    const beats = [];
    for (const name of ['c', 'a', 'b']) beats.push(await startHeartbeat(redis, announcement(`${prefix}-${name}`)));
    expect((await listed(prefix)).map((w) => w.id)).toEqual([`${prefix}-a`, `${prefix}-b`, `${prefix}-c`]);
    for (const beat of beats) await beat.stop();
  });

  it('reports the episodes a worker is running as they change', async () => {
    const prefix = testWorkerPrefix();
    const heartbeat = await startHeartbeat(await testRedis(), announcement(`${prefix}-a`));
    heartbeat.setEpisodes(['ep-1', 'ep-2']);
    await sleep(50);
    expect((await listed(prefix))[0]?.episodes).toEqual(['ep-1', 'ep-2']);
    heartbeat.setEpisodes(['ep-2']);
    await sleep(50);
    expect((await listed(prefix))[0]?.episodes).toEqual(['ep-2']);
    await heartbeat.stop();
  });

  it('keeps a worker listed past its expiry while it beats, with lastSeen moving on', async () => {
    const prefix = testWorkerPrefix();
    const heartbeat = await startHeartbeat(await testRedis(), announcement(`${prefix}-a`), { intervalMs: 100 });
    const first = (await listed(prefix))[0];
    await sleep(700);
    const later = (await listed(prefix))[0];
    expect(later?.lastSeen).toBeGreaterThan(first?.lastSeen ?? Infinity);
    expect(later?.startedAt).toBe(first?.startedAt);
    await heartbeat.stop();
  });

  it('drops a worker that stopped', async () => {
    const prefix = testWorkerPrefix();
    const heartbeat = await startHeartbeat(await testRedis(), announcement(`${prefix}-a`));
    await heartbeat.stop();
    expect(await listed(prefix)).toEqual([]);
    // Nothing written after stop brings it back.
    heartbeat.setEpisodes(['ep-1']);
    await sleep(50);
    expect(await listed(prefix)).toEqual([]);
  });

  it('drops a worker that died, three heartbeats after its last one', async () => {
    const prefix = testWorkerPrefix();
    const redis = await testRedis();
    const heartbeat = await startHeartbeat(redis, announcement(`${prefix}-a`), { intervalMs: 100 });
    expect(await listed(prefix)).toHaveLength(1);
    // Its connection gone, no heartbeat reaches Redis any more: as if the process were killed.
    redis.disconnect();
    await sleep(150);
    expect(await listed(prefix)).toHaveLength(1);
    await sleep(300);
    expect(await listed(prefix)).toEqual([]);
    // Stopping a worker that cannot reach Redis gives up within an interval instead of hanging.
    const stoppingAt = performance.now();
    await heartbeat.stop();
    expect(performance.now() - stoppingAt).toBeLessThan(300);
  });

  it('skips entries it cannot read instead of failing the whole list', async () => {
    const prefix = testWorkerPrefix();
    const redis = await testRedis();
    await redis.set(`genesis:workers:${prefix}-broken`, 'not json', 'PX', 5_000);
    await redis.set(`genesis:workers:${prefix}-old`, JSON.stringify({ id: `${prefix}-old` }), 'PX', 5_000);
    const heartbeat = await startHeartbeat(redis, announcement(`${prefix}-a`));
    expect((await listed(prefix)).map((w) => w.id)).toEqual([`${prefix}-a`]);
    await heartbeat.stop();
  });
});
