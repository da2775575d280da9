import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { connectRedis } from '../../../src/queue/redis/connection.js';
import { itWith } from '../../helpers/services.js';

/**
 * A Redis that requires a password (as deploy/kubernetes runs it): the password comes from
 * GENESIS_REDIS_PASSWORD, so the URL that commands print and a ConfigMap holds carries none.
 */
let redis: ChildProcess | undefined;
let url = '';
const PASSWORD = 'not-in-the-url';

beforeAll(async () => {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  await new Promise((done) => server.close(done));
  redis = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--requirepass', PASSWORD], {
    stdio: 'ignore',
  });
  url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'ignore' });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
});

afterAll(() => {
  redis?.kill();
  delete process.env.GENESIS_REDIS_PASSWORD;
});

describe('connectRedis with a password of its own', () => {
  itWith('redis')('uses GENESIS_REDIS_PASSWORD, is refused without it, and a password in the URL still wins', async () => {
    delete process.env.GENESIS_REDIS_PASSWORD;
    await expect(connectRedis(url, { timeoutMs: 2000 })).rejects.toMatchObject({ code: 'redis-unreachable' });

    process.env.GENESIS_REDIS_PASSWORD = PASSWORD;
    const client = await connectRedis(url, { timeoutMs: 2000 });
    expect(await client.set('k', 'v')).toBe('OK');
    // BullMQ's blocking connections are duplicates: they carry the password too.
    const blocking = client.duplicate();
    expect(await blocking.get('k')).toBe('v');
    blocking.disconnect();
    client.disconnect();

    process.env.GENESIS_REDIS_PASSWORD = 'wrong';
    const inUrl = await connectRedis(url.replace('redis://', `redis://:${PASSWORD}@`), { timeoutMs: 2000 });
    expect(await inUrl.get('k')).toBe('v');
    inUrl.disconnect();
    await expect(connectRedis(url, { timeoutMs: 2000 })).rejects.toMatchObject({ code: 'redis-unreachable' });
  });
});
