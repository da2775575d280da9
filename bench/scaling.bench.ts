import { formatTable } from '../src/cli/output.js';
import { newEpisodeId } from '../src/episode/episode-job.js';
import { IntegrationStage } from '../src/integrate/integration-stage.js';
import { Lander } from '../src/integrate/lander.js';
import { MEASURED_COSTS, simulatePipeline } from '../src/reliability/pipeline-model.js';
import { runVerification } from '../src/integrate/verification/run-verification.js';
import { MemoryVerificationQueue } from '../src/queue/memory/verification-queue.js';
import { openEpisodeRecord } from '../src/ledger/episode-record.js';
import { GitLedger } from '../src/ledger/git-ledger.js';
import { NoneSandbox } from '../src/sandbox/gate/none-sandbox.js';
import type { RunSummary } from '../src/schedule/run/ports/events.js';
import { runEmbedded } from '../src/compose/embedded-run.js';
import { git, gitValue } from '../src/git/git.js';
import type { WorldRepo } from '../src/world/world-repo.js';
import type { BenchContext, BenchResult } from './lib/bench-module.js';
import { makeBenchRoot } from './lib/bench-world.js';
import { runOverBullmq } from './lib/bullmq-run.js';
import { loadNow } from './lib/machine.js';
import { pipelineWorld, readRunStats, RunTracer, type PipelineRunStats } from './lib/pipeline-world.js';
import { buildTimeline, formatTimeline, type StampedEvent } from './pipeline-timeline.js';

/** The shape: an agent that waits 2 s (as a remote model does) and a gate of about 3 s. */
const AGENT_S = 2;
const GATE_S = 3;
/** The suite's tests wait this long between them; the test run and the sandbox make up the rest of GATE_S. */
const GATE_SLEEP_S = 2.8;

interface Setup {
  mode: 'in-process' | 'BullMQ';
  workers: number;
  tasks: number;
  failEvery: number;
  /** Pairs of tasks whose first attempts clash (see PipelineWorldSpec.clashEvery); 0: none. */
  clashEvery: number;
}

interface Measured extends Setup {
  makespanS: number;
  /** How the run stopped when it did not finish every task (e.g. "blocked: t5 broken-base"), else null. */
  stopped: string | null;
  stats: PipelineRunStats;
  load: number;
  /** Per change: its agent, own gate, verifications and end, when the run was asked for it. */
  timeline?: string;
}

/** Runs one world through `runWorld`, in this process or over BullMQ with `workers` worker processes. */
export async function measure(root: string, setup: Setup, withTimeline = false): Promise<Measured> {
  const name = `${setup.mode === 'BullMQ' ? 'redis' : 'mem'}-${setup.workers}-${setup.tasks}-${setup.failEvery}-${setup.clashEvery}`;
  const world = await pipelineWorld(root, name, {
    tasks: setup.tasks,
    parallelism: setup.workers,
    agentS: AGENT_S,
    gateSleepS: GATE_SLEEP_S,
    // A real suite's time is in its tests: a run of the one failed test again costs that test, not the suite.
    suiteTime: 'tests',
    failEvery: setup.failEvery,
    clashEvery: setup.clashEvery,
  });
  const tracer = new RunTracer();
  const stamped: StampedEvent[] = [];
  const t0 = performance.now();
  const onEvent: typeof tracer.onEvent = (event) => {
    tracer.onEvent(event);
    if (withTimeline) stamped.push({ at: performance.now() - t0, event: structuredClone(event) as StampedEvent['event'] });
  };
  const { makespanS, stopped } =
    setup.mode === 'BullMQ' ? await distributed(world, name, setup.workers, onEvent) : await timedRun(() => runEmbedded({ world, onEvent }));
  const timeline = withTimeline ? { timeline: formatTimeline(buildTimeline(stamped)) } : {};
  return { ...setup, makespanS, stopped, stats: await readRunStats(world, tracer), load: loadNow(), ...timeline };
}

/** The run's wall time, and how it stopped when that was not with every task done (the bench reports it rather than hide it). */
async function timedRun(run: () => Promise<RunSummary>): Promise<{ makespanS: number; stopped: string | null }> {
  const summary = await run();
  // runWorld's own clock: over BullMQ the workers' start before it is not the run's.
  const makespanS = summary.durationMs / 1000;
  if (summary.stop.kind === 'done') return { makespanS, stopped: null };
  const blocked = summary.stop.kind === 'blocked' ? summary.stop.blocked.map((b) => `${b.task} ${b.reason}`).join(', ') : '';
  return { makespanS, stopped: `${summary.stop.kind}${blocked ? `: ${blocked}` : ''}` };
}

async function distributed(
  world: WorldRepo,
  name: string,
  workers: number,
  onEvent: RunTracer['onEvent'],
): Promise<{ makespanS: number; stopped: string | null }> {
  return timedRun(() => runOverBullmq(world, name, workers, onEvent));
}

/**
 * The integration stage's own rate, gates without a sandbox (the test runs on the host): changes on their own base land
 * by compare-and-swap at once; changes all made on one old base are each built on the one ahead,
 * verified on that tip and landed as verified.
 */
async function integratorRate(root: string, count: number): Promise<{ fastForward: number; replay: number }> {
  const world = await pipelineWorld(root, 'integrator', { tasks: 1, parallelism: 1, agentS: 0, gateSleepS: 0, failEvery: 0 });
  const sandbox = new NoneSandbox();
  const ledger = new GitLedger(world.path);
  const candidate = async (base: string, path: string) => {
    const env = { GIT_INDEX_FILE: `${world.path}/bench.index` };
    await git(['read-tree', base], { cwd: world.path, env });
    const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: world.path, input: `${path}\n` });
    await git(['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], { cwd: world.path, env });
    return world.commitTree(await gitValue(['write-tree'], { cwd: world.path, env }), [base], 'c\n');
  };
  const passed = async (base: string, cand: string) => {
    const id = newEpisodeId();
    await ledger.write({
      ...openEpisodeRecord({ id, world: 'integrator', task: 't1', attempt: 1, agent: 'bench', base, worker: 'bench' }),
      candidate: cand,
      gate: { ok: true, sandbox: 'none', summary: 'bench', steps: [], durationMs: 0 },
    });
    return { id, task: 't1', candidate: cand, base };
  };
  const through = async (changes: Array<{ id: string; task: string; candidate: string; base: string }>) => {
    const head = await world.head('main');
    const verifications = new MemoryVerificationQueue((job) => runVerification(job, { world, sandbox, worker: 'bench' }), 4);
    let left = changes.length;
    let done: () => void = () => {};
    const all = new Promise<void>((resolve) => (done = resolve));
    const stage = new IntegrationStage({
      world,
      ledger,
      lander: new Lander(world, ledger, 'main', head),
      verifications,
      slots: 4,
      head,
      worldName: 'integrator',
      onOutcome: async () => void (--left === 0 && done()),
    });
    void (async () => {
      while (left > 0) await stage.verified(await verifications.nextResult());
    })();
    const t0 = performance.now();
    for (const c of changes) await stage.join(c);
    await all;
    await verifications.close();
    return performance.now() - t0;
  };
  let ffTime = 0;
  for (let i = 0; i < count; i++) {
    const head = await world.head('main');
    ffTime += await through([await passed(head, await candidate(head, `notes/ff-${i}.txt`))]);
  }
  const base = await world.head('main');
  const changes = [];
  for (let i = 0; i < count; i++) changes.push(await passed(base, await candidate(base, `notes/t1-${i}.txt`)));
  const replayTime = await through(changes);
  return { fastForward: count / (ffTime / 1000), replay: count / (replayTime / 1000) };
}

/**
 * The ceiling: W episodes at once, each agent then gate, with no integration cost at all. A task
 * whose first attempt fails its gate takes two episodes, its agent and its own gate each time (what
 * judging the failure costs besides is not in it), the second after the first.
 */
export function ceilingS(m: Pick<Setup, 'tasks' | 'workers' | 'failEvery'>): number {
  const failed = m.failEvery ? Math.floor(m.tasks / m.failEvery) : 0;
  const rounds = Math.max(Math.ceil((m.tasks + failed) / m.workers), failed > 0 ? 2 : 1);
  return rounds * (AGENT_S + GATE_S);
}

/**
 * The ceiling a scheduler that cannot know which attempts will fail reaches: the same episodes with
 * no integration cost, started in task order on P slots as slots free, a failed first attempt's
 * retry queued ahead of tasks not started yet the moment it fails. Above ceilingS when a failing
 * task is among the last to start, since its retry then needs a round of its own.
 */
export function inOrderCeilingS(m: Pick<Setup, 'tasks' | 'workers' | 'failEvery'>): number {
  const episode = AGENT_S + GATE_S;
  const fails = (task: number) => m.failEvery > 0 && task % m.failEvery === 0;
  const waiting: Array<{ task: number; retry: boolean }> = Array.from({ length: m.tasks }, (_, i) => ({ task: i + 1, retry: false }));
  let running: Array<{ task: number; retry: boolean; end: number }> = [];
  let now = 0;
  let last = 0;
  while (waiting.length > 0 || running.length > 0) {
    while (running.length < m.workers && waiting.length > 0) running.push({ ...waiting.shift()!, end: now + episode });
    now = Math.min(...running.map((r) => r.end));
    const ended = running.filter((r) => r.end === now);
    running = running.filter((r) => r.end !== now);
    last = now;
    for (const r of ended) if (!r.retry && fails(r.task)) waiting.unshift({ task: r.task, retry: true });
  }
  return last;
}

/**
 * What `genesis model pipeline` predicts for the same run: the same P, tasks and bad changes, the
 * agent, gate, overhead and landing times this run measured (means), averaged over 20 seeds.
 * A bad change fails its first attempt only, so the model's per-episode rate is 1 / (failEvery + 1);
 * the rate of failures on a tip is the share of changes this run saw fail there.
 */
function modelled(m: Measured, nominal: boolean): number {
  const st = m.stats;
  const runs = Array.from(
    { length: 20 },
    (_, i) =>
      simulatePipeline({
        workers: m.workers,
        tasks: m.tasks,
        seed: i + 1,
        reject: m.failEvery ? 1 / (m.failEvery + 1) : 0,
        verifyReject: st.rejectedOnTip / (st.accepted + st.rejectedOnTip),
        agentMin: (nominal ? AGENT_S : st.agentS) / 60,
        gateMin: (nominal ? GATE_S : st.gateS) / 60,
        ...(nominal
          ? {}
          : {
              // A uniform spread of ±j has a standard deviation of j / √3.
              jitter: Math.min(0.9, Math.sqrt(3) * st.spread),
              startMin: st.startS / 60,
              episodeOverheadMin: st.episodeOverheadS / 60,
              buildMin: st.buildS / 60,
              landMin: st.landS / 60,
              verifyMin: (st.verifyS ?? st.gateS) / 60,
              failedGateFactor: st.failedGateS ? st.failedGateS / st.gateS : MEASURED_COSTS.failedGateFactor,
            }),
        gateOnTip: m.mode === 'in-process' || st.gatedOnTip > 0,
      }).makespanMin * 60,
  );
  return runs.reduce((a, b) => a + b, 0) / runs.length;
}

export function modelCells(m: Measured): string[] {
  if (m.stopped) return ['- (the run stopped early)', '-'];
  return [modelled(m, false), modelled(m, true)].map(
    (predicted) => `${predicted.toFixed(1)} (${predicted >= m.makespanS ? '+' : ''}${(((predicted - m.makespanS) / m.makespanS) * 100).toFixed(0)}%)`,
  );
}

export function row(m: Measured): string[] {
  const ceiling = ceilingS(m);
  const inOrder = inOrderCeilingS(m);
  const perMin = (m.stats.accepted / m.makespanS) * 60;
  return [
    m.mode,
    String(m.workers),
    String(m.tasks),
    badChanges(m),
    `${m.stats.accepted}${m.stopped ? ' (stopped)' : ''}`,
    m.makespanS.toFixed(1),
    String(ceiling),
    (ceiling / m.makespanS).toFixed(2),
    inOrder === ceiling ? '-' : `${inOrder}: ${(inOrder / m.makespanS).toFixed(2)}`,
    perMin.toFixed(1),
    (m.stats.gates / Math.max(1, m.stats.accepted)).toFixed(2),
    String(m.stats.verifications),
    [
      m.stats.agentS,
      m.stats.gateS,
      m.stats.failedGateS,
      m.stats.verifyS,
      m.stats.verifySeenS,
      m.stats.startS,
      m.stats.episodeOverheadS,
      m.stats.buildS,
      m.stats.landS,
    ]
      .map((v) => (v === null ? '-' : v.toFixed(2)))
      .join(' / '),
    m.load.toFixed(1),
  ];
}

/** A row's name for --row: its mode, P and kind of bad changes ("in-process P=4, 1 in 5 fails its gate"). */
function setupLabel(s: Setup): string {
  const bad = s.failEvery ? `1 in ${s.failEvery} fails its gate` : s.clashEvery ? `2 in ${s.tasks} clash` : 'no bad changes';
  return `${s.mode} P=${s.workers}, ${bad}`;
}

function badChanges(m: Measured): string {
  if (m.failEvery) return `1 in ${m.failEvery} fails its gate`;
  if (m.clashEvery) return `2 in ${m.tasks} clash: ${m.stats.rejectedOnTip} failed on the tip`;
  return '-';
}

/** Tasks per run: about two rounds of episodes, at least four. */
function tasksFor(workers: number): number {
  return Math.max(4, 2 * workers);
}

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const { dir, cleanup } = await makeBenchRoot('scaling');
  try {
    // One row read closely is a row of the full run.
    const quick = ctx.quick && ctx.row === undefined;
    const counts = quick ? [1, 2] : [1, 2, 4, 8];
    let setups: Setup[] = [];
    for (const workers of counts) {
      setups.push({ mode: 'in-process', workers, tasks: tasksFor(workers), failEvery: 0, clashEvery: 0 });
      if (!quick || workers === 2) setups.push({ mode: 'BullMQ', workers, tasks: tasksFor(workers), failEvery: 0, clashEvery: 0 });
    }
    if (!quick) {
      for (const mode of ['in-process', 'BullMQ'] as const) {
        setups.push({ mode, workers: 4, tasks: 10, failEvery: 5, clashEvery: 0 });
        setups.push({ mode, workers: 4, tasks: 10, failEvery: 0, clashEvery: 4 });
      }
    }
    const only = ctx.row;
    if (only !== undefined) {
      const labels = setups.map(setupLabel);
      setups = setups.filter((setup) => setupLabel(setup).includes(only));
      if (setups.length === 0) throw new Error(`no row of the scaling bench matches "${only}"; rows: ${[...new Set(labels)].join('; ')}`);
    }
    const measured: Measured[] = [];
    for (const setup of setups) measured.push(await measure(dir, setup, only !== undefined));
    const rate = only === undefined ? await integratorRate(dir, quick ? 5 : 20) : null;
    const table = [
      formatTable(
        [
          'mode',
          'P',
          'tasks',
          'bad changes',
          'accepted',
          'makespan s',
          'ceiling s',
          'efficiency',
          'in task order: ceiling s: efficiency',
          'accepted/min',
          'gates/accepted',
          'second gates',
          'mean s: agent / own gate / failed gate / verification: gate, sent to verdict / start / episode overhead / build / land',
          'load',
        ],
        measured.map(row),
      ),
      '',
      formatTable(
        [
          'mode',
          'P',
          'tasks',
          'bad changes',
          'measured makespan s',
          "model, this run's phase times: s (error)",
          'model, nominal 2 s / 3 s and default costs: s (error)',
        ],
        measured.map((m) => [m.mode, String(m.workers), String(m.tasks), badChanges(m), m.makespanS.toFixed(1), ...modelCells(m)]),
      ),
      ...(rate
        ? [
            '',
            formatTable(
              ['integrator', 'accepted changes per second'],
              [
                ['fast-forward (head still the base)', rate.fastForward.toFixed(1)],
                [
                  'speculative: all made on one base, each built and verified on the one ahead (the gate: node --test on the host, no sandbox)',
                  rate.replay.toFixed(1),
                ],
              ],
            ),
          ]
        : []),
    ].join('\n');
    const stops = measured
      .filter((m) => m.stopped)
      .map((m) => `${m.mode} P=${m.workers}, ${badChanges(m)}: the run stopped ${m.stopped} with ${m.stats.accepted} of ${m.tasks} tasks landed.`);
    return {
      title: 'Throughput of the pipeline: a 2 s agent and a 3 s gate at P episodes at once, against the ceiling',
      table,
      notes: [
        `Independent tasks, each one line in its own file. The agent sleeps ${AGENT_S} s; the gate runs \`node --test test/\` in bubblewrap, a suite of four tests that wait ${GATE_SLEEP_S / 4} s each and the tests of the notes (about ${GATE_S} s). Ceiling: ceil(episodes / P) x (${AGENT_S} + ${GATE_S}) s, where episodes counts a failed first attempt as one more (and a task that fails once needs two rounds at least); efficiency = ceiling / makespan. In task order: the same episodes started in task order as slots free, a failed attempt's retry first in line when it fails (inOrderCeilingS); shown where it differs.`,
        'in-process: runWorld with the embedded queue, parallelism P. BullMQ: P `genesis worker` processes (concurrency 1) on the local Redis, the scheduler in this process.',
        'gates/accepted counts every own gate (failed ones too) and every verification of a speculative commit; "second gates" are those verifications.',
        "fails its gate: that task's first attempt writes a note the test refuses (its gate fails: the suite, then a re-run of the failed test by name, which skips the suite's waiting tests; the base is not run, its record knows the test), the second attempt a good one.",
        'clash: tasks 3 and 4, and 7 and 8, write the same note on their first attempt: each passes its own gate alone (they start together, on one base). Over BullMQ the one that joins the queue second fails on its tip and the changes behind it are re-based and verified again; in process, where an episode gates on a tip holding every change ahead, the second of a pair may fail its own gate instead. Its second attempt lands.',
        "Model: simulatePipeline (genesis model pipeline), mean of 20 seeds, with the means this run measured (agent, passing own gate, failing gate / passing gate, a verification's gate, start, episode overhead, build, landing) and the spread of agent + gate times it saw, or with the nominal 2 s and 3 s and the command's default costs; episodes gate on the speculative tip when the run did.",
        ...stops,
        ...measured.flatMap((m) => (m.timeline ? [`Timeline, ${setupLabel(m)} (s from the run's start):\n${m.timeline}`] : [])),
        'Before the pipeline: efficiency 0.84 at P=1, 0.44 at 3, 0.22 at 6, 0.11 at 11.',
      ],
    };
  } finally {
    await cleanup();
  }
}
