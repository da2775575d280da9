import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, makeWorld } from '../../helpers/world-fixture.js';

let server: Server | null = null;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A listener on the host's loopback that counts the connections it gets. */
async function hostListener(): Promise<{ port: number; connections: () => number }> {
  let count = 0;
  server = createServer((socket) => {
    count++;
    socket.end('hello from the host\n');
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, connections: () => count };
}

/** A check that passes only if it reaches the host's listener. */
const probe = (port: number) => `
import test from 'node:test';
import { connect } from 'node:net';
test('reaches the host', () => new Promise((resolve, reject) => {
  const s = connect(${port}, '127.0.0.1', () => { s.end(); resolve(); });
  s.on('error', reject);
}));
`;

describe('a gate command that tries to reach the network', () => {
  for (const kind of ['docker', 'bwrap'] as const) {
    itWith(kind)(`fails inside the ${kind} sandbox, and the host never sees the connection`, async () => {
      const host = await hostListener();
      const manifest = baseManifest({
        tasks: [{ id: 'net', title: 'reach out', paths: ['src/net.js'], check: 'node --test test/net.test.js' }],
        retry: { maxAttempts: 1 },
      });
      const f = await makeWorld({
        sandbox: kind,
        manifest,
        files: { 'test/net.test.js': probe(host.port) },
        recording: { net: [{ write: { 'src/net.js': 'export {};\n' } }] },
      });
      const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
      expect(summary.stop.kind).toBe('blocked');
      const [episode] = await new GitLedger(f.world.path).readAll();
      expect(episode).toMatchObject({ outcome: 'rejected', reason: 'check-failed' });
      const log = (await new GitLedger(f.world.path).readArtifacts(episode!.id)).gateLog ?? '';
      expect(log).toMatch(/ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|EACCES/);
      expect(host.connections()).toBe(0);
    });
  }
});
