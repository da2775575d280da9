import { chmod, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { createSandbox, NoneSandbox } from '../../../src/sandbox/index.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

const image = 'genesis/node:20';

describe('createSandbox', () => {
  // First, before a successful probe is cached in this process.
  describe('when neither Docker nor bubblewrap can run', () => {
    const saved = { path: process.env.PATH, dockerHost: process.env.DOCKER_HOST };
    beforeEach(async () => {
      const bin = await tempDir('genesis-bin-');
      const failing = '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n';
      await writeFile(join(bin, 'bwrap'), failing);
      await chmod(join(bin, 'bwrap'), 0o755);
      for (const tool of ['setpriv', 'prlimit', 'sh']) await symlink(`/usr/bin/${tool}`, join(bin, tool));
      process.env.PATH = bin;
      process.env.DOCKER_HOST = 'unix:///nonexistent/docker.sock';
    });
    afterEach(() => {
      process.env.PATH = saved.path;
      if (saved.dockerHost === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved.dockerHost;
    });

    it('rejects auto with no-sandbox and a hint naming the setup script and the none opt-in', async () => {
      const error = await createSandbox('auto', { image }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GenesisError);
      expect(error).toMatchObject({ code: 'no-sandbox' });
      expect((error as GenesisError).message).toContain('Docker daemon does not answer');
      expect((error as GenesisError).message).toContain('bubblewrap cannot run');
      expect((error as GenesisError).hint).toMatch(/setup-services\.sh.*verify\.sandbox: none/);
    });
  });

  itWith('docker')('picks docker for auto when the daemon answers and the image exists', async () => {
    expect((await createSandbox('auto', { image })).kind).toBe('docker');
  });

  itWith('bwrap')('falls back to bubblewrap for auto when the docker image is missing', async () => {
    expect((await createSandbox('auto', { image: 'genesis/no-such-image:0' })).kind).toBe('bwrap');
  });

  itWith('docker')('rejects an explicit docker choice whose image is missing', async () => {
    await expect(createSandbox('docker', { image: 'genesis/no-such-image:0' })).rejects.toMatchObject({
      code: 'sandbox-image-missing',
    });
  });

  it('gives the unisolated sandbox only when asked, with the warning the CLI prints', async () => {
    const sandbox = await createSandbox('none', { image });
    expect(sandbox).toBeInstanceOf(NoneSandbox);
    expect((sandbox as NoneSandbox).warning).toMatch(/without|no resource limits/);
  });
});

describe('NoneSandbox', () => {
  it('runs the command in the work dir with a private HOME and none of the orchestrator environment', async () => {
    process.env.GENESIS_TEST_SECRET = 'secret';
    try {
      const workDir = await tempDir();
      const result = await new NoneSandbox().run({
        command: 'pwd; echo "$HOME"; echo "secret=$GENESIS_TEST_SECRET"; echo "extra=$EXTRA"',
        workDir,
        env: { EXTRA: 'given' },
        timeoutMs: 5_000,
        limits: { cpus: 1, memoryMb: 256, pids: 64 },
      });
      const [cwd, home, secret, extra] = result.output.trim().split('\n');
      expect(cwd).toBe(workDir);
      expect(home).not.toBe(process.env.HOME);
      expect([secret, extra]).toEqual(['secret=', 'extra=given']);
    } finally {
      delete process.env.GENESIS_TEST_SECRET;
    }
  });

  it('kills the process group at the timeout', async () => {
    const result = await new NoneSandbox().run({
      command: 'sleep 100 & sleep 100',
      workDir: await tempDir(),
      timeoutMs: 300,
      limits: { cpus: 1, memoryMb: 256, pids: 64 },
    });
    expect(result).toMatchObject({ exitCode: 137, timedOut: true });
    expect(result.durationMs).toBeLessThan(3_000);
  });
});
