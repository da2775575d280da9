import { spawn } from 'node:child_process';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DepsCache, type PrepareRequest } from '../../../src/deps/cache/cache.js';
import { installWithoutSandbox } from '../../../src/deps/installers/none.js';
import type { InstallSpec } from '../../../src/deps/installers/install-spec.js';
import { tempDir } from '../../helpers/temp-dir.js';

const KEY = 'a'.repeat(64);

/** A real install (a shell command) that counts how often it ran in `counter`. */
function request(counter: string, command = 'sleep 0.5; mkdir -p out/pkg; cat lock.txt > out/pkg/index.js'): PrepareRequest {
  return {
    key: KEY,
    files: [{ path: 'lock.txt', content: Buffer.from('v1') }],
    spec: { files: ['lock.txt'], install: command, paths: ['out'], timeoutSec: 60, memoryMb: 512 },
    environment: 'test',
    image: '',
    install: async (spec: InstallSpec) => {
      await writeFile(counter, `${await readFile(counter, 'utf8').catch(() => '')}x`);
      return installWithoutSandbox(spec);
    },
  };
}

function runChild(root: string, command: string): { pid: number; done: Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/deps/prepare-child.ts', root, KEY, command], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return { pid: child.pid!, done: new Promise((resolve) => child.on('close', () => resolve(out))) };
}

async function waitFor(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the dependency cache', () => {
  it('installs a key once when many ask for it at the same time; the others wait and share it', async () => {
    const root = await tempDir('genesis-deps-');
    const counter = join(root, 'count');
    const cache = new DepsCache({ root: join(root, 'cache') });
    const outcomes = await Promise.all([1, 2, 3].map(() => cache.ensure(request(counter))));
    expect(await readFile(counter, 'utf8')).toBe('x');
    expect(outcomes.map((o) => o.ok && o.hit).sort()).toEqual([false, true, true]);
    const dir = outcomes[0]!.ok ? outcomes[0]!.dir : '';
    expect(await readFile(join(dir, 'out/pkg/index.js'), 'utf8')).toBe('v1');
    // Outputs are read-only: nobody but root may change them.
    expect((await stat(join(dir, 'out/pkg/index.js'))).mode & 0o222).toBe(0);
  });

  it('never uses a set whose preparer was killed, and takes over its lock', async () => {
    const root = await tempDir('genesis-deps-');
    const cacheRoot = join(root, 'cache');
    const child = runChild(cacheRoot, 'mkdir -p out; echo half > out/partial; sleep 30');
    await waitFor(
      async () =>
        (await readdir(join(cacheRoot, 'locks')).catch(() => [])).length === 1 && (await readdir(join(cacheRoot, 'staging')).catch(() => [])).length > 0,
    );
    await waitFor(async () =>
      (await readdir(join(cacheRoot, 'staging'), { recursive: true }).catch(() => [] as string[])).some((p) => String(p).endsWith('partial')),
    );
    process.kill(child.pid, 'SIGKILL');
    await child.done;
    const cache = new DepsCache({ root: cacheRoot });
    expect(await cache.list()).toEqual([]);
    const counter = join(root, 'count');
    const outcome = await cache.ensure(request(counter));
    expect(outcome).toMatchObject({ ok: true, hit: false });
    expect(await readFile(counter, 'utf8')).toBe('x');
    // The dead preparer's staging dir is garbage, collected by gc.
    const gc = await cache.gc();
    expect(gc.staging).toBe(1);
    expect(await readdir(join(cacheRoot, 'staging'))).toEqual([]);
  });

  it('prepares a set again when something changed it after it was prepared', async () => {
    const root = await tempDir('genesis-deps-');
    const counter = join(root, 'count');
    const cache = new DepsCache({ root: join(root, 'cache') });
    const first = await cache.ensure(request(counter));
    if (!first.ok) throw new Error(first.message);
    // A tool with root's rights writing through a workspace link.
    await writeFile(join(first.dir, 'out/pkg/extra.js'), 'tampered');
    const second = await cache.ensure(request(counter));
    expect(second).toMatchObject({ ok: true, hit: false });
    expect(second.log).toContain('changed after it was prepared');
    expect(await readFile(counter, 'utf8')).toBe('xx');
    expect(await readdir(join(second.ok ? second.dir : '', 'out/pkg'))).toEqual(['index.js']);
  });

  it('proves a set it hands out at once beside the caller, and a set changed after it was prepared fails the proof', async () => {
    const root = await tempDir('genesis-deps-');
    const counter = join(root, 'count');
    const cache = new DepsCache({ root: join(root, 'cache') });
    const first = await cache.ensure({ ...request(counter), proveBeside: true });
    // Nothing prepared yet: installed, and what was just prepared needs no proof.
    expect(first).toMatchObject({ ok: true, hit: false });
    expect(first.ok && first.intact).toBe(undefined);
    const clean = await cache.ensure({ ...request(counter), proveBeside: true });
    expect(clean).toMatchObject({ ok: true, hit: true });
    expect(await (clean.ok ? clean.intact : undefined)).toBe(true);
    await writeFile(join(first.ok ? first.dir : '', 'out/pkg/extra.js'), 'tampered');
    const damaged = await cache.ensure({ ...request(counter), proveBeside: true });
    expect(damaged).toMatchObject({ ok: true, hit: true });
    expect(await (damaged.ok ? damaged.intact : undefined)).toBe(false);
    // Asked again without it, the cache proves the set first and prepares it again.
    const again = await cache.ensure(request(counter));
    expect(again).toMatchObject({ ok: true, hit: false });
    expect(again.log).toContain('changed after it was prepared');
    expect(await readFile(counter, 'utf8')).toBe('xx');
  });

  it('evicts the least recently used sets beyond its cap, never the one just prepared', async () => {
    const root = await tempDir('genesis-deps-');
    const cache = new DepsCache({ root: join(root, 'cache'), capBytes: 1, graceMs: 0 });
    const counter = join(root, 'count');
    const one = await cache.ensure(request(counter));
    const two = await cache.ensure({ ...request(counter), key: 'b'.repeat(64) });
    expect(one.ok && two.ok).toBe(true);
    expect((await cache.list()).map((s) => s.key)).toEqual(['b'.repeat(64)]);
  });
});
