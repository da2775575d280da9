import { stringify } from 'yaml';
import { GenesisError } from '../../errors/genesis-error.js';
import type { WorldRepo } from '../../world/world-repo.js';

/**
 * A world.yaml for an adopted repository that brought none, from what its tree says: a Node
 * project's test script (and its lockfile, for verify.deps). Anything else needs --manifest: a
 * guess that verified nothing would be worse than none.
 */
export async function guessManifest(world: WorldRepo, head: string, name: string, source: string): Promise<string> {
  const text = await world.readFile(head, 'package.json');
  let test: unknown;
  try {
    test = text === null ? undefined : (JSON.parse(text) as { scripts?: { test?: unknown } }).scripts?.test;
  } catch {
    test = undefined;
  }
  if (typeof test !== 'string' || test.trim() === '' || /no test specified/.test(test)) {
    throw new GenesisError('manifest-missing', `the repository has no world.yaml, and no test script to guess one from`, {
      hint: 'write a world.yaml (see docs/guides/adopting.md) and pass it with --manifest <file>',
    });
  }
  const lock = (await world.readFile(head, 'package-lock.json')) !== null;
  const manifest = {
    name,
    goal: { outcome: `continue ${name} with verified changes` },
    verify: {
      test: 'npm test',
      ...(lock ? { deps: { files: ['package.json', 'package-lock.json'], install: 'npm ci --ignore-scripts', paths: ['node_modules'] } } : {}),
    },
    agent: { kind: 'command', preset: 'claude-code' },
    // Sent back as a branch of its own (genesis/<branch>), never over the repository's branches.
    ...(source.endsWith('.bundle') ? {} : { publish: { url: source } }),
  };
  return stringify(manifest);
}
