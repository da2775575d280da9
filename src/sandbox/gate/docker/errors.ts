import { GenesisError } from '../../../errors/genesis-error.js';

const SETUP_HINT = 'Run `bash scripts/setup-services.sh` to install and start Docker.';
const GROUP_HINT = 'Add your user to the docker group: `sudo usermod -aG docker $USER`, then log in again.';
/** The images sandboxes/build-images.sh builds, each with the flag that asks for it. */
const BUILT_BY_GENESIS: Record<string, string> = {
  'genesis/node:20': '',
  'genesis/python:3': '',
  'genesis/agent:latest': ' --agents',
  'genesis/genesis:latest': ' --compose',
  'genesis/redis:7': ' --compose --from debian',
};

/**
 * How to get a missing image: one of Genesis's own is built by its script (with the flag that
 * builds it; `--from debian` where no registry answers); any other a world names, whatever its
 * name, is pulled or built by its owner, or the world names another.
 */
export function missingImageHint(image: string): string {
  const flag = BUILT_BY_GENESIS[image.includes(':') ? image : `${image}:latest`];
  if (flag !== undefined)
    return `Build it: \`bash sandboxes/build-images.sh${flag}\`${flag.includes('--from') ? '' : ' (add --from debian where no image registry answers)'}, or name another image in verify.image in world.yaml.`;
  return `Pull it (\`docker pull ${image}\`) or build it on this host (\`docker build -t ${image} <dir with its Dockerfile>\`), or name another image in verify.image in world.yaml (\`docker images\` lists those this host has).`;
}

/**
 * Which call of the Engine API failed: a 404 means a missing image while the image is looked up
 * or a container made from it, and a container that vanished (a race, transient) after that.
 */
export type DockerStage = 'image' | 'create' | 'run';

/** Socket errors of a daemon that is down or restarting. EACCES is not one: it is a permission. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN']);

/**
 * A dockerode failure as a GenesisError whose code says what it means: a missing image, an invalid
 * container configuration (400) or a permission (EACCES on the socket, 401, 403) are configuration
 * mistakes reported at once with a hint; a daemon that does not answer, a timeout, a conflict (409)
 * or a server error (5xx) are transient and worth retrying (`transientHint` says what to check then).
 */
export function dockerError(cause: unknown, stage: DockerStage, image: string, transientHint?: string): GenesisError {
  if (cause instanceof GenesisError) return cause;
  const message = messageOf(cause);
  const code = String((cause as { code?: unknown } | null)?.code ?? '');
  const name = cause instanceof Error ? cause.name : '';
  const status = (cause as { statusCode?: unknown } | null)?.statusCode;
  if (code === 'EACCES' || status === 401 || status === 403) {
    return new GenesisError('docker-permission-denied', `Docker refused this user: ${message}`, {
      hint: code === 'EACCES' ? GROUP_HINT : "Check the Docker daemon's authorization settings for this user.",
      cause,
    });
  }
  if (UNREACHABLE.has(code) || name === 'AbortError' || name === 'TimeoutError') {
    return new GenesisError('docker-unavailable', `The Docker daemon does not answer: ${message}`, { hint: transientHint ?? SETUP_HINT, cause });
  }
  if (status === 404 && stage !== 'run') {
    return new GenesisError('sandbox-image-missing', `The sandbox image ${image} does not exist.`, { hint: missingImageHint(image), cause });
  }
  if (status === 400) {
    return new GenesisError('sandbox-config-invalid', `Docker refused the sandbox container for ${image}: ${message}`, {
      hint: 'Fix what Docker names in world.yaml (verify.image, verify.limits, verify.readOnly); retrying cannot help.',
      cause,
    });
  }
  return new GenesisError('sandbox-failed', `Docker could not run the sandbox: ${message}`, {
    hint: transientHint ?? 'A conflict or a server error of the daemon: it is tried again; `docker info` shows its state.',
    cause,
  });
}

/** What `docker run` printed when it exited 125 (the daemon refused to start the container), read by kind. */
export type DockerCliFailure = 'unavailable' | 'permission-denied' | 'image-missing' | 'invalid' | 'transient';

/**
 * The docker CLI reports only text; these are the daemon's and the client's own phrases (Docker
 * 20.10 to 27). Anything not recognised is taken as transient, as every failure was before.
 */
const CLI_PHRASES: ReadonlyArray<[DockerCliFailure, RegExp]> = [
  ['permission-denied', /permission denied while trying to connect to the docker daemon/i],
  ['unavailable', /cannot connect to the docker daemon|is the docker daemon running|error during connect/i],
  ['image-missing', /unable to find image|no such image|pull access denied|repository does not exist|manifest unknown/i],
  ['invalid', /invalid reference format|invalid argument|invalid mount config|bad parameter|network [^\n]* not found|unknown flag|invalid (?:value|option)/i],
];

export function readDockerCliFailure(log: string): DockerCliFailure {
  return CLI_PHRASES.find(([, phrase]) => phrase.test(log))?.[0] ?? 'transient';
}

function messageOf(cause: unknown): string {
  const json = (cause as { json?: { message?: unknown } } | null)?.json?.message;
  if (typeof json === 'string' && json !== '') return json;
  return cause instanceof Error ? cause.message : String(cause);
}
