/**
 * The canaries of one gate: a nonce drawn for it, and a directory on the host holding the node
 * preload and the pytest plugin made with that nonce, which every test step sees read-only at
 * {@link CANARY_DIR} in its work dir (with vitest's and jest's setup files, which the node preload hands to them), loaded through the environment by whatever runner the
 * world's command starts (`NODE_OPTIONS`, `PYTHONPATH` and `PYTEST_PLUGINS`), not one recipe.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxKind, SandboxMount } from '../../sandbox/sandbox.js';
import { jestSetup } from './jest-setup.js';
import { nodePreload, TIMEOUT_FACTOR_FILE } from './node-preload.js';
import { pytestPlugin } from './pytest-plugin.js';
import { vitestSetup } from './vitest-setup.js';

/** Where a test step sees the canary files, relative to its work dir (never in the world). */
export const CANARY_DIR = '.genesis-canary';

/** Where sandboxes that remap the work dir show it (bwrap, docker and the warm pool). */
const REMAPPED_WORK_DIR = '/work';

export class GateCanaries {
  private constructor(
    readonly nonce: string,
    private readonly dir: string,
  ) {}

  /** Draws a nonce and writes the files into `dir` (made here, removed by {@link dispose}). */
  static async create(dir: string): Promise<GateCanaries> {
    const nonce = randomBytes(9).toString('base64url');
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'node.cjs'), nodePreload(nonce), { mode: 0o444 });
    await writeFile(join(dir, 'genesis_canary.py'), pytestPlugin(nonce), { mode: 0o444 });
    await writeFile(join(dir, 'vitest-setup.mjs'), vitestSetup(nonce), { mode: 0o444 });
    await writeFile(join(dir, 'jest-setup.cjs'), jestSetup(nonce), { mode: 0o444 });
    return new GateCanaries(nonce, dir);
  }

  /**
   * Runs `run` with the runners' own per-test and hook time limits (vitest's, jest's) raised
   * `factor` times, for the run again of a step whose only failures were those limits: on a loaded
   * machine, or in bubblewrap whose CPUs no limit can raise, the same limit times out again and
   * the change is charged for the machine. The node preload reads the factor from this file.
   */
  async withTestTimeoutsRaised<T>(factor: number, run: () => Promise<T>): Promise<T> {
    const file = join(this.dir, TIMEOUT_FACTOR_FILE);
    await writeFile(file, String(factor), { mode: 0o444 });
    try {
      return await run();
    } finally {
      await rm(file, { force: true });
    }
  }

  get mount(): SandboxMount {
    return { source: this.dir, target: CANARY_DIR };
  }

  /** The variables that load the canaries, for a step whose work dir is `workDir` on the host. */
  env(kind: SandboxKind, workDir: string): Record<string, string> {
    const inside = `${kind === 'none' ? workDir : REMAPPED_WORK_DIR}/${CANARY_DIR}`;
    return {
      NODE_OPTIONS: `--require "${inside}/node.cjs"`,
      PYTHONPATH: inside,
      PYTEST_PLUGINS: 'genesis_canary',
    };
  }

  dispose(): Promise<void> {
    return rm(this.dir, { recursive: true, force: true });
  }
}
