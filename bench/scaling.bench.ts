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

/** The shape: an agent that waits 2 s (as a remote model does) and a gate of about 3 s. */
const AGENT_S = 2;
const GATE_S = 3;
/** The gate's command sleeps this long; the test run and the sandbox make up the rest of GATE_S. */
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
}

/** Runs one world through `runWorld`, in this process or over BullMQ with `workers` worker processes. */
export async function measure(root: string, setup: Setup): Promise<Measured> {
  const name = `${setup.mode === 'BullMQ' ? 'redis' : 'mem'}-${setup.workers}-${setup.tasks}-${setup.failEvery}-${setup.clashEvery}`;
  const world = await pipelineWorld(root, name, {
    tasks: setup.tasks,
    parallelism: setup.workers,
    agentS: AGENT_S,
    gateSleepS: GATE_SLEEP_S,
    failEvery: setup.failEvery,
    clashEvery: setup.clashEvery,
  });
  const tracer = new RunTracer();
  const { makespanS, stopped } =
    setup.mode === 'BullMQ' ? await distributed(world, name, setup.workers, tracer) : await timedRun(() => runEmbedded({ world, onEvent: tracer.onEvent }));
  return { ...setup, makespanS, stopped, stats: await readRunStats(world, tracer), load: loadNow() };
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

async function distributed(world: WorldRepo, name: string, workers: number, tracer: RunTracer): Promise<{ makespanS: number; stopped: string | null }> {
  return timedRun(() => runOverBullmq(world, name, workers, tracer.onEvent));
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
    const counts = ctx.quick ? [1, 2] : [1, 2, 4, 8];
    const setups: Setup[] = [];
    for (const workers of counts) {
      setups.push({ mode: 'in-process', workers, tasks: tasksFor(workers), failEvery: 0, clashEvery: 0 });
      if (!ctx.quick || workers === 2) setups.push({ mode: 'BullMQ', workers, tasks: tasksFor(workers), failEvery: 0, clashEvery: 0 });
    }
    if (!ctx.quick) {
      for (const mode of ['in-process', 'BullMQ'] as const) {
        setups.push({ mode, workers: 4, tasks: 10, failEvery: 5, clashEvery: 0 });
        setups.push({ mode, workers: 4, tasks: 10, failEvery: 0, clashEvery: 4 });
      }
    }
    const measured: Measured[] = [];
    for (const setup of setups) measured.push(await measure(dir, setup));
    const rate = await integratorRate(dir, ctx.quick ? 5 : 20);
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
    ].join('\n');
    const stops = measured
      .filter((m) => m.stopped)
      .map((m) => `${m.mode} P=${m.workers}, ${badChanges(m)}: the run stopped ${m.stopped} with ${m.stats.accepted} of ${m.tasks} tasks landed.`);
    return {
      title: 'Throughput of the pipeline: a 2 s agent and a 3 s gate at P episodes at once, against the ceiling',
      table,
      notes: [
        `Independent tasks, each one line in its own file. The agent sleeps ${AGENT_S} s; the gate runs \`sleep ${GATE_SLEEP_S} && node --test test/\` in bubblewrap (about ${GATE_S} s). Ceiling: ceil(episodes / P) x (${AGENT_S} + ${GATE_S}) s, where episodes counts a failed first attempt as one more (and a task that fails once needs two rounds at least); efficiency = ceiling / makespan.`,
        'in-process: runWorld with the embedded queue, parallelism P. BullMQ: P `genesis worker` processes (concurrency 1) on the local Redis, the scheduler in this process.',
        'gates/accepted counts every own gate (failed ones too) and every verification of a speculative commit; "second gates" are those verifications.',
        "fails its gate: that task's first attempt writes a note the test refuses (its gate fails: the test, its re-run, and the same test on the base), the second attempt a good one.",
        'clash: tasks 3 and 4, and 7 and 8, write the same note on their first attempt: each passes its own gate alone (they start together, on one base). Over BullMQ the one that joins the queue second fails on its tip and the changes behind it are re-based and verified again; in process, where an episode gates on a tip holding every change ahead, the second of a pair may fail its own gate instead. Its second attempt lands.',
        "Model: simulatePipeline (genesis model pipeline), mean of 20 seeds, with the means this run measured (agent, passing own gate, failing gate / passing gate, a verification's gate, start, episode overhead, build, landing) and the spread of agent + gate times it saw, or with the nominal 2 s and 3 s and the command's default costs; episodes gate on the speculative tip when the run did.",
        ...stops,
        'Before the pipeline: efficiency 0.84 at P=1, 0.44 at 3, 0.22 at 6, 0.11 at 11.',
      ],
    };
  } finally {
    await cleanup();
  }
}
