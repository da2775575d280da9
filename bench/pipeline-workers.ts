/**
 * One run of the scaling bench's world over BullMQ (P `genesis worker` processes on the local
 * Redis), with a timeline of where each episode's time went between the scheduler and its worker:
 * the job's pickup, the worker's setup, workspace, agent, collect, the round trip for its place in
 * the integration queue, the gate, the record and result after it, the result's delivery to the
 * scheduler, and from there to its end (landing).
 *
 *   node --import tsx bench/pipeline-workers.ts [--workers 8] [--tasks 16] [--fail-every 0] [--clash-every 0] [--timeline] [--json]
 */
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import type { RunEvent } from '../src/schedule/run/ports/events.js';
import { GitLedger } from '../src/ledger/git-ledger.js';
import { makeBenchRoot } from './lib/bench-world.js';
import { runOverBullmq, type WorkerLine } from './lib/bullmq-run.js';
import { buildHops, formatHops, summarizeHops, type StampedRunEvent } from './lib/bullmq-timeline.js';
import { loadNow } from './lib/machine.js';
import { pipelineWorld, readRunStats, RunTracer } from './lib/pipeline-world.js';

export async function measureWorkers(opts: { workers: number; tasks: number; failEvery: number; clashEvery: number; warm?: boolean }) {
  const { dir, cleanup } = await makeBenchRoot('workers');
  try {
    const name = `w-${opts.workers}-${opts.tasks}`;
    const world = await pipelineWorld(dir, name, {
      tasks: opts.tasks,
      parallelism: opts.workers,
      agentS: 2,
      gateSleepS: 2.8,
      failEvery: opts.failEvery,
      clashEvery: opts.clashEvery,
    });
    const warmUp = opts.warm
      ? [
          {
            world: await pipelineWorld(dir, 'warm-up', { tasks: opts.workers, parallelism: opts.workers, agentS: 0, gateSleepS: 0, failEvery: 0 }),
            name: 'warm-up',
          },
        ]
      : [];
    const events: StampedRunEvent[] = [];
    const lines: WorkerLine[] = [];
    const tracer = new RunTracer();
    const onEvent = (event: RunEvent) => {
      events.push({ at: Date.now(), event });
      tracer.onEvent(event);
    };
    const loadBefore = loadNow();
    const summary = await runOverBullmq(world, name, opts.workers, onEvent, (l) => lines.push(l), warmUp);
    const records = await new GitLedger(world.path).readAll();
    const gateMs = new Map(records.flatMap((r) => (r.phases.gate === undefined ? [] : [[r.id, r.phases.gate] as const])));
    const hops = buildHops(events, lines);
    const stats = await readRunStats(world, tracer);
    const ceilingS = Math.ceil(opts.tasks / opts.workers) * 5;
    return {
      ...opts,
      stop: summary.stop.kind,
      accepted: summary.accepted,
      makespanS: Math.round(summary.durationMs / 100) / 10,
      ceilingS,
      efficiency: Math.round((ceilingS / (summary.durationMs / 1000)) * 100) / 100,
      gatesPerAccepted: Math.round((stats.gates / Math.max(1, stats.accepted)) * 100) / 100,
      verifications: stats.verifications,
      gatedOnTip: stats.gatedOnTip,
      load: [loadBefore, loadNow()],
      timeline: formatHops(hops),
      parts: summarizeHops(hops, gateMs, { start: events.find((e) => e.event.type === 'start')?.at ?? 0, end: events.at(-1)?.at ?? 0 }),
    };
  } finally {
    await cleanup();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      workers: { type: 'string', default: '8' },
      tasks: { type: 'string', default: '16' },
      'fail-every': { type: 'string', default: '0' },
      'clash-every': { type: 'string', default: '0' },
      timeline: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      warm: { type: 'boolean', default: false },
    },
  });
  const result = await measureWorkers({
    workers: Number(values.workers),
    tasks: Number(values.tasks),
    failEvery: Number(values['fail-every']),
    clashEvery: Number(values['clash-every']),
    warm: values.warm,
  });
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    const { timeline, parts, ...rest } = result;
    if (values.timeline) process.stdout.write(`${timeline}\n\n`);
    process.stdout.write(
      `${parts}\n\n${Object.entries(rest)
        .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
        .join('\n')}\n`,
    );
  }
  process.exit(0);
}
