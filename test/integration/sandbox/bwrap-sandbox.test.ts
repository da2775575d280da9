import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { BwrapSandbox } from '../../../src/sandbox/index.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { describeSandboxContract, specFor } from './sandbox-contract.js';

describeSandboxContract('bwrap', () => new BwrapSandbox());

describe('BwrapSandbox', () => {
  const withBwrap = itWith('bwrap');
  const asRoot = process.getuid?.() === 0;

  withBwrap('hides the Docker socket and everything else under /run', async () => {
    // Absent (the minimal root has no /run) or empty: either way nothing of the host's is listed.
    const spec = await specFor('ls -A /run /var/run 2>/dev/null; test -e /var/run/docker.sock || echo hidden');
    const result = await new BwrapSandbox().run(spec);
    expect(
      result.output
        .trim()
        .split('\n')
        .filter((line) => line && !line.endsWith(':')),
    ).toEqual(['hidden']);
  });

  withBwrap('makes allocations over the memory limit fail', async () => {
    const hog = `node -e "const a = []; for (;;) a.push(Buffer.alloc(1 << 24, 1))"`;
    const spec = await specFor(hog, { limits: { cpus: 1, memoryMb: 256, pids: 64 } });
    const result = await new BwrapSandbox().run(spec);
    expect(result.exitCode).not.toBe(0);
    expect(result.timedOut).toBe(false);
  });

  // RLIMIT_NPROC is only set when Genesis runs as root and drops to uid 1000 (see BwrapSandbox).
  withBwrap.runIf(asRoot)('stops a fork bomb at the process limit when run as root', async () => {
    const bomb = 'i=0; while [ $i -lt 300 ]; do sleep 5 & i=$((i+1)); done; echo forked all';
    const spec = await specFor(bomb, { limits: { cpus: 1, memoryMb: 256, pids: 64 } });
    const result = await new BwrapSandbox().run(spec);
    expect(result.output).toMatch(/fork/i);
    expect(result.output).not.toContain('forked all');
  });

  withBwrap.runIf(asRoot)('runs as an unprivileged user of its own in a work dir under a directory only root can enter', async () => {
    // tempDir is root's and private (0700): bwrap binds it as root, then the command drops to uid 1000.
    const workDir = join(await tempDir(), 'work');
    await mkdir(workDir);
    const result = await new BwrapSandbox().run(await specFor('id -u > who && cat who', { workDir }));
    expect(result.exitCode).toBe(0);
    const uid = Number(result.output.trim());
    expect(uid).toBeGreaterThanOrEqual(100000);
    expect((await stat(join(workDir, 'who'))).uid).toBe(uid);
    // The next step in the same tree runs as the user that owns it (nothing to hand over again).
    expect(Number((await new BwrapSandbox().run(await specFor('id -u', { workDir }))).output.trim())).toBe(uid);
  });

  withBwrap.runIf(asRoot)("gives runs at the same time different users, so one gate cannot use up another gate's processes", async () => {
    const runs = await Promise.all([0, 1, 2].map(async () => new BwrapSandbox().run(await specFor('id -u; sleep 1'))));
    expect(new Set(runs.map((r) => r.output.trim())).size).toBe(3);
  });

  withBwrap('rejects with sandbox-workdir-missing when the work dir does not exist', async () => {
    const spec = await specFor('true', { workDir: '/nonexistent/genesis-work' });
    await expect(new BwrapSandbox().run(spec)).rejects.toMatchObject({ code: 'sandbox-workdir-missing' });
  });
});
