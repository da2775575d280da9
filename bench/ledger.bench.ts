/**
 * What a long ledger costs: reading, writing and cloning with 10 and with 10,000 (1,000 when
 * quick) episode records (refs built with git fast-import in the layout src/ledger/ledger.ts
 * writes), and the whole episode, which reads every record once to find earlier attempts at its
 * task.
 */
import { formatTable } from '../src/cli/output.js';
import { newEpisodeId } from '../src/episode/episode-job.js';
import { createWorkspace, removeWorkspace } from '../src/episode/workspace.js';
import { createSandbox } from '../src/sandbox/create-sandbox.js';
import type { Ledger } from '../src/ledger/ledger.js';
import { GitLedger } from '../src/ledger/git-ledger.js';
import type { WorldRepo } from '../src/world/world-repo.js';
import type { BenchContext, BenchResult } from './lib/bench-module.js';
import { createBenchWorld, IMAGE, makeBenchRoot } from './lib/bench-world.js';
import { runGenesisEpisodes } from './lib/genesis-episodes.js';
import { gitCli } from './lib/git-cli.js';
import { cell, summarize } from './lib/stats.js';
import { addLedgerRecords } from './lib/synthetic-history.js';

/** Ledger lengths compared; a quick run builds a tenth of the long one, the same code paths. */
const sizes = (quick: boolean) => [10, quick ? 1_000 : 10_000];

interface SizedLedger {
  records: number;
  world: WorldRepo;
  ledger: Ledger;
  samples: Map<string, number[]>;
}

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const reps = ctx.quick ? 2 : 10;
  const episodes = ctx.quick ? 1 : 6;
  // A full run discards one warm-up round of episodes (first use of each world and sandbox).
  const warmup = ctx.quick ? 0 : 1;
  const root = await makeBenchRoot('ledger');
  try {
    const docker = await createSandbox('docker', { image: IMAGE });
    const ledgers: SizedLedger[] = [];
    for (const records of sizes(ctx.quick)) {
      const world = await createBenchWorld(root.dir, `l${records}`, episodes + warmup, docker);
      const t0 = performance.now();
      await addLedgerRecords(world.path, records, await world.head('main'));
      ledgers.push({ records, world, ledger: new GitLedger(world.path), samples: new Map([['build', [performance.now() - t0]]]) });
    }
    const time = async (l: SizedLedger, key: string, work: () => Promise<unknown>) => {
      const t0 = performance.now();
      await work();
      l.samples.set(key, [...(l.samples.get(key) ?? []), performance.now() - t0]);
    };

    const template = (await ledgers[0]!.ledger.readAll())[0]!;
    for (let rep = 0; rep < reps; rep++) {
      for (const l of ledgers) {
        let all: Awaited<ReturnType<Ledger['readAll']>> = [];
        await time(l, 'readAll', async () => (all = await l.ledger.readAll()));
        if (all.length < l.records) throw new Error(`readAll returned ${all.length} of ${l.records} records`);
        // What a run's start reads now: the summary index (built by the first read, then the records written since).
        await time(l, rep === 0 ? 'summariesFirst' : 'summaries', () => l.ledger.readSummaries());
        const some = all[Math.floor(all.length / 2)]!;
        await time(l, 'read', () => l.ledger.read(some.id));
        // A new id each time, as at an episode's start: the ledger grows by one ref per write.
        await time(l, 'write', () => l.ledger.write({ ...template, id: newEpisodeId(), candidate: null, commit: null }));
        const head = await l.world.head('main');
        let ws: Awaited<ReturnType<typeof createWorkspace>> | undefined;
        await time(l, 'workspace', async () => (ws = await createWorkspace(l.world, `bench-ws-${rep}`, head)));
        if (ws) await removeWorkspace(ws);
      }
    }
    // Genesis writes each episode's ref loose and nothing ever packs them; `git pack-refs` would.
    for (const l of ledgers) await gitCli(['pack-refs', '--all'], l.world.path);
    for (let rep = 0; rep < reps; rep++) {
      for (const l of ledgers) await time(l, 'readAllPacked', () => l.ledger.readAll());
    }
    for (let round = 0; round < episodes + warmup; round++) {
      for (const l of ledgers) {
        const [timing] = await runGenesisEpisodes(l.world, docker, 1);
        if (round < warmup) continue;
        l.samples.set('episode', [...(l.samples.get('episode') ?? []), timing!.total]);
        l.samples.set('other', [...(l.samples.get('other') ?? []), timing!.other]);
      }
    }

    const row = (label: string, key: string) => [label, ...ledgers.map((l) => cell(summarize(l.samples.get(key) ?? [])))];
    return {
      title: `Ledger size: reads, writes and episodes with ${ledgers.map((l) => l.records.toLocaleString('en')).join(' and ')} records (${reps} repetitions, ${episodes} episodes per cell)`,
      table: formatTable(
        ['ms: median (p90, min–max)', ...ledgers.map((l) => `${l.records.toLocaleString('en')} records`)],
        [
          row('Ledger.readAll(), loose refs (as Genesis leaves them)', 'readAll'),
          row('Ledger.readAll(), after git pack-refs --all', 'readAllPacked'),
          row("Ledger.readSummaries(), the index's first read (every record)", 'summariesFirst'),
          row('Ledger.readSummaries(), what a run reads at its start (one new record since)', 'summaries'),
          row('Ledger.read(id)', 'read'),
          row("Ledger.write(record), a new episode's first write", 'write'),
          row('createWorkspace (clone --shared + checkout)', 'workspace'),
          row('episode: genesis + docker, total', 'episode'),
          row('episode: genesis + docker, other (ledger reads/writes, bookkeeping)', 'other'),
        ],
      ),
      notes: [
        `${ledgers.at(-1)!.records.toLocaleString('en')} records took ${(ledgers.at(-1)!.samples.get('build')![0]! / 1000).toFixed(1)} s to write with one git fast-import (Ledger.write starts no git process: it writes the objects itself and moves the ref through the world's long-lived update-ref --stdin).`,
        "A run's start reads Ledger.readSummaries() (src/ledger/summary.ts: lists the refs and reads only the records whose ref moved since the index last looked) and the open records in full; Ledger.readAll() is what it read before. An episode reads only its own record and the earlier attempts the scheduler names, and the run's end only the records it closed. An episode run in process writes its record to git once, final (in the branch's ref transaction when it lands); its start and its gate's verdict are kept in the ledger's journal until then.",
      ],
    };
  } finally {
    await root.cleanup();
  }
}
