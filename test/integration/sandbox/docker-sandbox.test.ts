import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { DockerSandbox } from '../../../src/sandbox/index.js';
import { itWith } from '../../helpers/services.js';
import { describeSandboxContract, specFor } from './sandbox-contract.js';

const image = 'genesis/node:20';

describeSandboxContract('docker', () => new DockerSandbox({ image }));

describe('DockerSandbox', () => {
  const withDocker = itWith('docker');

  withDocker('kills a command over its memory limit and reports it as out of memory', async () => {
    const hog = `node -e "const a = []; for (;;) a.push(Buffer.alloc(1 << 24, 1))"`;
    const result = await new DockerSandbox({ image }).run(await specFor(hog, { limits: { cpus: 1, memoryMb: 128, pids: 64 } }));
    expect(result).toMatchObject({ exitCode: 137, oomKilled: true, timedOut: false });
  });

  withDocker('stops a fork bomb at the pids limit', async () => {
    // Bounded, so a broken limit costs 200 sleeping processes rather than the machine.
    const bomb = 'i=0; while [ $i -lt 200 ]; do sleep 5 & i=$((i+1)); done; echo forked all';
    const result = await new DockerSandbox({ image }).run(await specFor(bomb, { limits: { cpus: 1, memoryMb: 128, pids: 32 }, timeoutMs: 10_000 }));
    expect(result.output).toMatch(/fork/i);
    expect(result.output).not.toContain('forked all');
    expect(result.timedOut).toBe(false);
  });

  withDocker('removes its container after every run, also after a failure or a timeout', async () => {
    const docker = new Docker();
    const created: string[] = [];
    const createContainer = docker.createContainer.bind(docker);
    docker.createContainer = async (options) => {
      const container = await createContainer(options);
      created.push(container.id);
      return container;
    };
    const sandbox = new DockerSandbox({ image, docker });
    await sandbox.run(await specFor('exit 3'));
    await sandbox.run(await specFor('sleep 100', { timeoutMs: 300 }));
    expect(created).toHaveLength(2);
    for (const id of created) {
      await expect(docker.getContainer(id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    }
  });

  withDocker('rejects with sandbox-image-missing and says how to pull or build it when the image is absent', async () => {
    const sandbox = new DockerSandbox({ image: 'genesis/no-such-image:0' });
    const error = await sandbox.check().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GenesisError);
    expect(error).toMatchObject({ code: 'sandbox-image-missing' });
    expect((error as GenesisError).hint).toContain('docker build -t genesis/no-such-image:0');
    await expect(sandbox.run(await specFor('true'))).rejects.toMatchObject({ code: 'sandbox-image-missing' });
  });

  it('rejects with docker-unavailable and names the setup script when the daemon does not answer', async () => {
    const sandbox = new DockerSandbox({ image, docker: new Docker({ socketPath: '/nonexistent/docker.sock' }) });
    const error = await sandbox.check().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GenesisError);
    expect(error).toMatchObject({ code: 'docker-unavailable', retryable: true });
    expect((error as GenesisError).hint).toContain('scripts/setup-services.sh');
  });
});
