import { GenesisError } from '../../errors/genesis-error.js';
import type { RejectionReason } from '../../errors/rejection-reasons.js';
import type { WorldManifest } from '../../manifest/schema.js';
import { computeWilsonInterval } from '../../reliability/wilson.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import type { Calibration, MeasuredRate } from '../../world/calibration.js';
import { parseCommitMessage } from '../../world/commit-message.js';
import { TRAILERS } from '../../world/history/accepted-history.js';
import type { WorldRepo } from '../../world/world-repo.js';
import { localCalibrationGates, type CalibrationGates } from './calibration-gate.js';
import { gateMutants, type MutantOutcome } from './gate-mutants.js';
import { adviceFor, type RejectionCause } from './rejection-cause.js';
import { replayHistory, type HistoryCommit, type ReplayOutcome } from './replay-history.js';
import { openScratchWorld } from './scratch-world.js';

export interface CalibrateInput {
  world: WorldRepo;
  sandbox: (manifest: WorldManifest) => Promise<Sandbox>;
  /** Replay this many of the newest first-parent commits of the adopted history (0: none). */
  commits: number;
  /** Gate this many mutants of the head (0: none). */
  mutants: number;
  /** @default 1 */
  seed?: number;
  /** Gates at once. @default as many as the world verifies at once (integration.slots, else parallelism) */
  jobs?: number;
  /** Where gates run. @default this process (localCalibrationGates) */
  gates?: CalibrationGates;
  /** A line for a person on long work. */
  onProgress?: (line: string) => void;
}

export interface CauseGroup {
  cause: RejectionCause;
  count: number;
  /** What to change in world.yaml (or the project) about it. */
  advice: string;
  commits: Array<{ commit: string; subject: string; reason: RejectionReason; message: string }>;
}

export interface CalibrationReport {
  world: string;
  head: string;
  falseRejection:
    | (MeasuredRate & {
        causes: CauseGroup[];
        flaky: Array<{ commit: string; subject: string; steps: string[] }>;
        msPerCommit: number;
        replays: ReplayOutcome[];
      })
    | null;
  recall:
    | (MeasuredRate & {
        sites: number;
        executedLinesOnly: boolean;
        files: string[];
        /** Caught of gated, per language mutated, so a project of two languages shows each. */
        byLanguage: Array<{ language: MutantOutcome['language']; count: number; of: number }>;
        /** The time each mutant's gate had: from the suite's own time, under verify.timeoutSec. */
        timeoutSec: number;
        msPerMutant: number;
        survivors: MutantOutcome[];
      })
    | null;
  /** Why d was not measured although mutants were asked for (no source Genesis can mutate). */
  recallUnmeasured?: string;
  durationMs: number;
}

/**
 * `genesis calibrate`: measures the gate on the world's own project. The newest commits of the
 * adopted history, replayed through the gate, give f (each was a right change the project kept,
 * so each rejection is a false one), grouped by cause with what to change; mutants of the head
 * give d. Both go with the world (refs/genesis/calibration) for `genesis model` and `stats`. All
 * the work happens in a scratch world that borrows this one's objects and is removed afterwards.
 */
export async function calibrateWorld(input: CalibrateInput): Promise<CalibrationReport> {
  const started = Date.now();
  const { world } = input;
  const head = await world.head((await world.manifestAt('HEAD')).branch);
  // Read at the head itself, as world.yaml is below: the manifest every gate judges by, wherever it runs, is the head's.
  const manifest = await world.manifestAt(head);
  const manifestText = (await world.readFile(head, 'world.yaml')) ?? '';
  const history = input.commits > 0 ? await historyToReplay(world, input.commits) : [];
  const sandbox = await input.sandbox(manifest);
  await sandbox.check();
  const { scratch, dispose } = await openScratchWorld(world);
  const say = input.onProgress ?? (() => undefined);
  const gate = (input.gates ?? localCalibrationGates)({ scratch, worldHead: head, manifest, sandbox });
  // The world's own share of this machine: the gates a run of it would have going at once.
  const jobs = input.jobs ?? manifest.integration?.slots ?? manifest.parallelism;
  const measuredAt = new Date().toISOString();
  try {
    let falseRejection: CalibrationReport['falseRejection'] = null;
    if (history.length > 0) {
      say(`replaying ${history.length} commits of the project's history through the gate (${jobs} at once)`);
      const t0 = Date.now();
      const replays = await replayHistory({
        scratch,
        manifest,
        manifestText,
        commits: history,
        gate,
        jobs,
        onReplayed: (o, done, of) =>
          say(
            `  [${done}/${of}] ${o.commit.slice(0, 12)} ${o.subject}: ${o.accepted ? `accepted${o.flaky ? ' (flaky)' : ''}` : `rejected (${o.cause}: ${o.reason})`} ${(o.durationMs / 1000).toFixed(1)}s`,
          ),
      });
      const rejected = replays.filter((r) => !r.accepted);
      falseRejection = {
        ...rate(rejected.length, replays.length, measuredAt, head),
        causes: groupCauses(rejected, manifest),
        flaky: replays.flatMap((r) => (r.accepted && r.flaky ? [{ commit: r.commit, subject: r.subject, steps: r.flaky }] : [])),
        msPerCommit: Math.round((Date.now() - t0) / replays.length),
        replays,
      };
    }
    let recall: CalibrationReport['recall'] = null;
    let recallUnmeasured: string | undefined;
    if (input.mutants > 0) {
      say(`making ${input.mutants} mutants of the head's sources, on lines its tests execute, and gating each`);
      const t0 = Date.now();
      const result = await gateMutants({
        scratch,
        manifest,
        headTree: await world.treeOf(head),
        sandbox,
        gate,
        count: input.mutants,
        seed: input.seed ?? 1,
        jobs,
        onGated: (o, done, of) => say(`  [${done}/${of}] ${o.path}:${o.line} ${o.kind}: ${o.killed ? `caught (${o.reason})` : 'survived'}`),
      });
      const killed = result.outcomes.filter((o) => o.killed).length;
      if (result.outcomes.length === 0) {
        // A rate of 0 of 0 would read as "d = 0%": say why nothing was gated instead.
        recallUnmeasured = `no mutant could be made: ${
          result.headRanNoTest
            ? "the head's test step reported no test (its runner found none to run: a package published without its tests has none), so no mutant could be caught; measure d on a commit whose tests are in the tree"
            : result.files.length === 0
              ? 'the head has no JavaScript or Python source its tests run, nor any TypeScript source, outside tests and protected paths, and mutants are made of those only'
              : `none of the ${result.files.length} sources has an operator, constant, condition or statement to change`
        }`;
        say(recallUnmeasured);
      } else
        recall = {
          ...rate(killed, result.outcomes.length, measuredAt, head),
          sites: result.sites,
          executedLinesOnly: result.executedLinesOnly,
          files: result.files,
          byLanguage: countByLanguage(result.outcomes),
          timeoutSec: result.timeoutSec,
          msPerMutant: result.outcomes.length ? Math.round((Date.now() - t0) / result.outcomes.length) : 0,
          survivors: result.outcomes.filter((o) => !o.killed),
        };
    }
    const kept: Calibration = {};
    if (falseRejection && falseRejection.of > 0) kept.falseRejection = measured(falseRejection);
    if (recall && recall.of > 0) kept.recall = measured(recall);
    if (kept.falseRejection || kept.recall) await world.writeCalibration(kept);
    return { world: world.path, head, falseRejection, recall, ...(recallUnmeasured ? { recallUnmeasured } : {}), durationMs: Date.now() - started };
  } finally {
    await dispose();
  }
}

/**
 * The newest `count` first-parent commits of the repository's own history (each with a parent),
 * oldest first: from the adopted head down, the world.yaml commit Genesis added left out.
 */
async function historyToReplay(world: WorldRepo, count: number): Promise<HistoryCommit[]> {
  const adoption = await world.adoption();
  if (!adoption) {
    throw new GenesisError('calibrate-not-adopted', `${world.path} was not made with genesis init --adopt, so it has no project history to replay`, {
      hint: 'adopt the repository (genesis init --adopt <repo> --world <dir>), or measure recall alone with --commits 0 --mutants <n>',
    });
  }
  const [first] = await world.firstParentCommits(`${adoption.commit}^!`).catch(() => []);
  const top = first && parseCommitMessage(first.message).trailers.has(TRAILERS.adopted) ? `${adoption.commit}^` : adoption.commit;
  const raw = await world.firstParentCommits(top);
  return raw
    .filter((c) => c.parents.length > 0)
    .slice(0, count)
    .reverse()
    .map((c) => ({ commit: c.commit, parent: c.parents[0]!, subject: parseCommitMessage(c.message).subject }));
}

function countByLanguage(outcomes: readonly MutantOutcome[]): Array<{ language: MutantOutcome['language']; count: number; of: number }> {
  const counts = new Map<MutantOutcome['language'], { count: number; of: number }>();
  for (const o of outcomes) {
    const seen = counts.get(o.language) ?? { count: 0, of: 0 };
    counts.set(o.language, { count: seen.count + (o.killed ? 1 : 0), of: seen.of + 1 });
  }
  return [...counts.entries()].map(([language, c]) => ({ language, ...c })).sort((a, b) => a.language.localeCompare(b.language));
}

function rate(count: number, of: number, measuredAt: string, head: string): MeasuredRate {
  const interval = computeWilsonInterval(count, of);
  return { rate: of === 0 ? 0 : count / of, low: interval.low, high: interval.high, count, of, measuredAt, head };
}

function measured(r: MeasuredRate): MeasuredRate {
  return { rate: r.rate, low: r.low, high: r.high, count: r.count, of: r.of, measuredAt: r.measuredAt, head: r.head };
}

function groupCauses(rejected: readonly ReplayOutcome[], manifest: WorldManifest): CauseGroup[] {
  const groups = new Map<RejectionCause, ReplayOutcome[]>();
  for (const r of rejected) groups.set(r.cause!, [...(groups.get(r.cause!) ?? []), r]);
  return [...groups.entries()]
    .map(([cause, list]) => ({
      cause,
      count: list.length,
      advice: adviceFor(
        cause,
        manifest,
        list.map((r) => r.reason!),
      ),
      commits: list.map((r) => ({ commit: r.commit, subject: r.subject, reason: r.reason!, message: r.message ?? '' })),
    }))
    .sort((a, b) => b.count - a.count);
}
