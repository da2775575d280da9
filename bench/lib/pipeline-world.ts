import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { createSandbox } from '../../src/sandbox/create-sandbox.js';
import { GitLedger } from '../../src/ledger/git-ledger.js';
import { VerificationLedger, VERIFICATION_REF_PREFIX } from '../../src/integrate/verification/ledger.js';
import type { RunEvent } from '../../src/schedule/run/ports/events.js';
import type { EpisodeRecord } from '../../src/ledger/episode-record.js';
import { git } from '../../src/git/git.js';
import { initWorld } from '../../src/operations/init-world.js';
import type { WorldRepo } from '../../src/world/world-repo.js';

/** The shape of the throughput world: independent tasks, a waiting agent, a slow gate. */
export interface PipelineWorldSpec {
  tasks: number;
  parallelism: number;
  /** Seconds the agent waits before its one-line change (as a remote model does). */
  agentS: number;
  /** Seconds the gate's command sleeps before the test runs (the whole gate takes a little more). */
  gateSleepS: number;
  /**
   * Where the suite spends `gateSleepS`: `command`, a `sleep` before `node --test` (a run of one
   * failed test by name pays it again); `tests`, four tests of the suite that wait a quarter each,
   * so a run of one failed test by name costs what that test costs, as in a real suite.
   * @default 'command'
   */
  suiteTime?: 'command' | 'tests';
  /**
   * Every `failEvery`-th task's first attempt writes a note the test refuses, so its gate fails
   * and a second attempt (which writes a good note) is needed; 0: every change is good.
   */
  failEvery: number;
  /**
   * Tasks n - 1 and n, for every n a multiple of `clashEvery`, write the same "clash-<n>" note on
   * their first attempt: each passes its own gate alone, together they fail the test, so the one
   * that joins the integration queue second fails on its speculative tip and those behind it are
   * re-based. With clashEvery = P the pair starts in the same wave. 0: no clashes.
   */
  clashEvery?: number;
}

const TEST = `const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
test('no note is broken', () => {
  for (const f of fs.readdirSync('notes')) assert.ok(!fs.readFileSync('notes/' + f, 'utf8').includes('broken'), f);
});
test('no two notes clash', () => {
  const seen = new Set();
  for (const f of fs.readdirSync('notes')) {
    const text = fs.readFileSync('notes/' + f, 'utf8').trim();
    if (!text.startsWith('clash-')) continue;
    assert.ok(!seen.has(text), f + ' says ' + text + ' as another note does');
    seen.add(text);
  }
});
`;

/** Four tests that wait `totalS` between them: the suite's own time, spent where a run of one other test by name skips it. */
function slowTests(totalS: number): string {
  const ms = Math.round((totalS * 1000) / 4);
  return Array.from({ length: 4 }, (_, i) => `test('part ${i + 1} of the suite', () => new Promise((resolve) => setTimeout(resolve, ${ms})));\n`).join('');
}

/**
 * A world of `tasks` independent tasks (each only its own `notes/<task>.txt`), gates in bubblewrap:
 * `sleep gateSleepS && node --test test/` (or the suite's own tests wait, see `suiteTime`), with a test
 * that refuses any note saying "broken".
 */
export async function pipelineWorld(root: string, name: string, spec: PipelineWorldSpec): Promise<WorldRepo> {
  const seed = join(root, `${name}-seed`);
  await mkdir(join(seed, 'notes'), { recursive: true });
  await mkdir(join(seed, 'test'), { recursive: true });
  await writeFile(join(seed, 'notes', '.keep'), '');
  const inTests = spec.suiteTime === 'tests';
  await writeFile(join(seed, 'test', 'notes.test.js'), inTests ? TEST + slowTests(spec.gateSleepS) : TEST);
  const bad = spec.failEvery > 0 ? `[ $(( \${GENESIS_TASK_ID#t} % ${spec.failEvery} )) -eq 0 ] && [ "$GENESIS_ATTEMPT" = 1 ]` : 'false';
  const k = spec.clashEvery ?? 0;
  const clash = k > 0 ? `[ "$GENESIS_ATTEMPT" = 1 ] && [ $(( (\${GENESIS_TASK_ID#t} + 1) % ${k} )) -le 1 ]` : 'false';
  const note = `if ${bad}; then echo broken; elif ${clash}; then echo "clash-$(( (\${GENESIS_TASK_ID#t} + 1) / ${k || 1} ))"; else echo "$GENESIS_EPISODE_ID"; fi`;
  await writeFile(
    join(seed, 'world.yaml'),
    stringify({
      name,
      goal: { outcome: 'measure throughput' },
      verify: { sandbox: 'bwrap', test: inTests ? 'node --test test/' : `sleep ${spec.gateSleepS} && node --test test/`, timeoutSec: 120 },
      protected: ['test/**', 'world.yaml'],
      agent: { kind: 'command', command: ['sh', '-c', `sleep ${spec.agentS}; ${note} > "notes/$GENESIS_TASK_ID.txt"`], timeoutSec: 120 },
      retry: { maxAttempts: 2 },
      parallelism: spec.parallelism,
      tasks: Array.from({ length: spec.tasks }, (_, i) => ({ id: `t${i + 1}`, title: `note ${i + 1}`, paths: [`notes/t${i + 1}.txt`] })),
    }),
  );
  const sandbox = await createSandbox('bwrap', { image: 'genesis/node:20' });
  return (await initWorld({ worldPath: join(root, `${name}.world`), from: seed, sandbox: async () => sandbox })).world;
}

/** What one run of the pipeline did, read back from the world's ledger and verification records. */
export interface PipelineRunStats {
  accepted: number;
  /** Episodes rejected: by their own gate, or on their speculative tip. */
  rejected: number;
  /** Changes that passed their own gate and failed on their speculative tip (those behind them were re-based). */
  rejectedOnTip: number;
  /** Gate runs: every episode's own gate plus every verification of a speculative commit. */
  gates: number;
  /** Verifications of speculative commits (second gates). */
  verifications: number;
  /** Episodes that gated their change on the speculative tip rather than their base. */
  gatedOnTip: number;
  /**
   * Means, seconds: the agent phase, a passing own gate, a failing one (an own failure, or a gate on a
   * tip that failed for a change ahead), the verifications (their gate, and as the queue saw them: from
   * sent to verdict).
   */
  agentS: number;
  gateS: number;
  failedGateS: number | null;
  verifyS: number | null;
  verifySeenS: number | null;
  /** Means, seconds, from the run's events: an episode's time outside its agent and gate, a build on a tip, a landing. */
  startS: number;
  episodeOverheadS: number;
  buildS: number;
  landS: number;
  /** Standard deviation over mean of the accepted episodes' agent + gate time. */
  spread: number;
}

export async function readRunStats(world: WorldRepo, tracer: RunTracer): Promise<PipelineRunStats> {
  const records = await new GitLedger(world.path).readAll();
  const refs = (await git(['for-each-ref', '--format=%(refname)', VERIFICATION_REF_PREFIX], { cwd: world.path })).stdout.split('\n').filter(Boolean);
  const vledger = new VerificationLedger(world.path);
  const verifications = (await Promise.all(refs.map((r) => vledger.read(r.slice(VERIFICATION_REF_PREFIX.length))))).filter((v) => v !== null);
  const gated = records.filter((r) => r.phases.gate !== undefined);
  const s = meanS;
  const ownFailure = (r: EpisodeRecord) => r.outcome === 'rejected' && !r.reason?.startsWith('replay-');
  // A gate on a tip that failed there for a change ahead is followed by a gate on the base (run-episode.ts): the first
  // is a failing gate (the test, its re-run, the run on the tip's base), the second passes unless the change is bad itself.
  const onBase = (r: EpisodeRecord) => r.phases['gate-on-base'] !== undefined;
  // A change handed to the queue after its place was rebuilt: its own gate failed on the tip, the queue's verification passed it.
  const handed = (r: EpisodeRecord) => r.handedOver === true;
  const passing = gated.filter((r) => !ownFailure(r) && !handed(r)).map((r) => (onBase(r) ? r.phases['gate-on-base']! : r.phases.gate!));
  const failed = gated.flatMap((r) => [
    ...(ownFailure(r) || onBase(r) || handed(r) ? [r.phases.gate!] : []),
    ...(ownFailure(r) && onBase(r) ? [r.phases['gate-on-base']!] : []),
  ]);
  const overheads = tracer.overheads(records);
  const verifyMs = verifications.map((v) => v.gate?.durationMs ?? 0).filter((ms) => ms > 0);
  return {
    accepted: records.filter((r) => r.outcome === 'accepted').length,
    rejected: records.filter((r) => r.outcome === 'rejected').length,
    rejectedOnTip: records.filter((r) => r.outcome === 'rejected' && r.reason?.startsWith('replay-')).length,
    gates: gated.length + verifications.length,
    verifications: verifications.length,
    gatedOnTip: records.filter((r) => r.gatedOn).length,
    agentS: s(gated.map((r) => r.phases.agent ?? 0)),
    gateS: s(passing),
    failedGateS: failed.length > 0 ? s(failed) : null,
    verifyS: verifyMs.length > 0 ? s(verifyMs) : null,
    verifySeenS: overheads.verifyS,
    startS: overheads.startS,
    spread: overheads.spread,
    episodeOverheadS: overheads.episodeS,
    buildS: overheads.buildS,
    landS: overheads.landS,
  };
}

/**
 * Times what the ledger does not hold, from the run's events: each episode's cycle (its start to
 * its result reaching the scheduler: when its change joins the integration queue, or its record
 * ends) and each landing (the front change taken to land, to its record saying accepted).
 */
export class RunTracer {
  private readonly started = new Map<string, number>();
  private readonly startedWall = new Map<string, number>();
  private readonly reserved = new Set<string>();
  private readonly final = new Set<string>();
  private readonly cycles = new Map<string, number>();
  private readonly landing = new Map<string, number>();
  private readonly lands: number[] = [];
  private readonly building = new Map<string, number>();
  private readonly builds: number[] = [];
  private readonly verifying = new Map<string, number>();
  private readonly verifies: number[] = [];

  readonly onEvent = (event: RunEvent): void => {
    const now = performance.now();
    if (event.type === 'episode-start') {
      this.started.set(event.id, now);
      this.startedWall.set(event.id, Date.now());
    }
    if (event.type === 'integration') {
      for (const e of event.entries) {
        // The episode's result reaches the scheduler when its change joins, or, when it reserved its
        // place before its own gate (in process), when the entry leaves 'gating'.
        const t0 = this.started.get(e.id);
        if (e.stage === 'gating') {
          this.reserved.add(e.id);
          this.cycles.delete(e.id);
        } else if (
          t0 !== undefined &&
          (this.reserved.has(e.id) ? !this.final.has(e.id) && !['waiting', 'building'].includes(e.stage) : !this.cycles.has(e.id))
        ) {
          this.cycles.set(e.id, now - t0);
          if (this.reserved.has(e.id)) this.final.add(e.id);
        }
        if (e.stage === 'landing' && !this.landing.has(e.id)) this.landing.set(e.id, now);
        // A verification as the queue sees it: sent to a slot, until its verdict is back (queueing and transport included).
        const sent = this.verifying.get(e.id);
        if (e.stage === 'verifying' && sent === undefined) this.verifying.set(e.id, now);
        else if (e.stage !== 'verifying' && sent !== undefined) {
          if (e.stage === 'verified' || e.stage === 'landing') this.verifies.push(now - sent);
          this.verifying.delete(e.id);
        }
        const built = this.building.get(e.id);
        if (e.stage === 'building' && built === undefined) this.building.set(e.id, now);
        else if (e.stage !== 'building' && e.stage !== 'waiting' && built !== undefined && built >= 0) {
          this.builds.push(now - built);
          this.building.set(e.id, -1);
        }
      }
    }
    if (event.type === 'episode-end') {
      const t0 = this.started.get(event.id);
      if (t0 !== undefined && (this.reserved.has(event.id) ? !this.final.has(event.id) : !this.cycles.has(event.id))) {
        this.cycles.set(event.id, now - t0);
        this.final.add(event.id);
      }
      const landing = this.landing.get(event.id);
      if (event.outcome === 'accepted' && landing !== undefined) this.lands.push(now - landing);
    }
  };

  /**
   * Means in seconds: the scheduler's start of an episode (from its record's startedAt to the
   * episode-start event: the record written, the policy told), an episode's time from then outside
   * its agent and gate, a change's first build on its tip, and a landing; and the spread of the
   * episodes' agent + gate time (standard deviation over mean).
   */
  overheads(records: readonly EpisodeRecord[]): { startS: number; episodeS: number; buildS: number; verifyS: number | null; landS: number; spread: number } {
    // An episode gated again on its base had its place rebuilt under it (its cycle ended early): not counted.
    const outside = records.flatMap((r) => {
      const cycle = this.cycles.get(r.id);
      return cycle === undefined || r.phases.gate === undefined || r.phases['gate-on-base'] !== undefined
        ? []
        : [cycle - (r.phases.agent ?? 0) - r.phases.gate];
    });
    const starts = records.flatMap((r) => {
      const wall = this.startedWall.get(r.id);
      return wall === undefined ? [] : [wall - Date.parse(r.startedAt)];
    });
    const work = records.filter((r) => r.phases.gate !== undefined && r.outcome !== 'rejected').map((r) => (r.phases.agent ?? 0) + r.phases.gate!);
    const mean = work.reduce((a, b) => a + b, 0) / Math.max(1, work.length);
    const sd = Math.sqrt(work.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, work.length));
    const s = meanS;
    return {
      startS: s(starts),
      episodeS: s(outside),
      buildS: s(this.builds),
      verifyS: this.verifies.length > 0 ? s(this.verifies) : null,
      landS: s(this.lands),
      spread: mean > 0 ? Math.round((sd / mean) * 100) / 100 : 0,
    };
  }
}

/**
 * Means, in seconds, of part times: the model adds durations up (its spread is symmetric around
 * the mean it is given), so a median would understate a run whose slow gates came late.
 */
function meanS(ms: readonly number[]): number {
  return ms.length === 0 ? Number.NaN : Math.round(ms.reduce((a, b) => a + b, 0) / ms.length) / 1000;
}
