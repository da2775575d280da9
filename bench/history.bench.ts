/**
 * How workspace creation and the whole episode grow with the world's history: a world with 10
 * and one with 10,000 (1,000 when quick) accepted commits (built with git fast-import), Genesis's shared clone
 * against the naive loop's full clone, and the accepted-history read every episode makes.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { formatTable } from '../src/cli/output.js';
import { createWorkspace, removeWorkspace } from '../src/episode/workspace.js';
import { createSandbox } from '../src/sandbox/create-sandbox.js';
import { readAcceptedHistory, readDoneTasks } from '../src/world/history/accepted-history.js';
import { HistoryIndex, historyIndexFile } from '../src/world/history/history-index.js';
import { writeCommit } from '../src/git/object-writer.js';
import type { WorldRepo } from '../src/world/world-repo.js';
import type { BenchContext, BenchResult } from './lib/bench-module.js';
import { createBenchWorld, IMAGE, makeBenchRoot } from './lib/bench-world.js';
import type { EpisodeTiming } from './lib/episode-timing.js';
import { runGenesisEpisodes } from './lib/genesis-episodes.js';
import { diskKb, gitCli } from './lib/git-cli.js';
import { runNaiveLoop } from './lib/naive-loop.js';
import { cell, summarize } from './lib/stats.js';
import { appendCommits } from './lib/synthetic-history.js';

/** History lengths compared; a quick run builds a tenth of the long one, the same code paths. */
const sizes = (quick: boolean) => [10, quick ? 1_000 : 10_000];

interface SizedWorld {
  commits: number;
  world: WorldRepo;
  /** A copy for the naive loop, which pushes to it. */
  naive: string;
  samples: Map<string, number[]>;
}

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const reps = ctx.quick ? 2 : 10;
  const episodes = ctx.quick ? 1 : 6;
  // A full run discards one warm-up round of episodes (first use of each world and sandbox).
  const warmup = ctx.quick ? 0 : 1;
  const root = await makeBenchRoot('history');
  try {
    const docker = await createSandbox('docker', { image: IMAGE });
    const worlds: SizedWorld[] = [];
    for (const commits of sizes(ctx.quick)) {
      const world = await createBenchWorld(root.dir, `h${commits}`, episodes + warmup, docker);
      const t0 = performance.now();
      await appendCommits(world.path, 'main', commits - 1);
      const built = performance.now() - t0;
      const naive = join(root.dir, `h${commits}-naive.world`);
      await gitCli(['clone', '--quiet', '--mirror', world.path, naive], root.dir);
      worlds.push({ commits, world, naive, samples: new Map([['build', [built]]]) });
    }
    const add = (w: SizedWorld, key: string, ms: number) => w.samples.set(key, [...(w.samples.get(key) ?? []), ms]);
    const time = async (w: SizedWorld, key: string, work: () => Promise<unknown>) => {
      const t0 = performance.now();
      await work();
      add(w, key, performance.now() - t0);
    };

    // Sizes take turns within each repetition, so background load falls on both alike.
    for (let rep = 0; rep < reps; rep++) {
      for (const w of worlds) {
        const head = await w.world.head('main');
        const id = `bench-ws-${rep}`;
        let ws: Awaited<ReturnType<typeof createWorkspace>> | undefined;
        await time(w, 'shared', async () => (ws = await createWorkspace(w.world, id, head)));
        if (ws) await removeWorkspace(ws);
        const dest = join(root.dir, `clone-${w.commits}-${rep}`);
        await time(w, 'full', () => gitCli(['clone', '--quiet', '--no-local', w.world.path, dest], root.dir));
        await rm(dest, { recursive: true, force: true });
        await time(w, 'local', () => gitCli(['clone', '--quiet', w.world.path, dest], root.dir));
        await rm(dest, { recursive: true, force: true });
        await time(w, 'history', () => readAcceptedHistory(w.world.path, 'main'));
        // What an episode pays now: done tasks at a head one commit past the last one the index saw.
        const next = await writeCommit(w.world.path, {
          tree: await w.world.treeOf(head),
          parents: [head],
          message: `t${rep}: bench\n\nGenesis-Task: bench-${rep}\n`,
        });
        await time(w, 'index-step', () => readDoneTasks(w.world.path, 'main', next));
        // A new process: the index read back from its file, then the same question.
        const file = await historyIndexFile(w.world.path);
        await time(w, 'index-load', async () => {
          const index = new HistoryIndex((rev) => readAcceptedHistory(w.world.path, '', rev), file);
          await index.load();
          return index.doneAt(next);
        });
      }
    }
    // Whole episodes, one per harness and size per round, the harnesses' order alternating.
    for (let round = 0; round < episodes + warmup; round++) {
      for (const w of worlds) {
        const genesis = () => runGenesisEpisodes(w.world, docker, 1);
        const naive = () => runNaiveLoop({ world: w.naive, episodes: 1, first: round + 1, workdir: join(root.dir, 'naive-clones') });
        let g: EpisodeTiming[];
        let n: EpisodeTiming[];
        if (round % 2 === 0) {
          g = await genesis();
          n = await naive();
        } else {
          n = await naive();
          g = await genesis();
        }
        if (round < warmup) continue;
        add(w, 'genesis-episode', g[0]!.total);
        add(w, 'genesis-workspace', g[0]!.workspace);
        add(w, 'naive-episode', n[0]!.total);
        add(w, 'naive-workspace', n[0]!.workspace);
      }
    }

    const diskUse = await Promise.all(worlds.map((w) => diskKb(join(w.world.path, 'objects'))));
    const row = (label: string, key: string) => [label, ...worlds.map((w) => cell(summarize(w.samples.get(key) ?? [])))];
    const table = formatTable(
      ['ms: median (p90, min–max)', ...worlds.map((w, i) => `${w.commits.toLocaleString('en')} commits (${(diskUse[i]! / 1024).toFixed(1)} MiB of objects)`)],
      [
        row('workspace: genesis createWorkspace (clone --shared + checkout)', 'shared'),
        row('workspace: git clone --no-local (naive, as from a remote)', 'full'),
        row('workspace: git clone of a local path (hardlinked objects)', 'local'),
        row('readAcceptedHistory: the whole history (what an episode read twice before the index)', 'history'),
        row('done tasks at a new head from the history index (what an episode reads now)', 'index-step'),
        row('the history index read back from its file by a new process, then asked', 'index-load'),
        row('episode: genesis + docker, workspace phase', 'genesis-workspace'),
        row('episode: genesis + docker, total', 'genesis-episode'),
        row('episode: naive loop, git clone phase', 'naive-workspace'),
        row('episode: naive loop, total', 'naive-episode'),
      ],
    );
    const median = (w: SizedWorld, key: string) => summarize(w.samples.get(key) ?? []).median;
    const [short, long] = [worlds[0]!, worlds.at(-1)!];
    const growth = median(long, 'genesis-episode') / median(short, 'genesis-episode');
    return {
      title: `Workspace and episode time against history size (${reps} repetitions, ${episodes} episodes per cell)`,
      table,
      notes: [
        `The ${worlds.at(-1)!.commits.toLocaleString('en')}-commit history took ${(worlds.at(-1)!.samples.get('build')![0]! / 1000).toFixed(1)} s to build with one git fast-import; the first writes 100 files of 1 KiB of random text, each later one rewrites one of them, all carry the Genesis trailers (so both worlds check out the same tree).`,
        'Each episode is the no-op agent with the same gate as the overhead table; the naive loop pushes to a mirror of the same world.',
        `A genesis + docker episode at ${long.commits.toLocaleString('en')} commits takes ${growth.toFixed(2)}× its time at ${short.commits} (target: at most 1.10×); the naive loop ${(median(long, 'naive-episode') / median(short, 'naive-episode')).toFixed(2)}×.`,
      ],
    };
  } finally {
    await root.cleanup();
  }
}
