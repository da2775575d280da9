import { createSandbox } from '../sandbox/create-sandbox.js';
import type { SteerOptions } from '../operations/steer-world.js';
import type { LocalWorld } from '../world/local-world.js';
import { resolveSandboxChoice } from './sandbox-choice.js';

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
