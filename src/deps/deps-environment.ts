import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { GenesisError } from '../errors.js';
import type { SandboxKind } from '../sandbox/sandbox.js';

const execFileAsync = promisify(execFile);

/** Directories a sandbox hides (bwrap mounts tmpfs over them), so their programs are not the sandbox's. */
const HIDDEN = ['/root', '/home', '/tmp', '/run'];

/** The host's PATH as a sandbox sees it: the entries under hidden directories left out. */
export function sandboxPath(path = process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'): string {
  const kept = path.split(':').filter((dir) => dir.startsWith('/') && !HIDDEN.some((h) => dir === h || dir.startsWith(`${h}/`)));
  return kept.length > 0 ? [...new Set(kept)].join(':') : '/usr/local/bin:/usr/bin:/bin';
}

let hostToolchain: Promise<string> | undefined;

/**
 * The host's toolchain as the sandbox's PATH finds it: node, npm, python3, pip, cargo versions
 * (absent ones are named absent), the platform and architecture. An upgrade of any of them makes
 * a new key, so a set built by one toolchain never runs under another.
 */
export function hostToolchainId(): Promise<string> {
  hostToolchain ??= (async () => {
    const env = { PATH: sandboxPath(), LANG: 'C.UTF-8', HOME: '/tmp' };
    const probe = async (file: string, args: string[]) => {
      try {
        const { stdout, stderr } = await execFileAsync(file, args, { env, timeout: 15_000 });
        return `${file}=${(stdout || stderr).trim().split('\n')[0]}`;
      } catch {
        return `${file}=absent`;
      }
    };
    const tools = await Promise.all([
      probe('node', ['--version']),
      probe('npm', ['--version']),
      probe('python3', ['--version']),
      probe('pip3', ['--version']),
      probe('cargo', ['--version']),
    ]);
    return [`${process.platform}-${process.arch}`, ...tools.map((t) => t.replace(/ from \S+/, ''))].join(';');
  })();
  hostToolchain.catch(() => (hostToolchain = undefined));
  return hostToolchain;
}

/**
 * Where an install runs, as part of the key: the image id for docker (the image carries its own
 * toolchain), the host's toolchain for bwrap and none.
 */
export async function environmentId(kind: SandboxKind, image: string, docker: Docker = new Docker()): Promise<string> {
  if (kind !== 'docker') return `host:${await hostToolchainId()}`;
  let info: Docker.ImageInspectInfo;
  try {
    info = await docker.getImage(image).inspect();
  } catch (cause) {
    throw new GenesisError('sandbox-image-missing', `cannot key dependencies on the image ${image}: ${(cause as Error).message}`, {
      hint: 'Run `bash sandboxes/build-images.sh` (or `bash scripts/setup-services.sh`) to build it.',
      cause,
    });
  }
  return `docker:${info.Id}`;
}
