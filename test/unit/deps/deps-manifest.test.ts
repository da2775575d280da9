import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseManifest } from '../../../src/manifest/parse.js';

function withDeps(deps: unknown) {
  return parseManifest(stringify({ name: 'w', goal: { outcome: 'x' }, verify: { test: 'npm test', deps }, agent: { kind: 'command', command: ['a'] } }));
}

const NPM = { files: ['package.json', 'package-lock.json'], install: 'npm ci --ignore-scripts', paths: ['node_modules'] };

describe('verify.deps in world.yaml', () => {
  it('accepts the contract and fills the install limits', () => {
    const result = withDeps(NPM);
    expect(result.errors).toEqual([]);
    expect(result.manifest!.verify.deps).toEqual({ ...NPM, timeoutSec: 900, memoryMb: 4096 });
  });

  it('is optional', () => {
    expect(withDeps(undefined).manifest!.verify.deps).toBeUndefined();
  });

  it.each([
    [{ ...NPM, files: [] }, 'verify.deps.files: name at least one file'],
    [{ ...NPM, install: ' ' }, 'verify.deps.install: an install command is required'],
    [{ ...NPM, paths: [] }, 'verify.deps.paths: name what the install produces'],
    [{ ...NPM, paths: ['/opt/node_modules'] }, 'verify.deps.paths[0]: "/opt/node_modules" is absolute'],
    [{ ...NPM, paths: ['../node_modules'] }, 'verify.deps.paths[0]: "../node_modules" leaves the tree'],
    [{ ...NPM, paths: ['.'] }, 'verify.deps.paths[0]: "." names the whole tree'],
    [{ ...NPM, paths: ['node_modules/*'] }, 'verify.deps.paths[0]: "node_modules/*" is a pattern'],
    [{ ...NPM, files: ['.git/config'] }, 'verify.deps.files[0]: ".git/config" is inside .git'],
    [{ ...NPM, files: ['a/../../package.json'] }, 'verify.deps.files[0]: "a/../../package.json" leaves the tree'],
    [{ ...NPM, paths: ['node_modules', 'node_modules/.bin'] }, 'verify.deps.paths[1]: "node_modules/.bin" overlaps verify.deps.paths[0]'],
    [{ ...NPM, paths: ['vendor'], files: ['vendor/lock.json'] }, 'verify.deps.paths[0]: "vendor" overlaps verify.deps.files[0]'],
    [{ ...NPM, files: ['package.json', './package.json'] }, 'verify.deps.files[1]: "package.json" is listed twice'],
    [{ ...NPM, extra: 1 }, 'verify.deps.extra: unknown field'],
  ])('refuses %j with one error naming the field', (deps, error) => {
    const result = withDeps(deps);
    expect(result.manifest).toBeNull();
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toContain(error);
  });
});
