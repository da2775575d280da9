/**
 * Per-episode overhead by phase for a no-op agent: Genesis with the docker and the bwrap sandbox
 * (real episodes through runWorld, phases read back from the ledger), the naive loop of
 * naive-loop.sh, and the bare host, all in the same run. The columns take turns episode by
 * episode (in a rotating order), so load from anything else on the machine falls on all alike.
 */
import { join } from 'node:path';
import { formatTable } from '../src/cli/output.js';
import { createSandbox } from '../src/sandbox/create-sandbox.js';
import { DockerSandbox } from '../src/sandbox/docker-sandbox.js';
import { sharedWarmPool } from '../src/sandbox/warm-pool.js';
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
    // One more task for the untimed, traced round that counts git processes.
    const tasks = episodes + warmup + 1;
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

    const rows = PHASES.map((phase) => [
      PHASE_LABELS[phase],
      ...timings.map((t) => cell(summarize(column(t, phase)))),
      phase === 'agent' ? cell(summarize(floor.agent)) : phase === 'gate' || phase === 'sandbox' ? cell(summarize(floor.test)) : '-',
    ]);
    rows.push(['git processes per episode (GIT_TRACE2, one episode)', ...traced.map((t) => String(t.length)), '0']);
    const med = (k: number, phase: (typeof PHASES)[number]) => summarize(column(timings[k]!, phase)).median;
    const floorTest = summarize(floor.test).median;
    const fromFloor = PHASES.filter((p) => p !== 'sandbox' && p !== 'total')
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
        `git processes of one genesis + docker episode: ${tally(traced[0]!)}; of the naive loop: ${tally(traced[2]!)}. Git run through simple-git is not counted: simple-git strips GIT_* variables, the trace's too. Not counted either: the world's long-lived git processes (one cat-file --batch, one --batch-check, one update-ref --stdin per world and Genesis process), started once by an earlier episode and used by every later one.`,
        pool
          ? `genesis + docker takes its gate containers from the warm pool (src/sandbox/warm-pool.ts: created and started ahead, one run each; ${pool.hits} runs took one, ${pool.misses} made their own; ${pool.seenExits} saw their command end without waiting for the daemon's report); "no warm pool" makes a fresh container for every run, as before the pool. \`npm run bench -- --only warm\` times the sandbox run alone.`
          : 'No warm pool here (Genesis not root, or GENESIS_WARM_SANDBOXES=0): both docker columns make a fresh container for every run.',
        `genesis + docker per episode: ${(med(0, 'total') / med(2, 'total')).toFixed(2)}× the naive loop's time (the issue's target: at most 0.67×); genesis + bwrap: ${(med(1, 'total') / med(2, 'total')).toFixed(2)}×; genesis + docker without the warm pool: ${(med(3, 'total') / med(2, 'total')).toFixed(2)}× (the pool is issue 16 item 1, the bookkeeping items 2 and 3).`,
        `The floor is the test alone on the host, ${Math.round(floorTest)} ms (median). A genesis + docker episode is ${Math.round(med(0, 'total') - floorTest)} ms above it: ${fromFloor} (medians, ms; the gate's own sandboxed run is ${Math.round(med(0, 'sandbox'))}, ${Math.round(med(0, 'sandbox') - floorTest)} above the floor).`,
      ],
    };
  } finally {
    await sharedWarmPool()?.drain();
    await root.cleanup();
  }
}
