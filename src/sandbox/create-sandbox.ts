import { GenesisError } from '../errors/genesis-error.js';
import { BwrapSandbox } from './gate/bwrap/bwrap-sandbox.js';
import { DockerSandbox } from './gate/docker/docker-sandbox.js';
import { NoneSandbox } from './gate/none-sandbox.js';
import { sharedWarmPool } from './warm/pool.js';
import type { Sandbox, SandboxKind } from './sandbox.js';

export interface CreateSandboxOptions {
  /** Image for the docker adapter, e.g. `genesis/node:20`. */
  image: string;
}

/** Probes that succeeded in this process; a failed probe is tried again on the next call. */
const healthy = new Map<string, Promise<void>>();

function checked(key: string, sandbox: Sandbox): Promise<Sandbox> {
  let probe = healthy.get(key);
  if (!probe) {
    probe = sandbox.check();
    healthy.set(key, probe);
    probe.catch(() => healthy.delete(key));
  }
  return probe.then(() => sandbox);
}

/**
 * The sandbox a world asked for, checked to be usable (rejects with the adapter's GenesisError
 * and hint if not). `auto` takes docker when the daemon answers and the image exists, else
 * bubblewrap when it can start a sandbox here, else rejects with `no-sandbox`; it never falls
 * back to `none`, which only an explicit choice gets.
 */
export async function createSandbox(choice: 'auto' | SandboxKind, options: CreateSandboxOptions): Promise<Sandbox> {
  const docker = (): Promise<Sandbox> => checked(`docker:${options.image}`, new DockerSandbox({ ...options, warm: sharedWarmPool() ?? undefined }));
  const bwrap = (): Promise<Sandbox> => checked('bwrap', new BwrapSandbox());
  switch (choice) {
    case 'docker':
      return docker();
    case 'bwrap':
      return bwrap();
    case 'none':
      return new NoneSandbox();
    case 'auto':
      break;
  }
  const reasons: string[] = [];
  for (const candidate of [docker, bwrap]) {
    try {
      return await candidate();
    } catch (error) {
      reasons.push(error instanceof Error ? error.message : String(error));
    }
  }
  throw new GenesisError('no-sandbox', `No sandbox can run here. ${reasons.join(' ')}`, {
    hint:
      'Run `bash scripts/setup-services.sh` to install and start Docker and bubblewrap, or set ' +
      '`verify.sandbox: none` in world.yaml to run commands without isolation.',
  });
}
