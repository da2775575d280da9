/**
 * Per-episode overhead by phase for a no-op agent: Genesis with the docker and the bwrap sandbox
 * (real episodes through runWorld, phases read back from the ledger), the naive loop of
 * naive-loop.sh, and the bare host, all in the same run. The columns take turns episode by
 * episode (in a rotating order), so load from anything else on the machine falls on all alike.
 */
import { join } from 'node:path';
import { formatTable } from '../src/cli/output.js';
import { createSandbox } from '../src/sandbox/create-sandbox.js';
import { DockerSandbox } from '../src/sandbox/gate/docker/docker-sandbox.js';
import { sharedWarmPool } from '../src/sandbox/warm/pool.js';
import type { BenchContext, BenchResult } from './lib/bench-module.js';
import { createBenchWorld, IMAGE, makeBenchRoot } from './lib/bench-world.js';
import { column, OTHER_COVERS, PHASE_LABELS, PHASES, type EpisodeTiming } from './lib/episode-timing.js';
import { runGenesisEpisodes } from './lib/genesis-episodes.js';
import { tally, traceGit, type GitStart } from './lib/git-trace.js';
import { measureHostFloor } from './lib/host-floor.js';
import { runNaiveLoop } from './lib/naive-loop.js';
import { cell, summarize } from './lib/stats.js';

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const episodes = ctx.quick ? 3 : 20;
  // A full run discards one warm-up round (first use of each world's files and of the sandbox).
  const warmup = ctx.quick ? 0 : 1;
  const root = await makeBenchRoot('overhead');
  try {
    const docker = await createSandbox('docker', { image: IMAGE });
    const bwrap = await createSandbox('bwrap', { image: IMAGE });
    // Back to back: a run of `streak` episodes in one call, twice per column.
    const streak = ctx.quick ? 3 : 16;
    // One more task for the untimed, traced round that counts git processes.
    const tasks = episodes + warmup + 1 + 2 * streak;
    const dockerWorld = await createBenchWorld(root.dir, 'docker', tasks, docker);
    const bwrapWorld = await createBenchWorld(root.dir, 'bwrap', tasks, bwrap);
    const naiveWorld = await createBenchWorld(root.dir, 'naive', tasks, docker);
    // The same gates in fresh containers, without the warm pool createSandbox gives: what the pool saves.
    const dockerFresh = new DockerSandbox({ image: IMAGE });
    const freshWorld = await createBenchWorld(root.dir, 'docker-fresh', tasks, dockerFresh);
    const seed = join(root.dir, 'docker-seed');

    const names = ['genesis + docker', 'genesis + bwrap', 'naive loop (docker run)', 'genesis + docker, no warm pool'];
    const runners: Array<(round: number) => Promise<EpisodeTiming[]>> = [
      () => runGenesisEpisodes(dockerWorld, docker, 1),
      () => runGenesisEpisodes(bwrapWorld, bwrap, 1),
      (round) => runNaiveLoop({ world: naiveWorld.path, episodes: 1, first: round + 1, workdir: join(root.dir, 'naive-clones') }),
      () => runGenesisEpisodes(freshWorld, dockerFresh, 1),
    ];
    const timings: EpisodeTiming[][] = names.map(() => []);
    const floor = { agent: [] as number[], test: [] as number[] };
    for (let round = 0; round < episodes + warmup; round++) {
      for (let k = 0; k < runners.length; k++) {
        const which = (round + k) % runners.length;
        const got = await runners[which]!(round);
        if (round >= warmup) timings[which]!.push(...got);
      }
      const host = await measureHostFloor(seed);
      if (round >= warmup) {
        floor.agent.push(host.agent);
        floor.test.push(host.test);
      }
    }
    // One more episode each with git's trace2 log on, untimed: git processes per episode.
    const traced: GitStart[][] = [
      (await runGenesisEpisodes(dockerWorld, docker, 1, { trace: true }))[0]?.gitProcesses ?? [],
      (await runGenesisEpisodes(bwrapWorld, bwrap, 1, { trace: true }))[0]?.gitProcesses ?? [],
      (await traceGit(() => runNaiveLoop({ world: naiveWorld.path, episodes: 1, first: tasks, workdir: join(root.dir, 'naive-clones') }))).starts,
      (await runGenesisEpisodes(freshWorld, dockerFresh, 1, { trace: true }))[0]?.gitProcesses ?? [],
    ];
    const pool = sharedWarmPool()?.stats;
    const backToBack = await runBackToBack(streak, episodes + warmup + 2, [
      (first) => runGenesisEpisodes(dockerWorld, docker, streak).then(() => first),
      (first) => runGenesisEpisodes(bwrapWorld, bwrap, streak).then(() => first),
      (first) => runNaiveLoop({ world: naiveWorld.path, episodes: streak, first, workdir: join(root.dir, 'naive-clones') }).then(() => first),
      (first) => runGenesisEpisodes(freshWorld, dockerFresh, streak).then(() => first),
    ]);

    const rows = PHASES.map((phase) => [
      PHASE_LABELS[phase],
      ...timings.map((t) => cell(summarize(column(t, phase)))),
      phase === 'agent' ? cell(summarize(floor.agent)) : phase === 'gate' || phase === 'sandbox' ? cell(summarize(floor.test)) : '-',
    ]);
    rows.push([`back to back: wall clock per episode, ${streak} in one run (2 runs)`, ...backToBack.map((ms) => cell(summarize(ms))), '-']);
    rows.push(['git processes per episode (GIT_TRACE2, one episode)', ...traced.map((t) => String(t.length)), '0']);
    const med = (k: number, phase: (typeof PHASES)[number]) => summarize(column(timings[k]!, phase)).median;
    const floorTest = summarize(floor.test).median;
    const fromFloor = PHASES.filter((p) => p !== 'sandbox' && p !== 'total' && p !== 'wall')
      .map((p) => `${p} ${Math.round(med(0, p))}`)
      .join(', ');
    return {
      title: `Per-episode overhead by phase, no-op agent, ms: median (p90, min–max) of ${episodes} episodes each`,
      table: formatTable(['phase', ...names, 'host floor (no harness)'], rows),
      notes: [
        'Every episode is accepted: a one-line change to its own notes file, gated by `node --test test/` (one tiny test) in a fresh sandbox; parallelism 1. The columns take turns episode by episode (a full run discards one warm-up round first).',
        `Genesis figures are the phases each episode recorded in the ledger; total is the record's endedAt − startedAt. The phases are disjoint and add up to the total: workspace includes linking the dependency set, gate includes a second gate on the base, integrate runs from the moment the integration stage hears the own gate passed to the landed record (the reservation before the gate is not counted in it). Other: ${OTHER_COVERS}.`,
        'The naive loop (bench/naive-loop.sh) does per episode: git clone --no-local (as from a remote), the agent, git commit, docker run --rm --network none with the same image and host binds, git push, rm -rf.',
        'host floor: the agent command and the test command run directly on the host; a column minus the floor is what that harness adds.',
        `git processes of one genesis + docker episode: ${tally(traced[0]!)}; of the naive loop: ${tally(traced[2]!)}. Not counted either: the world's long-lived git processes (one cat-file --batch, one --batch-check, one update-ref --stdin per world and Genesis process), started once by an earlier episode and used by every later one.`,
        pool
          ? `genesis + docker takes its gate containers from the warm pool (src/sandbox/warm/pool.ts: created and started ahead, each serving gate after gate with everything the last one left taken away between them: its leftover processes killed before the verdict, in the gate's time, the rest of the reset after the verdict, in no phase; ${pool.hits} runs took one, ${pool.reused} of them one that had served a gate before, ${pool.misses} made their own; ${pool.made} containers made, ${pool.resetFailures} removed because a reset failed; ${pool.seenExits} runs saw their command end without waiting for the daemon's report); "no warm pool" makes a fresh container for every run, as before the pool. \`npm run bench -- --only warm\` times the sandbox run alone.`
          : 'No warm pool here (Genesis not root, or GENESIS_WARM_SANDBOXES=0): both docker columns make a fresh container for every run.',
        `Whole call per episode: each Genesis episode here is a run of its own (runWorld with maxEpisodes 1: its start takes the run lock, reads the ledger's summaries and the manifest; after the episode's end come its final ledger write and the run's end), timed from the call to its return; the naive loop's is bash naive-loop.sh from its spawn to its exit. By that clock genesis + docker took ${(med(0, 'wall') / med(2, 'wall')).toFixed(2)}× the naive loop's time, genesis + bwrap ${(med(1, 'wall') / med(2, 'wall')).toFixed(2)}×: what a run of one episode pays once beyond its episode.`,
        `Back to back: each column runs ${streak} episodes in one call (runWorld with maxEpisodes ${streak}; naive-loop.sh --episodes ${streak}), twice, the columns taking turns (in the second round in reverse order); the row is that call's wall clock over ${streak}, per run. Here what the pools and the pipeline do in the background (a used container reset or replaced, an agent namespace made, the last record written while the next episode runs) competes with the next episode for the machine, which it does not when the columns take turns episode by episode (the table's other rows). By this clock genesis + docker took ${(mean(backToBack[0]!) / mean(backToBack[2]!)).toFixed(2)}× the naive loop's time, genesis + bwrap ${(mean(backToBack[1]!) / mean(backToBack[2]!)).toFixed(2)}×, without the warm pool ${(mean(backToBack[3]!) / mean(backToBack[2]!)).toFixed(2)}×.`,
        `genesis + docker per episode: ${(med(0, 'total') / med(2, 'total')).toFixed(2)}× the naive loop's time (the issue's target: at most 0.67×); genesis + bwrap: ${(med(1, 'total') / med(2, 'total')).toFixed(2)}×; genesis + docker without the warm pool: ${(med(3, 'total') / med(2, 'total')).toFixed(2)}×.`,
        `The floor is the test alone on the host, ${Math.round(floorTest)} ms (median). A genesis + docker episode is ${Math.round(med(0, 'total') - floorTest)} ms above it: ${fromFloor} (medians, ms; the gate's own sandboxed run is ${Math.round(med(0, 'sandbox'))}, ${Math.round(med(0, 'sandbox') - floorTest)} above the floor).`,
      ],
    };
  } finally {
    await sharedWarmPool()?.drain();
    await root.cleanup();
  }
}

/**
 * Each runner runs `streak` episodes in one call from task `first` on; returns, per runner, the
 * call's wall clock over `streak` for each of two rounds (the second in reverse order).
 */
async function runBackToBack(streak: number, first: number, runners: Array<(first: number) => Promise<number>>): Promise<number[][]> {
  const perEpisode: number[][] = runners.map(() => []);
  const order = runners.map((_, k) => k);
  for (const [round, ks] of [order, [...order].reverse()].entries()) {
    for (const k of ks) {
      const started = performance.now();
      await runners[k]!(first + round * streak);
      perEpisode[k]!.push((performance.now() - started) / streak);
    }
  }
  return perEpisode;
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}
