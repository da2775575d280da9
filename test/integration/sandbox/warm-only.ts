import { afterAll, expect } from 'vitest';
import { DockerSandbox, WarmPool } from '../../../src/sandbox/index.js';
import type { Sandbox, SandboxRunResult, SandboxRunSpec } from '../../../src/sandbox/index.js';
import { removeTree } from '../../../src/sandbox/process/remove-tree.js';
import { specFor } from './sandbox-contract.js';

/**
 * A docker sandbox whose every run must be served by a container of `pool`, started before the
 * run: it primes the pool for the spec's settings (one run the fresh way, in a work dir of its
 * own), waits until a container is ready and fails the test if the run did not take it or fell
 * back to a fresh container after it. Without that check a suite could pass on the fresh path alone.
 */
export function warmOnly(pool: WarmPool, image = 'genesis/node:20'): Sandbox {
  const inner = new DockerSandbox({ image, warm: pool });
  return {
    kind: 'docker',
    docker: inner.docker,
    check: () => inner.check(),
    run: async (spec: SandboxRunSpec): Promise<SandboxRunResult> => {
      // A container still being reset after the last gate is ready only if its reset passes.
      await pool.settled();
      if (pool.readyCount === 0) {
        const prime = (await specFor('true')).workDir;
        await inner.run({ ...spec, command: 'true', workDir: prime, readOnlyPaths: [], mounts: [] });
        await removeTree(prime); // a disk quota made it a mount
        for (let i = 0; i < 600 && pool.readyCount === 0; i++) await new Promise((r) => setTimeout(r, 50));
      }
      const { hits, failures } = pool.stats;
      const result = await inner.run(spec);
      expect(pool.stats.hits, 'the run took a container of the pool').toBe(hits + 1);
      // A pooled run that could not mount or start falls back to a fresh container and turns the pool off.
      expect(pool.stats.failures, 'the run was served by that container, not a fresh one after it').toBe(failures);
      return result;
    },
  };
}

/** A pool for one test file, drained when the file ends. */
export function testPool(): WarmPool {
  const pool = new WarmPool({ perKey: 1 });
  afterAll(() => pool.drain());
  return pool;
}
