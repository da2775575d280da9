import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { dockerError } from '../sandbox/gate/docker/errors.js';
import { dockerClientOf, type Sandbox } from '../sandbox/sandbox.js';

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
export async function environmentId(sandbox: Sandbox, image: string): Promise<string> {
  if (sandbox.kind !== 'docker') return `host:${await hostToolchainId()}`;
  // A daemon that does not answer is transient (docker-unavailable), not a missing image.
  const info = await dockerClientOf(sandbox)
    .getImage(image)
    .inspect()
    .catch((cause: unknown) => {
      throw dockerError(cause, 'image', image);
    });
  return `docker:${info.Id}`;
}
