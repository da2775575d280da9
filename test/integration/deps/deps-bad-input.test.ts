import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { itWith } from '../../helpers/services.js';
import { depsManifest, NPM_DEPS, SEMVER_FILES, useTempDepsCache } from '../../helpers/deps-fixture.js';
import { baseManifest, makeWorld } from '../../helpers/world-fixture.js';
import { tempDir } from '../../helpers/temp-dir.js';

const cache = useTempDepsCache();

describe('bad dependency input', () => {
  itWith('bwrap')('refuses deps.files naming a file the starting content lacks, naming the file and the fix', async () => {
    const files = { ...SEMVER_FILES };
    delete files['package-lock.json'];
    const made = makeWorld({ sandbox: 'bwrap', manifest: depsManifest('bwrap'), files, recording: {} });
    await expect(made).rejects.toMatchObject({ code: 'deps-file-missing', message: expect.stringContaining('"package-lock.json"') });
    await expect(made).rejects.toMatchObject({ hint: expect.stringContaining('npm install') });
  });

  itWith('bwrap')('fails the gate with deps-failed naming the output an install did not produce', async () => {
    const manifest = depsManifest('bwrap', { deps: { ...NPM_DEPS, paths: ['node_modules', 'vendor'] } });
    const made = makeWorld({ sandbox: 'bwrap', manifest, files: SEMVER_FILES, recording: {} });
    await expect(made).rejects.toMatchObject({ code: 'initial-commit-failed', message: expect.stringContaining('did not produce "vendor"') });
    // Nothing half-prepared is left where a gate would find it.
    expect(await readdir(join(cache.root(), 'sets'))).toEqual([]);
    expect(await readdir(join(cache.root(), 'staging'))).toEqual([]);
  });

  itWith('bwrap')('says the cache cannot be written, and how to point it elsewhere', async () => {
    const root = await tempDir('genesis-deps-ro-');
    // A file where the cache's directory should be: unwritable even for root.
    await writeFile(join(root, 'deps'), 'not a directory');
    process.env.GENESIS_CACHE_DIR = root;
    const made = makeWorld({ sandbox: 'bwrap', manifest: depsManifest('bwrap'), files: SEMVER_FILES, recording: {} });
    await expect(made).rejects.toMatchObject({ code: 'deps-cache-unwritable', hint: expect.stringContaining('GENESIS_CACHE_DIR') });
  });

  itWith('bwrap')('fails a failing install as deps-failed, with the install log', async () => {
    const manifest = depsManifest('bwrap', { deps: { ...NPM_DEPS, install: 'echo "lockfile out of date" >&2; exit 3' } });
    const made = makeWorld({ sandbox: 'bwrap', manifest, files: SEMVER_FILES, recording: {} });
    await expect(made).rejects.toMatchObject({ code: 'initial-commit-failed', message: expect.stringMatching(/failed \(exit 3\)[\s\S]*lockfile out of date/) });
  });
});

describe('an install that cannot reach its registry', () => {
  itWith('bwrap')('says the name lookup failed inside the install sandbox, and what to check', async () => {
    const lookup = `node -e "require('dns').lookup('registry.genesis.invalid', (e) => { console.error(e.code, 'getaddrinfo'); process.exit(1); })"`;
    const manifest = depsManifest('bwrap', { deps: { ...NPM_DEPS, install: lookup } });
    const made = makeWorld({ sandbox: 'bwrap', manifest, files: SEMVER_FILES, recording: {} });
    await expect(made).rejects.toMatchObject({
      code: 'initial-commit-failed',
      message: expect.stringContaining("a name lookup failed inside the install's sandbox"),
    });
  });
});

describe('a gate that reaches for the network', () => {
  itWith('bwrap')('fails fast and says gates have no network, pointing at verify.deps', async () => {
    const { 'test/base.test.js': _usesSemver, ...lockfiles } = SEMVER_FILES;
    const manifest = baseManifest({
      verify: { sandbox: 'bwrap', setup: 'npm ci', test: 'node --test test/base.test.js', timeoutSec: 120, limits: { cpus: 1, memoryMb: 512, pids: 128 } },
    });
    const started = Date.now();
    const made = makeWorld({ sandbox: 'bwrap', manifest, files: lockfiles, recording: {} });
    await expect(made).rejects.toMatchObject({
      code: 'initial-commit-failed',
      message: expect.stringMatching(/setup failed \(exit \d+\); [^\n]*gates have no network[^\n]*verify\.deps/),
    });
    // npm alone retries DNS for about 70 s when nobody tells it to stay offline.
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});
