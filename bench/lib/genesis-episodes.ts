import type { Sandbox } from '../../src/sandbox/sandbox.js';
import { runEmbedded } from '../../src/compose/embedded-run.js';
import { GitLedger } from '../../src/ledger/git-ledger.js';
import type { WorldRepo } from '../../src/world/world-repo.js';
import type { EpisodeTiming } from './episode-timing.js';
import { traceGit, type GitStart } from './git-trace.js';

/** An episode's timing and, when traced, the git processes started from its start on. */
export interface GenesisEpisode extends EpisodeTiming {
  gitProcesses?: GitStart[];
}

/**
 * Runs `count` episodes of a world through `runWorld` (the in-process queue, parallelism 1 from
 * the bench manifest, so phases never overlap) and reads their phases back from the ledger.
 * The run starts exactly `count` episodes (RunOptions.maxEpisodes) and ends when they have landed,
 * which lets a benchmark interleave Genesis episodes with the naive loop's, so background load on
 * the machine hits every column alike. (Stopping it through its abort signal at the count-th
 * episode's end no longer works: the pipeline refills a slot as soon as a change passes its own
 * gate, so the next episode has started by then.) Throws unless every episode was accepted:
 * timing failures would measure something else.
 *
 * With `trace`, git's trace2 log is on during the run (slower: count with it, don't time) and
 * each episode gets the git processes started from its startedAt until the next episode's (or
 * the run's end: runWorld starts no git process after its last episode's final ledger write).
 */
export async function runGenesisEpisodes(world: WorldRepo, sandbox: Sandbox, count: number, opts: { trace?: boolean } = {}): Promise<GenesisEpisode[]> {
  const ledger = new GitLedger(world.path);
  const before = new Set((await ledger.readAll()).map((r) => r.id));
  const run = () => runEmbedded({ world, sandbox, maxEpisodes: count });
  const started = performance.now();
  const { result: summary, starts } = opts.trace ? await traceGit(run) : { result: await run(), starts: undefined };
  const wall = (performance.now() - started) / count;
  const records = (await ledger.readAll()).filter((r) => !before.has(r.id));
  const bad = records.filter((r) => r.outcome !== 'accepted');
  if (bad.length > 0 || records.length !== count) {
    const first = bad[0];
    const why = first ? `${first.task} ${first.outcome} ${first.reason}: ${first.message}` : `${records.length} of ${count} ran`;
    throw new Error(`benchmark episodes did not all land (stop: ${summary.stop.kind}): ${why}`);
  }
  return records.map((r, i) => {
    const p = r.phases;
    // Disjoint: the workspace with its dependency link, the gate with a second gate on the base, integrate from the passed gate on.
    const named = {
      prepare: p.prepare ?? 0,
      workspace: (p.workspace ?? 0) + (p.deps ?? 0),
      agent: p.agent ?? 0,
      collect: p.collect ?? 0,
      gate: (p.gate ?? 0) + (p['gate-on-base'] ?? 0),
      integrate: p.integrate ?? 0,
    };
    const startedAt = Date.parse(r.startedAt);
    const total = Date.parse(r.endedAt ?? r.startedAt) - startedAt;
    const sum = Object.values(named).reduce((a, b) => a + b, 0);
    const sandboxMs = (r.gate?.steps ?? []).reduce((a, step) => a + step.durationMs, 0);
    const next = records[i + 1] ? Date.parse(records[i + 1]!.startedAt) : Infinity;
    const gitProcesses = starts?.filter((s) => s.time >= startedAt && s.time < next);
    return { ...named, other: total - sum, total, sandbox: sandboxMs, wall, ...(gitProcesses ? { gitProcesses } : {}) };
  });
}
