import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect } from 'vitest';
import { depsManifest, SEMVER_FILES } from '../../helpers/deps-fixture.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { makeWorld } from '../../helpers/world-fixture.js';

const ROOT = join(import.meta.dirname, '../../..');

async function genesis(args: string[], cacheDir: string) {
  return execa('node', ['bin/genesis.js', ...args], { cwd: ROOT, reject: false, env: { GENESIS_CACHE_DIR: cacheDir } });
}

describe('genesis deps', () => {
  itWith('bwrap')("prepares a world's set on demand, lists it with key, size and last use, and collects it", { timeout: 120_000 }, async () => {
    const initCache = await tempDir('genesis-deps-init-');
    process.env.GENESIS_CACHE_DIR = initCache;
    const f = await makeWorld({ sandbox: 'bwrap', manifest: depsManifest('bwrap'), files: SEMVER_FILES, recording: {} });
    // A second worker with a cache of its own prepares on demand.
    const cache = await tempDir('genesis-deps-cli-');
    const prepared = await genesis(['deps', 'prepare', '--world', f.world.path, '--json'], cache);
    expect(prepared.exitCode, prepared.stderr).toBe(0);
    const { key, hit } = JSON.parse(prepared.stdout) as { key: string; hit: boolean };
    expect(hit).toBe(false);
    const again = JSON.parse((await genesis(['deps', 'prepare', '--world', f.world.path, '--json'], cache)).stdout) as { key: string; hit: boolean };
    expect(again).toMatchObject({ key, hit: true });

    const listed = await genesis(['deps', '--json'], cache);
    const list = JSON.parse(listed.stdout) as { root: string; sets: Array<{ key: string; bytes: number; lastUsed: string; paths: string[] }> };
    expect(list.root).toBe(join(cache, 'deps'));
    expect(list.sets).toHaveLength(1);
    expect(list.sets[0]).toMatchObject({ key, paths: ['node_modules'] });
    expect(list.sets[0]!.bytes).toBeGreaterThan(10_000);
    expect(Date.now() - Date.parse(list.sets[0]!.lastUsed)).toBeLessThan(60_000);
    const text = await genesis(['deps'], cache);
    expect(text.stdout).toContain(key.slice(0, 12));
    expect(text.stdout).toContain('npm ci --ignore-scripts');

    // Under the cap and recently used: gc keeps it; --all removes it.
    expect(JSON.parse((await genesis(['deps', 'gc', '--json'], cache)).stdout)).toMatchObject({ removed: [] });
    expect(JSON.parse((await genesis(['deps', 'gc', '--all', '--json'], cache)).stdout)).toMatchObject({ removed: [key] });
    expect(JSON.parse((await genesis(['deps', '--json'], cache)).stdout)).toMatchObject({ sets: [] });
  });

  itWith('bwrap')('says what to do for a world without verify.deps', async () => {
    const f = await makeWorld({ sandbox: 'bwrap', recording: {} });
    const result = await genesis(['deps', 'prepare', '--world', f.world.path], await tempDir('genesis-deps-cli-'));
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('[deps-not-configured]');
    expect(result.stderr).toContain('verify.deps');
  });
});
