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
import { nodePreload } from './node-preload.js';
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
