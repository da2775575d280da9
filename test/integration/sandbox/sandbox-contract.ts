import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect } from 'vitest';
import { stoppableSandbox } from '../../../src/sandbox/stoppable-sandbox.js';
import type { Sandbox, SandboxRunSpec } from '../../../src/sandbox/index.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

export const limits = { cpus: 1, memoryMb: 256, pids: 128 };

/** A run spec in a fresh work dir, with room for Node to start. */
export async function specFor(command: string, extra: Partial<SandboxRunSpec> = {}): Promise<SandboxRunSpec> {
  return { command, workDir: await tempDir('genesis-sandbox-'), timeoutMs: 15_000, limits, ...extra };
}

/** Whether any host process (containers' included) still has `marker` on its command line. */
export function processesWith(marker: string): string {
  try {
    return execFileSync('pgrep', ['-af', marker], { encoding: 'utf8' }).trim();
  } catch {
    return ''; // pgrep exits 1 when nothing matches
  }
}

const PROBE = `
const net = require('node:net');
const dns = require('node:dns');
const connect = (host, port) => new Promise((done) => {
  const socket = net.connect({ host, port, timeout: 3000 });
  socket.on('connect', () => { socket.destroy(); done('connected'); });
  socket.on('timeout', () => { socket.destroy(); done('timeout'); });
  socket.on('error', (error) => done(error.code));
});
(async () => {
  const loopback = await connect('127.0.0.1', Number(process.argv[2]));
  const outside = await connect('1.1.1.1', 443);
  const name = await new Promise((done) => dns.lookup('example.com', (error) => done(error ? error.code : 'resolved')));
  console.log(JSON.stringify({ loopback, outside, name }));
})();
`;

/** The behaviour every isolating adapter promises (sandbox.ts), run against the real thing. */
export function describeSandboxContract(service: 'docker' | 'bwrap', make: () => Sandbox, variant = ''): void {
  const it = itWith(service);

  describe(`the ${service}${variant ? ` (${variant})` : ''} sandbox contract`, () => {
    let server: Server | undefined;
    afterEach(() => {
      server?.close();
      server = undefined;
    });

    it('keeps what the command writes in the work dir after the run', async () => {
      const spec = await specFor('mkdir -p out && echo built > out/result.txt');
      const result = await make().run(spec);
      expect(result.exitCode).toBe(0);
      expect(await readFile(join(spec.workDir, 'out/result.txt'), 'utf8')).toBe('built\n');
    });

    it('passes the exit code of the command through', async () => {
      const result = await make().run(await specFor('echo failing; exit 7'));
      expect(result).toMatchObject({ exitCode: 7, timedOut: false, output: 'failing\n' });
    });

    it('cannot reach a server on the host loopback, the outside or DNS', async () => {
      let connections = 0;
      server = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as AddressInfo).port;
      const spec = await specFor(`node probe.cjs ${port}`);
      await writeFile(join(spec.workDir, 'probe.cjs'), PROBE);
      const result = await make().run(spec);
      expect(result.exitCode, result.output).toBe(0);
      const seen = JSON.parse(result.output) as Record<string, string>;
      expect(seen.loopback).not.toBe('connected');
      expect(seen.outside).not.toBe('connected');
      expect(seen.name).not.toBe('resolved');
      expect(connections).toBe(0);
    });

    it('cannot write outside the work dir and a private /tmp', async () => {
      const tryWrite = 'for p in / /usr /etc /var; do touch $p/genesis-x 2>/dev/null && echo wrote $p; done';
      const result = await make().run(await specFor(`${tryWrite}; echo ok > /tmp/t && cat /tmp/t`));
      expect(result.output).toBe('ok\n');
    });

    it("shows the command a root of its own: not the host's users, state dirs or the work dir's host path", async () => {
      // A file only the host's /var/tmp holds: a sandbox that shows the host's root shows it too.
      const marker = `genesis-host-marker-${randomUUID()}`;
      await writeFile(join('/var/tmp', marker), 'host');
      try {
        const spec = await specFor(`pwd; test -e /var/tmp/${marker} && echo SEES-HOST-VAR; ls -A /root /home 2>/dev/null; cat /etc/passwd; env`);
        const result = await make().run(spec);
        const [pwd, ...rest] = result.output.split('\n');
        expect(pwd).toBe('/work');
        expect(result.output).not.toContain('SEES-HOST-VAR');
        expect(result.output).not.toContain(spec.workDir);
        expect(rest.join('\n')).not.toContain(await readFile('/etc/passwd', 'utf8'));
      } finally {
        await rm(join('/var/tmp', marker), { force: true });
      }
    });

    it('runs the command as a user other than root, with HOME in the private /tmp', async () => {
      const result = await make().run(await specFor('id -u; echo $HOME'));
      const [uid, home] = result.output.trim().split('\n');
      expect(Number(uid)).not.toBe(0);
      expect(home).toBe('/tmp');
    });

    it('kills the whole process tree at the timeout, detached children included', async () => {
      const marker = `genesis-forever-${randomUUID()}`;
      const forever = `node -e "setInterval(() => {}, 1000)" ${marker}`;
      const spec = await specFor(`${forever} & setsid ${forever} & sleep 1000`, { timeoutMs: 1_500 });
      const result = await make().run(spec);
      expect(result).toMatchObject({ exitCode: 137, timedOut: true });
      expect(result.durationMs).toBeLessThan(5_000);
      for (let i = 0; i < 20 && processesWith(marker); i++) await new Promise((r) => setTimeout(r, 100));
      expect(processesWith(marker)).toBe('');
    });

    it('kills the whole process tree when its signal is aborted, and a stoppable sandbox then starts nothing more', async () => {
      const marker = `genesis-stopped-${randomUUID()}`;
      const forever = `node -e "setInterval(() => {}, 1000)" ${marker}`;
      const stop = new AbortController();
      const sandbox = stoppableSandbox(make(), stop.signal);
      setTimeout(() => stop.abort(), 1_000);
      const result = await sandbox.run(await specFor(`${forever} & setsid ${forever} & sleep 1000`, { timeoutMs: 60_000 }));
      expect(result).toMatchObject({ exitCode: 137, timedOut: false, stopped: true });
      expect(result.durationMs).toBeLessThan(10_000);
      for (let i = 0; i < 20 && processesWith(marker); i++) await new Promise((r) => setTimeout(r, 100));
      expect(processesWith(marker)).toBe('');
      const after = await sandbox.run(await specFor('echo ran > ran.txt'));
      expect(after).toMatchObject({ exitCode: 137, stopped: true, durationMs: 0 });
      // Stopped before the sandbox said it started: still the command's stop, never the sandbox's failure.
      const early = await make().run({ ...(await specFor('sleep 30')), signal: AbortSignal.abort() });
      expect(early).toMatchObject({ exitCode: 137, stopped: true });
    });

    it('keeps only the tail of output over the cap while counting every byte', async () => {
      const bytes = 8 * 1024 * 1024;
      const print = `node -e "process.stdout.write('x'.repeat(${bytes}) + 'TAIL-END')"`;
      const result = await make().run(await specFor(print, { maxOutputBytes: 1024 }));
      expect(result.exitCode).toBe(0);
      expect(result).toMatchObject({ truncated: true, outputBytes: bytes + 8 });
      expect(result.output).toHaveLength(1024);
      expect(result.output.endsWith('xxTAIL-END')).toBe(true);
    });
  });
}
