import { Option } from 'commander';
import { GenesisError } from '../errors/genesis-error.js';
import { wholeNumber } from './option-parsers.js';
import type { SteerOptions } from '../operations/steer-world.js';
import type { LocalWorld } from '../world/local-world.js';

/** `--world <path>`, also read from GENESIS_WORLD. */
export function worldOption(): Option {
  return new Option('--world <path>', 'the world: a directory made by genesis init').env('GENESIS_WORLD');
}

export function requireWorld(opts: { world?: string }): string {
  if (opts.world) return opts.world;
  throw new GenesisError('world-required', 'no world given', { hint: 'pass --world <path> or set GENESIS_WORLD' });
}

export function sandboxOption(): Option {
  return new Option('--sandbox <kind>', 'override verify.sandbox of world.yaml').choices(['auto', 'docker', 'bwrap', 'none']);
}

/** `--timeout <seconds>`: how long a command that changes the world waits for a running `genesis run` to take the change. */
export function steeringTimeoutOption(): Option {
  return new Option('--timeout <seconds>', 'while a genesis run of this world runs: how long to wait for its scheduler to take the change')
    .argParser(wholeNumber('--timeout', 1))
    .default(120);
}

/**
 * What every command that changes the world hands steerWorld: the gate's sandbox (as `--sandbox`,
 * the manifest and init chose it), progress lines on stderr while a running scheduler has the
 * change, the timeout, and Ctrl-C withdrawing a change not taken yet.
 */
export async function cliSteerOptions(
  world: LocalWorld,
  opts: { sandbox?: 'auto' | 'docker' | 'bwrap' | 'none'; timeout?: number },
  what: string,
): Promise<SteerOptions & { dispose(): void }> {
  // Loaded here, not with the options every command declares: only commands that change the world need them.
  const { createSandbox } = await import('../sandbox/create-sandbox.js');
  const { resolveSandboxChoice } = await import('./sandbox-choice.js');
  const atInit = await world.initSandbox();
  const controller = new AbortController();
  const onInterrupt = () => controller.abort();
  return {
    what,
    sandboxFor: async (m) => {
      const { choice, why } = resolveSandboxChoice({ flag: opts.sandbox, manifest: m.verify.sandbox, atInit });
      const sandbox = await createSandbox(choice, { image: m.verify.image });
      process.stderr.write(`sandbox: ${sandbox.kind} (${why})\n`);
      return sandbox;
    },
    onWait: (line) => process.stderr.write(`${line}\n`),
    timeoutMs: (opts.timeout ?? 120) * 1000,
    signal: controller.signal,
    // Only while a request waits in the world: Ctrl-C withdraws it (if not taken yet) instead of leaving it behind.
    onWaiting: (waiting) => (waiting ? process.once('SIGINT', onInterrupt) : process.removeListener('SIGINT', onInterrupt)),
    dispose: () => process.removeListener('SIGINT', onInterrupt),
  };
}
