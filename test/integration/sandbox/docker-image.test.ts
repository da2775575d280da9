import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { DockerSandbox } from '../../../src/sandbox/index.js';
import { itWith } from '../../helpers/services.js';
import { specFor } from './sandbox-contract.js';

const image = 'genesis/node:20';
const withDocker = itWith('docker');
const skeleton = `genesis/fleet-skeleton-${process.pid}:0`;
const docker = (...args: string[]) => execFileSync('docker', args, { encoding: 'utf8' }).trim();

afterAll(() => {
  execFileSync('docker', ['rmi', '--force', skeleton], { stdio: 'ignore' });
});

describe('the gate image', () => {
  withDocker('carries its own Node 20, npm and git, and sees nothing of the host /usr', async () => {
    // redis-server is on this host (setup-services installs it) and in no gate image.
    const probe = 'node --version; npm --version >/dev/null && echo npm-ok; git --version; test -e /usr/bin/redis-server && echo host-usr || echo own-usr';
    const result = await new DockerSandbox({ image }).run(await specFor(probe));
    expect(result.exitCode).toBe(0);
    expect(result.output).toMatch(/^v20\./m);
    expect(result.output).toContain('npm-ok');
    expect(result.output).toMatch(/^git version /m);
    expect(result.output).toContain('own-usr');
  });

  withDocker('of Python worlds carries its own python3, pytest and git, no Node, and nothing of the host /usr', async () => {
    const probe =
      'python3 --version; python3 -m pytest --version; git --version; command -v node || echo no-node; test -e /usr/bin/redis-server && echo host-usr || echo own-usr';
    const result = await new DockerSandbox({ image: 'genesis/python:3' }).run(await specFor(probe, { image: 'genesis/python:3' }));
    expect(result.exitCode, result.output).toBe(0);
    expect(result.output).toMatch(/^Python 3\.\d+/m);
    expect(result.output).toMatch(/pytest \d+/);
    expect(result.output).toMatch(/^git version /m);
    expect(result.output).toContain('no-node');
    expect(result.output).toContain('own-usr');
    expect(docker('image', 'inspect', '--format', '{{index .Config.Labels "genesis.toolchain"}}', 'genesis/python:3')).toMatch(
      /^python 3\.\d+\.\d+, pytest \d/,
    );
  });

  withDocker('loads no CA bundle in a gate, which has no network: every node process would parse it at its start', async () => {
    const probe = 'echo "ca=${NODE_EXTRA_CA_CERTS:-none}"';
    const result = await new DockerSandbox({ image }).run(await specFor(probe));
    expect(result.output).toContain('ca=none\n');
    // The image names its bundle for what runs in it with network (an agent: agent-sandbox.test.ts).
    expect(docker('image', 'inspect', '--format', '{{index .Config.Labels "genesis.ca-bundle"}}', image)).toBe('/etc/ssl/certs/ca-certificates.crt');
  });

  withDocker('reports the image of every run by name and content id', async () => {
    const result = await new DockerSandbox({ image }).run(await specFor('true'));
    expect(result.image).toEqual({ name: image, id: docker('image', 'inspect', '--format', '{{.Id}}', image) });
  });

  withDocker('refuses a skeleton image that would run the host toolchain, and says how to rebuild', async () => {
    execFileSync('docker', ['import', '--change', 'LABEL genesis.bind-host-usr=1', '-', skeleton], { input: emptyTar() });
    const sandbox = new DockerSandbox({ image: skeleton });
    const error = await sandbox.check().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GenesisError);
    expect(error).toMatchObject({ code: 'sandbox-image-host-toolchain' });
    expect((error as GenesisError).hint).toContain('sandboxes/build-images.sh --force');
    await expect(new DockerSandbox({ image }).run(await specFor('true', { image: skeleton }))).rejects.toMatchObject({ code: 'sandbox-image-host-toolchain' });
  });

  withDocker('names how to get an image a world brings that is not here, pulled or built', async () => {
    const error = await new DockerSandbox({ image: 'python:3.12-slim-fleet-absent' }).check().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'sandbox-image-missing', message: 'The sandbox image python:3.12-slim-fleet-absent does not exist.' });
    expect((error as GenesisError).hint).toContain('docker pull python:3.12-slim-fleet-absent');
    expect((error as GenesisError).hint).toContain('verify.image');
  });
});

/** A tar archive holding one empty directory: the smallest root filesystem docker import takes. */
function emptyTar(): Buffer {
  return execFileSync('tar', ['-c', '-C', '/', '--no-recursion', 'tmp']);
}
