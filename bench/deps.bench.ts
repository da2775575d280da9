/**
 * Dependency sets (verify.deps) for worlds/ts-lib (typescript + vitest from npm): a cold install
 * against a warm gate's dependency step (key from git, cache hit with its fingerprint check, the
 * layout in a fresh work dir), the cost the read-only mounts add to each gate command, and the
 * disk a gate adds, beside what copying or hardlinking the set into each gate would cost.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { formatTable } from '../src/cli/output.js';
import { DepsCache } from '../src/deps/cache/cache.js';
import { depsForGate } from '../src/deps/gate-deps.js';
import { createSandbox } from '../src/sandbox/create-sandbox.js';
import type { Sandbox, SandboxMount } from '../src/sandbox/sandbox.js';
import { exportTree } from '../src/git/tree/export.js';
import { git, gitValue } from '../src/git/git.js';
import { readManifest } from '../src/manifest/parse.js';
import type { BenchContext, BenchResult } from './lib/bench-module.js';
import { cell, ms, summarize, timeRuns } from './lib/stats.js';

const execFileAsync = promisify(execFile);
const TS_LIB = fileURLToPath(new URL('../worlds/ts-lib', import.meta.url));

/** Disk a directory takes, in KiB (du counts each hardlinked inode once per call). */
async function diskKb(dir: string): Promise<number> {
  const { stdout } = await execFileAsync('du', ['-sk', dir]);
  return Number(stdout.split('\t')[0]);
}

/** worlds/ts-lib as a bare repository and its tree: what a gate exports. */
async function tsLibRepo(root: string): Promise<{ repo: string; tree: string }> {
  const repo = join(root, 'ts-lib.git');
  await execFileAsync('git', ['init', '--quiet', '--bare', repo]);
  const env = { GIT_INDEX_FILE: join(root, 'index') };
  await git(['--git-dir', repo, '--work-tree', TS_LIB, 'add', '--all', '--', '.'], { cwd: TS_LIB, env });
  return { repo, tree: await gitValue(['--git-dir', repo, '--work-tree', TS_LIB, 'write-tree'], { cwd: TS_LIB, env }) };
}

interface Row {
  sandbox: string;
  coldMs: number;
  warm: number[];
  mountMs: number;
  gateKb: number;
  setKb: number;
  copyMs: number;
  linkMs: number;
}

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const reps = ctx.quick ? 3 : 10;
  const root = await mkdtemp(join(tmpdir(), 'genesis-bench-deps-'));
  const manifest = readManifest(await readFile(join(TS_LIB, 'world.yaml'), 'utf8'));
  const rows: Row[] = [];
  try {
    const { repo, tree } = await tsLibRepo(root);
    const kinds = ctx.quick ? (['bwrap'] as const) : (['docker', 'bwrap'] as const);
    for (const kind of kinds) {
      const sandbox = await createSandbox(kind, { image: manifest.verify.image });
      const cache = new DepsCache({ root: join(root, `cache-${kind}`) });
      let n = 0;
      const gateStep = async () => {
        const workDir = join(root, `gate-${kind}-${n++}`);
        await exportTree(repo, tree, workDir);
        const t0 = performance.now();
        const deps = await depsForGate({ repo, tree, manifest, sandbox, workDir, cache });
        const elapsed = performance.now() - t0;
        if (!deps?.ok) throw new Error(`dependency step failed: ${deps?.ok === false ? deps.message : 'no verify.deps'}\n${deps?.log ?? ''}`);
        return { workDir, elapsed, mounts: deps.mounts };
      };
      const cold = await gateStep();
      const warm: number[] = [];
      let last = cold;
      for (let i = 0; i < reps; i++) {
        await rm(last.workDir, { recursive: true, force: true });
        last = await gateStep();
        warm.push(last.elapsed);
      }
      const gateKb = await diskKb(join(last.workDir, 'node_modules'));
      const mountMs = await mountOverhead(sandbox, last.workDir, last.mounts, reps);
      const set = (await cache.list())[0]!;
      const setKb = await diskKb(set.dir);
      const copyMs = summarize(await timeRuns(ctx.quick ? 1 : 3, () => copyInto(set.dir, join(root, 'copy'), ['-a']))).median;
      const linkMs = summarize(await timeRuns(ctx.quick ? 1 : 3, () => copyInto(set.dir, join(root, 'link'), ['-al']))).median;
      rows.push({ sandbox: kind, coldMs: cold.elapsed, warm, mountMs, gateKb, setKb, copyMs, linkMs });
      await rm(last.workDir, { recursive: true, force: true });
    }
  } finally {
    await execFileAsync('chmod', ['-R', 'u+w', root]).catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  }
  const table = formatTable(
    [
      'sandbox',
      'cold install ms',
      'warm dep step ms (p90, min–max)',
      'warm/cold',
      'mounts per command ms',
      'disk per gate',
      'set on disk',
      'copy per gate ms',
      'hardlinks per gate ms',
    ],
    rows.map((r) => {
      const warm = summarize(r.warm);
      return [
        r.sandbox,
        ms(r.coldMs),
        cell(warm),
        `${((warm.median / r.coldMs) * 100).toFixed(2)}%`,
        ms(r.mountMs),
        `${r.gateKb} KiB`,
        `${(r.setKb / 1024).toFixed(1)} MiB`,
        ms(r.copyMs),
        ms(r.linkMs),
      ];
    }),
  );
  return {
    title: 'Dependency sets for worlds/ts-lib: cold install vs a warm gate',
    table,
    notes: [
      'cold install: the first gate of a lockfile on a machine (npm ci --ignore-scripts from the registry, in the install sandbox, then moved into the cache).',
      'warm dep step: every later gate: key from git, cache hit with its fingerprint check, output dirs and mount points in the fresh work dir.',
      'mounts per command: what the read-only binds add to one sandboxed command (median of `true` with the mounts minus without).',
      'disk per gate: the node_modules a gate work dir holds (empty mount points); copy and hardlinks: what the alternatives would cost per gate.',
    ],
  };
}

async function mountOverhead(sandbox: Sandbox, workDir: string, mounts: SandboxMount[], reps: number): Promise<number> {
  const limits = { cpus: 1, memoryMb: 512, pids: 128 };
  const spec = { command: 'true', workDir, timeoutMs: 30_000, limits };
  const withMounts = await timeRuns(reps, () => sandbox.run({ ...spec, mounts }));
  const without = await timeRuns(reps, () => sandbox.run(spec));
  return summarize(withMounts).median - summarize(without).median;
}

async function copyInto(source: string, target: string, flags: string[]): Promise<void> {
  await rm(target, { recursive: true, force: true });
  await mkdir(target, { recursive: true });
  await execFileAsync('cp', [...flags, `${source}/.`, target]);
}
