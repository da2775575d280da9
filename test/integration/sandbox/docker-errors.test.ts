import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { environmentId } from '../../../src/deps/environment.js';
import { installWithDocker } from '../../../src/deps/installers/docker.js';
import { installerFor } from '../../../src/deps/prepare-deps.js';
import { recordImage } from '../../../src/gate/image.js';
import { DockerSandbox } from '../../../src/sandbox/index.js';
import { dockerError } from '../../../src/sandbox/gate/docker/errors.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { specFor } from './sandbox-contract.js';

const image = 'genesis/node:20';
const withDocker = itWith('docker');

async function failureOf(work: Promise<unknown>): Promise<GenesisError> {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GenesisError);
  return error as GenesisError;
}

describe('when Docker refuses a sandbox as configured', () => {
  withDocker('reports a missing image at once, as fatal, with how to get it', async () => {
    const started = Date.now();
    const error = await failureOf(new DockerSandbox({ image: 'genesis/vocab-no-such-image:0' }).run(await specFor('true')));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error).toMatchObject({
      code: 'sandbox-image-missing',
      fatal: true,
      retryable: false,
      message: 'The sandbox image genesis/vocab-no-such-image:0 does not exist.',
    });
    // Named like Genesis's own but not one its script builds: running the script would not help.
    expect(error.hint).not.toContain('build-images.sh');
    expect(error.hint).toContain('docker pull genesis/vocab-no-such-image:0');
    expect(error.hint).toContain('verify.image');
    const other = await failureOf(new DockerSandbox({ image }).run(await specFor('true', { image: 'example.org/team/app:1' })));
    expect(other).toMatchObject({ code: 'sandbox-image-missing', fatal: true });
    expect(other.hint).toContain('docker pull example.org/team/app:1');
  });

  withDocker(
    "names for one of Genesis's own images the command that builds it, and that command gives the image",
    async () => {
      const hint = dockerError({ statusCode: 404, message: 'no such image' }, 'image', 'genesis/python:3').hint ?? '';
      const command = /`(bash sandboxes\/build-images\.sh[^`]*)`/.exec(hint)?.[1];
      expect(command).toBe('bash sandboxes/build-images.sh');
      // Up to date here (setup-services.sh built it), so the script only checks its build key: seconds.
      execFileSync('bash', ['-c', command!], { cwd: fileURLToPath(new URL('../../..', import.meta.url)), stdio: 'ignore', timeout: 120_000 });
      expect(await new Docker().getImage('genesis/python:3').inspect()).toMatchObject({ Id: expect.any(String) });
      for (const [name, flag] of [
        ['genesis/agent:latest', '--agents'],
        ['genesis/genesis', '--compose'],
      ])
        expect(dockerError({ statusCode: 404 }, 'image', name!).hint).toContain(`build-images.sh ${flag}`);
    },
    150_000,
  );

  withDocker('reports a container the daemon refuses (400) as an invalid configuration, not retried', async () => {
    // A read-only path missing from the work dir is a bind mount whose source does not exist.
    const error = await failureOf(new DockerSandbox({ image }).run(await specFor('true', { readOnlyPaths: ['no-such-file.txt'] })));
    expect(error).toMatchObject({ code: 'sandbox-config-invalid', fatal: true, retryable: false });
    expect(error.message).toContain('bind source path does not exist');
  });
});

describe('when Docker fails for a while', () => {
  withDocker('reports a daemon that does not answer as transient', async () => {
    const docker = new Docker({ socketPath: `/tmp/genesis-no-daemon-${randomUUID()}.sock` });
    const sandbox = new DockerSandbox({ image, docker });
    const spec = await specFor('true');
    for (const work of [() => sandbox.check(), () => sandbox.run(spec)]) {
      const error = await failureOf(work());
      expect(error).toMatchObject({ code: 'docker-unavailable', retryable: true, fatal: false, charged: false });
      expect(error.hint).toContain('setup-services.sh');
    }
  });

  withDocker('tells a dependency install that the daemon is down, not that its image is missing', async () => {
    const spec = { workDir: await tempDir('genesis-install-'), command: 'true', timeoutMs: 10_000, memoryMb: 256, image };
    const down = new Docker({ socketPath: `/tmp/genesis-no-daemon-${randomUUID()}.sock` });
    expect(await failureOf(installWithDocker(spec, down))).toMatchObject({ code: 'docker-unavailable', retryable: true });
    const missing = await failureOf(installWithDocker({ ...spec, image: 'genesis/vocab-no-such-image:0' }, new Docker()));
    expect(missing).toMatchObject({ code: 'sandbox-image-missing', fatal: true });
    expect(missing.hint).toContain('docker pull genesis/vocab-no-such-image:0');
  });

  withDocker("installs and keys a dependency set on the gate sandbox's own daemon, never on a default client", async () => {
    const spec = { workDir: await tempDir('genesis-install-'), command: 'true', timeoutMs: 10_000, memoryMb: 256, image };
    // A sandbox whose client reaches no daemon: were a default client made, both would succeed on the real one.
    const down = new DockerSandbox({ image, docker: new Docker({ socketPath: `/tmp/genesis-no-daemon-${randomUUID()}.sock` }) });
    for (const sandbox of [down, recordImage(down).sandbox]) {
      expect(await failureOf(environmentId(sandbox, image))).toMatchObject({ code: 'docker-unavailable', retryable: true });
      expect(await failureOf(installerFor(sandbox)(spec))).toMatchObject({ code: 'docker-unavailable', retryable: true });
    }
    expect(await environmentId(new DockerSandbox({ image }), image)).toMatch(/^docker:sha256:[0-9a-f]{64}$/);
    const dropped = { kind: 'docker' as const, check: () => down.check(), run: (s: Parameters<typeof down.run>[0]) => down.run(s) };
    expect(await failureOf(environmentId(dropped, image))).toMatchObject({ code: 'sandbox-client-missing', fatal: true });
  });

  withDocker('reads a conflict (409) and a container that vanished mid-run (404) from the real daemon as transient', async () => {
    const docker = new Docker();
    const name = `genesis-vocab-${randomUUID()}`;
    const first = await docker.createContainer({ Image: image, name, Cmd: ['true'] });
    try {
      const conflict = await docker.createContainer({ Image: image, name, Cmd: ['true'] }).catch((e: unknown) => e);
      expect(conflict).toMatchObject({ statusCode: 409 });
      expect(dockerError(conflict, 'create', image)).toMatchObject({ code: 'sandbox-failed', retryable: true, fatal: false });
    } finally {
      await first.remove({ force: true });
    }
    const vanished = await docker
      .getContainer(name)
      .inspect()
      .catch((e: unknown) => e);
    expect(vanished).toMatchObject({ statusCode: 404 });
    expect(dockerError(vanished, 'run', image)).toMatchObject({ code: 'sandbox-failed', retryable: true });
    expect(dockerError(vanished, 'create', image)).toMatchObject({ code: 'sandbox-image-missing', fatal: true });
  });
});

describe('dockerError', () => {
  it('takes a refused socket (EACCES) and a 401 or 403 for a permission the user must fix', () => {
    const eacces = Object.assign(new Error('connect EACCES /var/run/docker.sock'), { code: 'EACCES' });
    expect(dockerError(eacces, 'run', image)).toMatchObject({ code: 'docker-permission-denied', fatal: true });
    expect(dockerError(eacces, 'run', image).hint).toContain('docker group');
    const forbidden = Object.assign(new Error('(HTTP code 403) unexpected - authorization denied by plugin'), { statusCode: 403 });
    expect(dockerError(forbidden, 'create', image)).toMatchObject({ code: 'docker-permission-denied', fatal: true });
  });

  it('keeps a GenesisError as it is and takes a server error for transient', () => {
    const own = new GenesisError('sandbox-image-host-toolchain', 'skeleton');
    expect(dockerError(own, 'run', image)).toBe(own);
    const server = Object.assign(new Error('(HTTP code 500) server error'), { statusCode: 500, json: { message: 'could not find bridge docker0' } });
    expect(dockerError(server, 'run', image)).toMatchObject({
      code: 'sandbox-failed',
      retryable: true,
      message: 'Docker could not run the sandbox: could not find bridge docker0',
    });
  });
});
