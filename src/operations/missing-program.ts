import { GenesisError } from '../errors/genesis-error.js';
import type { GateRecord } from '../ledger/episode-record.js';

/** The manifest field each gate step's command comes from. */
const FIELD: Record<string, string> = { setup: 'verify.setup', build: 'verify.build', test: 'verify.test', deps: 'verify.deps.install' };

/** `/bin/sh: 1: python3: not found` (dash), `sh: python3: command not found` (bash), `env: 'python3': No such file or directory`. */
const NOT_FOUND = [
  /^(?:\/bin\/)?(?:ba)?sh: (?:\d+: |line \d+: )?([^\s:]+): (?:command )?not found$/m,
  /^(?:\/usr\/bin\/)?env: '?([^\s:']+)'?: No such file or directory$/m,
];

/** The program a failed gate's shell could not find (exit 127), or null when it failed for another reason. */
export function missingProgram(record: GateRecord, log: string): { step: string; program: string } | null {
  const failed = record.steps.findLast((s) => s.exitCode !== 0);
  if (failed?.exitCode !== 127) return null;
  for (const pattern of NOT_FOUND) {
    const program = pattern.exec(log)?.[1];
    // A step run again is recorded as `test (run again)`: the step is the same.
    if (program) return { step: failed.name.replace(/ \(.*$/, ''), program };
  }
  return null;
}

/**
 * One line for a starting content whose gate needs a program the sandbox lacks: which sandbox (and
 * image) ran it, and the two ways out, an image that has the program or the host's own programs.
 */
export function missingProgramError(missing: { step: string; program: string }, record: GateRecord): GenesisError {
  const field = FIELD[missing.step] ?? `the ${missing.step} step`;
  const where = record.image ? `the ${record.sandbox} image ${record.image.name}` : `the ${record.sandbox} sandbox (this machine's programs)`;
  const python = /^python/.test(missing.program) ? ' (genesis/python:3 has python3 and pytest: bash sandboxes/build-images.sh builds it)' : '';
  const hint = record.image
    ? `name an image that has ${missing.program} in world.yaml's verify.image${python}, or gate with this machine's programs: genesis init --sandbox bwrap`
    : `install ${missing.program} on this machine, or gate in an image that has it: verify.image${python} with genesis init --sandbox docker`;
  return new GenesisError('gate-program-missing', `${field} needs ${missing.program}, which ${where} that ran it does not have`, { hint });
}
