import { randomUUID } from 'node:crypto';
import { execa } from 'execa';
import { describe, expect } from 'vitest';
import { DockerAgentSandbox, dockerRunFailure } from '../../../src/sandbox/agent/docker/docker-agent-sandbox.js';
import { itWith } from '../../helpers/services.js';

const withDocker = itWith('docker');

/** What the real docker CLI prints and exits with for one `docker run`. */
async function dockerRun(args: string[], env: Record<string, string> = {}): Promise<{ exitCode: number; log: string }> {
  const r = await execa('docker', ['run', '--rm', '--pull', 'never', ...args], { reject: false, all: true, env, timeout: 60_000 });
  return { exitCode: r.exitCode ?? -1, log: r.all ?? '' };
}

describe("when docker cannot start an agent's container", () => {
  withDocker('reads a missing image as a configuration mistake that stops the run', async () => {
    const { exitCode, log } = await dockerRun([`genesis/vocab-no-such-image:${randomUUID().slice(0, 8)}`, 'true']);
    expect(exitCode).toBe(125);
    expect(dockerRunFailure(exitCode, log, 'true')).toMatchObject({ code: 'agent-sandbox-invalid', fatal: true, hint: expect.stringContaining('agent.image') });
  });

  withDocker('reads an invalid option as a configuration mistake', async () => {
    const { exitCode, log } = await dockerRun(['--network', `genesis-vocab-no-such-net-${randomUUID().slice(0, 8)}`, 'genesis/node:20', 'true']);
    expect(exitCode).toBe(125);
    expect(dockerRunFailure(exitCode, log, 'true')).toMatchObject({ code: 'agent-sandbox-invalid', fatal: true });
  });

  withDocker('reads a daemon that does not answer as transient', async () => {
    const { exitCode, log } = await dockerRun(['genesis/node:20', 'true'], { DOCKER_HOST: `unix:///tmp/genesis-no-daemon-${randomUUID()}.sock` });
    expect(exitCode).toBe(125);
    expect(dockerRunFailure(exitCode, log, 'true')).toMatchObject({ code: 'agent-sandbox-failed', retryable: true, fatal: false });
  });
});

describe("when the agent's docker sandbox is checked", () => {
  withDocker('names a missing agent image as fatal, with how to get it', async () => {
    const error = await new DockerAgentSandbox({ image: `genesis/vocab-no-such-image:${randomUUID().slice(0, 8)}`, network: 'genesis-agents' })
      .check()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'agent-sandbox-unavailable', fatal: true, hint: expect.stringContaining('agent.image') });
  });

  withDocker('takes a daemon that does not answer for transient, so one check does not stop the run', async () => {
    const saved = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = `unix:///tmp/genesis-no-daemon-${randomUUID()}.sock`;
    try {
      const error = await new DockerAgentSandbox({ image: 'genesis/node:20', network: 'genesis-agents' }).check().catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'docker-unavailable', retryable: true, fatal: false });
    } finally {
      if (saved === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved;
    }
  });
});
