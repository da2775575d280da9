import type { SandboxChoice } from '../world/world-settings.js';

/** Which sandbox to use, and the reason to print. */
export interface ResolvedSandboxChoice {
  choice: SandboxChoice;
  why: string;
}

/**
 * The gate's sandbox for `run` and `amend`: a `--sandbox` flag first, then an explicit
 * `verify.sandbox` in world.yaml, then what `genesis init --sandbox` chose for this world, and
 * only then `auto`. Pure.
 */
export function resolveSandboxChoice(input: { flag?: SandboxChoice; manifest: SandboxChoice; atInit: SandboxChoice | null }): ResolvedSandboxChoice {
  if (input.flag) return { choice: input.flag, why: `--sandbox ${input.flag}` };
  if (input.manifest !== 'auto') return { choice: input.manifest, why: `verify.sandbox: ${input.manifest} in world.yaml` };
  if (input.atInit) return { choice: input.atInit, why: `chosen at genesis init --sandbox ${input.atInit}; override with --sandbox or verify.sandbox` };
  return { choice: 'auto', why: 'verify.sandbox: auto (docker when its daemon and image answer, else bubblewrap); pin one with --sandbox or verify.sandbox' };
}
