import { describe, expect } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { startServer } from '../../../src/server/start-server.js';
import { readTaskRetries } from '../../../src/world/task-retries.js';
import { itWith } from '../../helpers/services.js';
import { makeWorld } from '../../helpers/world-fixture.js';

const TOKEN = 'a-long-enough-test-token-0123456789';

describe('genesis serve beyond loopback', () => {
  itWith('docker')('refuses to start on a non-loopback host without GENESIS_TOKEN, saying how to set one', async () => {
    const { world } = await makeWorld({ recording: {} });
    const start = startServer({ world, host: '0.0.0.0', port: 0, token: undefined });
    await expect(start).rejects.toBeInstanceOf(GenesisError);
    await expect(start).rejects.toMatchObject({ code: 'serve-token-required', hint: expect.stringContaining('GENESIS_TOKEN') });
    await expect(startServer({ world, host: '0.0.0.0', port: 0, token: 'short' })).rejects.toMatchObject({ code: 'serve-token-weak' });
  });

  itWith('docker')('requires the bearer token on every change and leaves reads open', async () => {
    const { world } = await makeWorld({ recording: {} });
    const server = await startServer({ world, host: '0.0.0.0', port: 0, token: TOKEN });
    const base = `http://127.0.0.1:${server.port}`;
    const retry = (headers: Record<string, string>) =>
      fetch(`${base}/api/tasks/a/retry`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
    try {
      expect(server.security).toMatchObject({ exposed: true, token: TOKEN });
      expect((await fetch(`${base}/api/overview`)).status).toBe(200);
      const anonymous = await retry({});
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toContain('Bearer');
      expect(await anonymous.json()).toMatchObject({ error: { code: 'token-required' } });
      expect((await retry({ authorization: 'Bearer wrong-token-of-some-length' })).status).toBe(401);
      // Past the guard: the task exists but is not blocked.
      const authorised = await retry({ authorization: `Bearer ${TOKEN}` });
      expect(authorised.status).toBe(409);
      expect(await readTaskRetries(world.path)).toEqual([]);
    } finally {
      await server.close();
    }
  });

  itWith('docker')('answers only to loopback names when bound to loopback, so a rebinding page cannot read it', async () => {
    const { world } = await makeWorld({ recording: {} });
    const server = await startServer({ world, port: 0 });
    try {
      expect(server.url).toBe(`http://127.0.0.1:${server.port}/`);
      expect((await fetch(`${server.url}api/health`)).status).toBe(200);
      const { request } = await import('node:http');
      const status = await new Promise<number>((resolve, reject) => {
        request({ host: '127.0.0.1', port: server.port, path: '/api/overview', headers: { host: `evil.example:${server.port}` } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
          .on('error', reject)
          .end();
      });
      expect(status).toBe(421);
    } finally {
      await server.close();
    }
  });

  itWith('docker')('says which port is taken when another server holds it', async () => {
    const { world } = await makeWorld({ recording: {} });
    const first = await startServer({ world, port: 0 });
    try {
      await expect(startServer({ world, port: first.port })).rejects.toMatchObject({
        code: 'serve-port-in-use',
        message: `port ${first.port} on 127.0.0.1 is in use`,
      });
    } finally {
      await first.close();
    }
  });
});
