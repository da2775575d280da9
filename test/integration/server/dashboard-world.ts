import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import type { RunSummary } from '../../../src/schedule/run/ports/events.js';
import type { WorldRepo } from '../../../src/world/world-repo.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { BAD_A, baseManifest, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

export const GOOD_C = "export const c = () => 'c';\n";

/**
 * A world with something on every page, built through the real run: task a is rejected twice
 * and blocked (check-failed), b fails once (the agent crashes) and then lands, c lands after b,
 * d waits on the blocked a, and e is blocked for writing outside its paths.
 */
export async function buildDashboardWorld(): Promise<{ path: string; summary: RunSummary }> {
  const manifest = baseManifest({
    tasks: [
      { id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js', humanMinutes: 5 },
      { id: 'b', title: 'module b', paths: ['src/b.js'], check: 'node --test test/b.test.js', humanMinutes: 5 },
      { id: 'c', title: 'module c', paths: ['src/c.js'], dependsOn: ['b'], check: 'node --test test/c.test.js', humanMinutes: 10 },
      { id: 'd', title: 'module d, built on a', paths: ['src/d.js'], dependsOn: ['a'] },
      { id: 'e', title: 'module e', paths: ['src/e.js'] },
    ],
  });
  const f = await makeWorld({
    manifest,
    files: {
      'test/c.test.js':
        "import test from 'node:test';\nimport assert from 'node:assert';\nimport { c } from '../src/c.js';\ntest('c says c', () => assert.equal(c(), 'c'));\n",
    },
    recording: {
      a: [{ say: 'writing a (wrongly)', write: { 'src/a.js': BAD_A } }],
      b: [{ say: 'crashing on purpose', exit: 1 }, { write: { 'src/b.js': GOOD_B } }],
      c: [{ write: { 'src/c.js': GOOD_C } }],
      d: [{ write: { 'src/d.js': 'export const d = 1;\n' } }],
      e: [{ say: 'also touching b', write: { 'src/e.js': 'export const e = 1;\n', 'src/b.js': 'export const b = 0;\n' } }],
    },
  });
  const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
  // makeWorld's folder is removed after the current test; keep a copy that outlives it.
  const keep = await mkdtemp(join(tmpdir(), 'genesis-dashboard-'));
  await cp(f.world.path, join(keep, 'w.world'), { recursive: true });
  return { path: join(keep, 'w.world'), summary };
}

/** A private copy of a built world, for a test that changes it. */
export async function copyWorld(path: string): Promise<WorldRepo> {
  const dir = await mkdtemp(join(tmpdir(), 'genesis-dashboard-copy-'));
  await cp(path, join(dir, 'w.world'), { recursive: true });
  return LocalWorld.open(join(dir, 'w.world'));
}

/** Removes a world made by this module (its parent folder is private to it). */
export async function removeWorld(path: string): Promise<void> {
  await rm(join(path, '..'), { recursive: true, force: true });
}
