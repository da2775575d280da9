/**
 * What a gate's sandbox costs beyond its command, with and without the warm pool
 * (src/sandbox/warm/pool.ts): one no-op run and one tiny `node --test` run as a gate makes them
 * (protected test/ read-only), fresh container against pooled container, taking turns run by run
 * so load from elsewhere falls on both alike; then six gates at once; then bubblewrap's setup
 * against the bare host, to show whether it is worth pooling.
 */
import { execFile } from 'node:child_process';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { formatTable } from '../src/cli/output.js';
import { BwrapSandbox } from '../src/sandbox/gate/bwrap/bwrap-sandbox.js';
import { containerOptions } from '../src/sandbox/gate/docker/container.js';
import { DockerSandbox } from '../src/sandbox/gate/docker/docker-sandbox.js';
import type { Sandbox, SandboxRunSpec } from '../src/sandbox/sandbox.js';
import { WarmPool } from '../src/sandbox/warm/pool.js';
import { prepareWorkDir } from '../src/sandbox/gate/work-dir.js';
import { removeTree } from '../src/sandbox/process/remove-tree.js';
import type { BenchContext, BenchResult } from './lib/bench-module.js';
import { IMAGE, makeBenchRoot, TEST_COMMAND, writeSeed } from './lib/bench-world.js';
import { loadNow } from './lib/machine.js';
import { cell, summarize } from './lib/stats.js';

const execFileAsync = promisify(execFile);
const LIMITS = { cpus: 1, memoryMb: 512, pids: 128 };
const CONCURRENT = 6;

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const reps = ctx.quick ? 3 : 12;
  const root = await makeBenchRoot('warm');
  const seed = join(root.dir, 'seed');
  await writeSeed(seed, 1);
  let next = 0;
  /** A gate's work dir: a fresh copy of the bench world's tree, its test/ read-only, as runStep gives it. */
  const spec = async (command: string): Promise<SandboxRunSpec> => {
    const workDir = join(root.dir, `gate-${next++}`);
    await cp(seed, workDir, { recursive: true });
    return { command, workDir, timeoutMs: 60_000, limits: LIMITS, readOnlyPaths: ['test', 'world.yaml'], env: { CI: 'true' } };
  };
  const fresh = new DockerSandbox({ image: IMAGE });
  const pool = new WarmPool({ perKey: 2 });
  const warm = new DockerSandbox({ image: IMAGE, warm: pool });
  const big = new WarmPool({ perKey: CONCURRENT, max: CONCURRENT });
  const warmBig = new DockerSandbox({ image: IMAGE, warm: big });
  const loads: number[] = [];
  try {
    await fresh.check();
    const timeOne = async (sandbox: Sandbox, command: string): Promise<number> => {
      const s = await spec(command);
      const t0 = performance.now();
      await sandbox.run(s);
      const took = performance.now() - t0;
      await removeTree(s.workDir);
      return took;
    };
    // Untimed: the first run of each key misses and starts the refill.
    await timeOne(warm, 'true');
    await timeOne(warmBig, 'true');
    const rows: string[][] = [];
    for (const command of ['true', TEST_COMMAND]) {
      const times = { fresh: [] as number[], warm: [] as number[] };
      for (let i = 0; i < reps; i++) {
        await whenReady(pool, 2);
        for (const which of i % 2 === 0 ? (['fresh', 'warm'] as const) : (['warm', 'fresh'] as const)) {
          times[which].push(await timeOne(which === 'fresh' ? fresh : warm, command));
        }
        loads.push(loadNow());
      }
      const label = command === 'true' ? 'no-op gate run (`true`)' : `tiny test run (\`${command}\`)`;
      const saved = summarize(times.fresh).median - summarize(times.warm).median;
      rows.push([label, cell(summarize(times.fresh)), cell(summarize(times.warm)), String(Math.round(saved))]);
    }

    // Six gates at once, each timed from its start to its result; the pool full before each batch.
    const batch = async (sandbox: Sandbox): Promise<{ each: number[]; wall: number }> => {
      const specs = await Promise.all(Array.from({ length: CONCURRENT }, () => spec(TEST_COMMAND)));
      const t0 = performance.now();
      const each = await Promise.all(
        specs.map(async (s) => {
          const a = performance.now();
          await sandbox.run(s);
          return performance.now() - a;
        }),
      );
      const wall = performance.now() - t0;
      await Promise.all(specs.map((s) => removeTree(s.workDir)));
      return { each, wall };
    };
    const batches = ctx.quick ? 1 : 3;
    const conc = {
      fresh: { each: [] as number[], wall: [] as number[] },
      pool2: { each: [] as number[], wall: [] as number[] },
      pool6: { each: [] as number[], wall: [] as number[] },
    };
    for (let b = 0; b < batches; b++) {
      for (const [name, sandbox, p, n] of [
        ['fresh', fresh, null, 0],
        ['pool2', warm, pool, 2],
        ['pool6', warmBig, big, CONCURRENT],
      ] as const) {
        if (p) await whenReady(p, n);
        const got = await batch(sandbox);
        conc[name].each.push(...got.each);
        conc[name].wall.push(got.wall);
        loads.push(loadNow());
      }
    }
    for (const [name, label] of [
      ['fresh', 'fresh containers'],
      ['pool2', 'pool starting at 2 per key (the default)'],
      ['pool6', `pool of ${CONCURRENT} per key`],
    ] as const) {
      rows.push([
        `${CONCURRENT} tiny test runs at once, ${label}: each | whole batch`,
        cell(summarize(conc[name].each)),
        cell(summarize(conc[name].wall)),
        '-',
      ]);
    }

    // bubblewrap: its setup against the same command on the bare host.
    const bwrap = new BwrapSandbox();
    const host: number[] = [];
    const inBwrap: number[] = [];
    for (let i = 0; i < reps; i++) {
      const s = await spec('true');
      let t0 = performance.now();
      await execFileAsync('sh', ['-c', 'true'], { cwd: s.workDir });
      host.push(performance.now() - t0);
      t0 = performance.now();
      await bwrap.run(s);
      inBwrap.push(performance.now() - t0);
      await removeTree(s.workDir);
    }
    rows.push(['bubblewrap: `true` on the host | in bwrap (gate settings)', cell(summarize(host)), cell(summarize(inBwrap)), '-']);
    // Of that: bwrap's own namespaces over the host's root (no root of its own to build), and the harness around it.
    const bare: number[] = [];
    const drop: number[] = [];
    for (let i = 0; i < reps; i++) {
      let t0 = performance.now();
      await execFileAsync('bwrap', [
        '--ro-bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--tmpfs',
        '/tmp',
        '--unshare-net',
        '--unshare-pid',
        '--unshare-ipc',
        '--unshare-uts',
        '--die-with-parent',
        '--new-session',
        'true',
      ]);
      bare.push(performance.now() - t0);
      t0 = performance.now();
      await execFileAsync('prlimit', ['--data=536870912', '--', 'setpriv', '--reuid=1000', '--regid=1000', '--clear-groups', '--no-new-privs', 'true']);
      drop.push(performance.now() - t0);
    }
    rows.push(['  of which: prlimit + setpriv alone | bwrap alone (namespaces, /dev, /proc, /tmp)', cell(summarize(drop)), cell(summarize(bare)), '-']);

    // A fresh container's life, call by call, with a gate's settings (`true`): where the time goes without the pool.
    const phases = await freshPhases(reps, await spec('true'));
    rows.push(['fresh container, by call: create | start', cell(summarize(phases.create)), cell(summarize(phases.start)), '-']);
    rows.push(['fresh container, by call: wait (exit) | remove', cell(summarize(phases.wait)), cell(summarize(phases.remove)), '-']);

    const hits = pool.stats.hits + big.stats.hits;
    const misses = pool.stats.misses + big.stats.misses;
    const reused = pool.stats.reused + big.stats.reused;
    const made = pool.stats.made + big.stats.made;
    return {
      title: `Gate sandbox: fresh container against warm pool, ms: median (p90, min–max) of ${reps} runs each`,
      table: formatTable(['run', 'fresh container | host', 'warm pool | bwrap', 'saved (median)'], rows),
      notes: [
        "Every run is one sandbox.run as a gate step makes it: a copy of the bench world's tree, test/ and world.yaml read-only, no network, the bench limits. Fresh and pooled runs take turns, and the pool is given time to refill between runs (as between a gate's steps or episodes).",
        "A pooled container was created and started before the run, with the gate's settings (image id, limits, user, environment); the run mounts its tree into it, sends the command and waits; the host then takes away everything the run left (src/sandbox/warm/reset.ts) and the container serves the next run.",
        `At ${CONCURRENT} at once, a pool that starts with 2 per key serves 2 runs of its first batch and the other ${CONCURRENT - 2} make fresh containers; runs that overlap beyond the pool raise what it keeps ready (up to its max), so later batches find more. It refills only while none of its runs is under way, so its containers are made between batches, not taken from the cores of the runs.`,
        `Pool: ${hits} hits (${reused} of them in a container that had served a run before), ${misses} misses, ${made} containers made; 1-minute load average during the runs: ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}.`,
      ],
    };
  } finally {
    await Promise.all([pool.drain(), big.drain()]);
    await root.cleanup();
  }
}

/** Times each Engine API call of a fresh gate container's life (create, start, wait, remove), `reps` times. */
async function freshPhases(reps: number, spec: SandboxRunSpec): Promise<Record<'create' | 'start' | 'wait' | 'remove', number[]>> {
  const docker = new Docker();
  const { path, user } = await prepareWorkDir(spec.workDir);
  const options = containerOptions(spec, IMAGE, path, user);
  const out = { create: [] as number[], start: [] as number[], wait: [] as number[], remove: [] as number[] };
  for (let i = 0; i < reps; i++) {
    let t0 = performance.now();
    const container = await docker.createContainer({ ...options, AttachStdout: false, AttachStderr: false });
    out.create.push(performance.now() - t0);
    try {
      t0 = performance.now();
      await container.start();
      out.start.push(performance.now() - t0);
      t0 = performance.now();
      await container.wait();
      out.wait.push(performance.now() - t0);
    } finally {
      t0 = performance.now();
      await container.remove({ force: true });
      out.remove.push(performance.now() - t0);
    }
  }
  await removeTree(spec.workDir);
  return out;
}

/** Waits (at most 60 s) until the pool holds `count` ready containers and makes none. */
async function whenReady(pool: WarmPool, count: number): Promise<void> {
  for (let i = 0; i < 1200 && (pool.readyCount < count || pool.filling); i++) await new Promise((r) => setTimeout(r, 50));
}
