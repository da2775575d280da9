import type { MetricFamily } from '../../telemetry/prometheus-text.js';
import type { IntegrationView } from './integration-view.js';
import type { TaskBoard } from './task-board.js';
import type { ClusterWorker, LivenessProbe } from './worker-liveness.js';
import type { WorldSnapshot } from './world-snapshot.js';

/** Seconds: from a quick gate to an agent that works for an hour. */
const USAGE_SOURCES = ['wire', 'agent'] as const;
type UsageSource = (typeof USAGE_SOURCES)[number];

export const DURATION_BUCKETS = [1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

/** Jobs of a distributed queue in one state. */
export interface QueueDepth {
  queue: string;
  state: string;
  count: number;
}

/** What the metrics read besides the snapshot. */
export interface MetricsInput {
  snapshot: WorldSnapshot;
  board: TaskBoard;
  integration: IntegrationView;
  probe: LivenessProbe;
  /** Workers in the distributed queue's registry; null without Redis (or when it cannot be read). */
  cluster: ClusterWorker[] | null;
  /** Jobs in the distributed queues (BullMQ, with --redis); null without them. */
  queues?: QueueDepth[] | null;
}

/**
 * The world as Prometheus metrics, from the ledger and the scheduler's files: episodes by outcome
 * and reason, what they spent, the durations of agents and gates, the depth of the task and
 * integration queues, the workers alive. Counters count ledger records, which only grow (prune
 * drops logs and candidates, never a record), so `rate()` and `increase()` mean what they say.
 */
export function buildWorldMetrics(input: MetricsInput): MetricFamily[] {
  const { snapshot, board, integration } = input;
  const world = { world: snapshot.manifest.name };
  const finals = snapshot.records.filter((r) => r.status === 'final' && r.outcome !== null);
  const outcomes = new Map<string, { outcome: string; reason: string; count: number }>();
  for (const r of finals) {
    const key = `${r.outcome}\u0000${r.reason ?? ''}`;
    const entry = outcomes.get(key) ?? { outcome: r.outcome!, reason: r.reason ?? 'none', count: 0 };
    entry.count += 1;
    outcomes.set(key, entry);
  }
  const sum = (pick: (r: WorldSnapshot['records'][number]) => number | null | undefined) => snapshot.records.reduce((total, r) => total + (pick(r) ?? 0), 0);
  // An episode's figures count once, under where they came from; a record of before the gateway has no source and was the agent's report.
  const sumOf = (source: UsageSource, pick: (r: WorldSnapshot['records'][number]) => number | null | undefined) =>
    sum((r) => ((r.usageSource ?? 'agent') === source ? pick(r) : 0));
  const seconds = (phase: string) => finals.flatMap((r) => (r.phases[phase] === undefined ? [] : [r.phases[phase]! / 1000]));
  const running = snapshot.records.filter((r) => r.status === 'running');
  const localWorkers = new Set(running.map((r) => r.worker).filter((w) => input.probe(w) === 'alive'));
  return [
    {
      name: 'genesis_episodes_total',
      help: 'Finished episodes, by outcome and the reason they ended so (reason "none" for an accepted change that landed on its own gate).',
      type: 'counter',
      samples: [...outcomes.values()].map((o) => ({ labels: { ...world, outcome: o.outcome, reason: o.reason }, value: o.count })),
    },
    { name: 'genesis_episodes_running', help: 'Episodes the ledger holds as running.', type: 'gauge', samples: [{ labels: world, value: running.length }] },
    {
      name: 'genesis_accepted_changes_total',
      help: 'Commits on the accepted branch that an episode made.',
      type: 'counter',
      samples: [{ labels: world, value: snapshot.history.filter((c) => c.episode).length }],
    },
    {
      name: 'genesis_cost_usd_total',
      help: 'Dollars the episodes cost, by source: wire (measured at the model gateway and priced) or agent (as the agent reported it); episodes with no known cost add nothing.',
      type: 'counter',
      samples: USAGE_SOURCES.map((source) => ({ labels: { ...world, source }, value: Math.round(sumOf(source, (r) => r.usage?.costUsd) * 1e6) / 1e6 })),
    },
    {
      name: 'genesis_tokens_total',
      help: 'Tokens of the episodes, by direction (input includes cached input) and source: wire (measured at the model gateway) or agent (as the agent reported them).',
      type: 'counter',
      samples: USAGE_SOURCES.flatMap((source) => [
        { labels: { ...world, direction: 'input', source }, value: sumOf(source, (r) => r.usage?.inputTokens) },
        { labels: { ...world, direction: 'output', source }, value: sumOf(source, (r) => r.usage?.outputTokens) },
      ]),
    },
    {
      name: 'genesis_episodes_without_cost_total',
      help: 'Finished episodes whose cost is not known (neither priced on the wire nor reported by the agent): genesis_cost_usd_total is a lower bound while this is above 0.',
      type: 'counter',
      samples: [{ labels: world, value: finals.filter((r) => r.usage?.costUsd === null || r.usage?.costUsd === undefined).length }],
    },
    {
      name: 'genesis_agent_duration_seconds',
      help: 'Time finished episodes spent in their agent.',
      type: 'histogram',
      buckets: DURATION_BUCKETS,
      series: [{ labels: world, values: seconds('agent') }],
    },
    {
      name: 'genesis_gate_duration_seconds',
      help: "Time finished episodes spent in their own gate, by where it ran (on the speculative tip or its base, or on the base after the tip's failed).",
      type: 'histogram',
      buckets: DURATION_BUCKETS,
      series: [
        { labels: { ...world, gate: 'own' }, values: seconds('gate') },
        { labels: { ...world, gate: 'on-base' }, values: seconds('gate-on-base') },
      ],
    },
    {
      name: 'genesis_tasks',
      help: 'Tasks of the manifest by state, as the board derives it (pending tasks are the depth of the episode queue to come).',
      type: 'gauge',
      samples: (['pending', 'running', 'blocked', 'done'] as const).map((state) => ({ labels: { ...world, state }, value: board.counts[state] })),
    },
    {
      name: 'genesis_integration_queue_depth',
      help: 'Changes in the integration queue by stage, as the running scheduler last wrote it (0 when no run is going).',
      type: 'gauge',
      samples: Object.entries(integration.counts).map(([stage, count]) => ({ labels: { ...world, stage }, value: integration.current ? count : 0 })),
    },
    {
      name: 'genesis_workers_alive',
      help: 'Workers alive: in the distributed queue\'s registry (source "cluster", with --redis), and on this host holding a running episode (source "local").',
      type: 'gauge',
      samples: [
        ...(input.cluster === null ? [] : [{ labels: { ...world, source: 'cluster' }, value: input.cluster.length }]),
        { labels: { ...world, source: 'local' }, value: localWorkers.size },
      ],
    },
    ...(input.queues
      ? [
          {
            name: 'genesis_queue_jobs',
            help: "Jobs in the distributed queues (BullMQ) by state: the episode queue all worlds share and this world's results queue.",
            type: 'gauge' as const,
            samples: input.queues.map((q) => ({ labels: { ...world, queue: q.queue, state: q.state }, value: q.count })),
          },
        ]
      : []),
    {
      name: 'genesis_run_active',
      help: 'Whether a run holds the world now (1) or not (0).',
      type: 'gauge',
      samples: [{ labels: world, value: integration.run ? 1 : 0 }],
    },
  ];
}
