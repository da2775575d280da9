import { networkInterfaces } from 'node:os';
import { describe, expect } from 'vitest';
import { installWithBwrap } from '../../../src/deps/installers/bwrap.js';
import { itWith } from '../../helpers/services.js';
import { startOutsideServer } from '../../helpers/outside-server.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** Connects to each address on a port; prints `address=connected|<error code>|timeout`. */
const PROBE = (addresses: string[], port: number) =>
  `node -e "for (const a of '${addresses.join(',')}'.split(',')) { const s = require('net').connect(${port}, a); s.setTimeout(3000, () => { console.log(a + '=timeout'); s.destroy(); }); s.on('connect', () => { console.log(a + '=connected'); s.destroy(); }); s.on('error', (e) => console.log(a + '=' + e.code)); }"`;

function hostAddresses(): string[] {
  return [
    '127.0.0.1',
    ...Object.values(networkInterfaces()).flatMap((list) => (list ?? []).filter((a) => a.family === 'IPv4' && !a.internal).map((a) => a.address)),
  ];
}

describe('a dependency install under bubblewrap', () => {
  itWith('bwrap')("reaches the outside, and none of this host's services (Redis on any of its addresses)", async () => {
    const outside = await startOutsideServer('registry-answers');
    try {
      const workDir = await tempDir('genesis-install-net-');
      const addresses = hostAddresses();
      const command = `${PROBE(addresses, 6379)}; node -e "fetch('${outside.url}').then((r) => r.text()).then((t) => console.log('outside=' + t), (e) => console.log('outside=' + e.cause?.code))"`;
      const result = await installWithBwrap({ workDir, command, timeoutMs: 60_000, memoryMb: 512, image: 'genesis/node:20' });
      expect(result.exitCode, result.output).toBe(0);
      expect(result.output).toContain('outside=registry-answers');
      for (const address of addresses)
        expect(result.output, `redis through ${address}`).toMatch(
          new RegExp(`${address.replaceAll('.', '\\.')}=(ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|timeout)`),
        );
    } finally {
      await outside.close();
    }
  });
});
