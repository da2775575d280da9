import { liftedBudgets, readBudgetLifts } from '../../ledger/budget-lifts.js';
import { hostname } from 'node:os';
import { agentForAttempt } from '../../agents/rotation.js';
import { newEpisodeId, type EpisodeJob, type EpisodeResult } from '../../episode/episode-job.js';
import type { ReserveTip, TipService } from '../../episode/gate-on-tip.js';
import { runEpisode } from '../../episode/run-episode.js';
import { removeClosedEpisodeDirs, removeStaleWorkspaces } from '../../episode/workspace.js';
import { checkEvidence } from '../../gate/evidence.js';
import { IntegrationStage, type IntegrationOutcome } from '../../integrate/integration-stage.js';
import { Lander } from '../../integrate/lander.js';
import { writeQueueSnapshot } from '../../integrate/queue-snapshot.js';
import { runVerification } from '../../integrate/verification/run-verification.js';
import type { VerificationResult } from '../../integrate/verification/job.js';
import type { VerificationQueue } from '../../integrate/verification/queue.js';
import type { EpisodeQueue } from '../../queue/episode-queue.js';
import { readDoneTasks } from '../../world/history/accepted-history.js';
import { openEpisodeRecord, type EpisodeRecord } from '../../ledger/episode-record.js';
import { ledgerOf } from '../../ledger/git-ledger.js';
import type { EpisodeSummary } from '../../ledger/summary.js';
import type { TaskSpec, WorldManifest } from '../../manifest/schema.js';
import { readTaskRetries } from '../../world/task-retries.js';
import type { WorldRepo } from '../../world/world-repo.js';
import { secretEnvNames } from '../../ledger/secret-env.js';
import { finishEpisode, forgedResultProblem } from './finish-episode.js';
import type { LeaseStore } from '../../queue/lease-store.js';
import { episodesOfTask } from '../policy-ledger.js';
import type { RunPorts } from './ports.js';
import { Inbox } from './inbox.js';
import type { RunEvent, RunSummary } from './events.js';
import { decide, initialPolicyState, nextWake, type PolicyCommand, type PolicyEvent, type PolicyState, type WorldHold } from '../run-policy.js';
import { writeWorldHold } from './world-hold.js';
import { recoverOpenRecords, releaseLeftoverLeases } from './recovery.js';
import type { StopReason } from '../scheduler.js';
import type { EpisodeReason } from '../../errors/rejection-reasons.js';

/**
 * A run whose episodes run on workers elsewhere: its ports' queues and leases are shared (BullMQ,
 * Redis). The run then keeps them in step (lease renewals, lost jobs put back), leaves running
 * episodes to their workers when it stops, and answers the workers' tip requests.
 */
export interface DistributedRun {
  /** How often to check that the queue still holds every running episode. @default 5000 */
  reconcileMs?: number;
  /** Answers workers asking for their change's place in the integration queue; without it they gate on their base. */
  tips?: TipService;
}

export interface RunOptions {
  world: WorldRepo;
  /** The adapters of this run, built by the command's composition root (src/compose/embedded-run.ts for one process). */
  ports: RunPorts;
  signal?: AbortSignal;
  onEvent?: (event: RunEvent) => void;
  /** Workers elsewhere, through the ports' shared queues; without it episodes run in this process. */
  distributed?: DistributedRun;
  /** Run the pending tasks even when the goal's evidence passes. */
  pastEvidence?: boolean;
  /** Start at most this many episodes in this run, then end as when goal.stop.maxEpisodes is spent (benchmarks). */
  maxEpisodes?: number;
}

type Wake =
  | { kind: 'episode'; result: EpisodeResult }
  | { kind: 'verification'; result: VerificationResult }
  | { kind: 'integrated'; outcome: IntegrationOutcome }
  | { kind: 'aborted' }
  | { kind: 'tick' };

/**
 * `genesis run` as a pipeline: schedule → episode → integrate → land. The run policy (pure)
 * decides; this loop carries out its commands against the ports: the episode queue (agent and
 * own gate on a worker), the integration stage (speculative commits verified on workers, landed
 * by the lander), the lease store and the ledger. It never waits on integration: a slot freed by
 * a change that passed its gate is refilled at once. Everything it needs to resume is in the world.
 */
export async function runWorld(options: RunOptions): Promise<RunSummary> {
  const started = Date.now();
  const { world } = options;
  const emit = options.onEvent ?? (() => undefined);
  let manifest = await world.manifestAt('HEAD');
  const startHead = await world.head(manifest.branch);
  const { sandbox, leases } = options.ports;
  await sandbox.check();
  const agent = await options.ports.agent(manifest, startHead);
  const ledger = ledgerOf(world, { secretEnv: secretEnvNames(manifest.agent) });
  // The run holds the world alone: what the journal keeps of a run before it is that run's leftovers.
  await ledger.tidyJournal();
  const journaled = await ledger.journaled();
  // Summaries of every episode, through the index (ledger-summary.ts): a run's start no longer reads every record of the history.
  const summaries = new Map((await ledger.readSummaries()).map((r) => [r.id, r]));
  // Records this run knows in full: the open ones (recovery needs their candidates and gates), then every one it starts or closes.
  const records = new Map<string, EpisodeRecord>();
  for (const s of summaries.values()) {
    const full = s.status === 'final' ? null : await ledger.read(s.id);
    if (full) records.set(full.id, full);
  }
  const worker = `${hostname()}:${process.pid}`;
  const distributed = options.distributed;
  const queue = options.ports.episodes(
    (job, signal) =>
      runEpisode(job, {
        world,
        ledger,
        sandbox,
        agent,
        worker,
        signal,
        reserveTip,
        onPhase: (j, phase) => emit({ type: 'episode-phase', id: j.episodeId, task: j.task, phase }),
        onWait: (j, what) => emit({ type: 'wait', id: j.episodeId, task: j.task, what }),
        hold: distributed === undefined,
      }),
    manifest.parallelism,
  );
  const slots = verificationSlots(manifest);
  const verifications = options.ports.verifications(
    (job) => runVerification(job, { world, sandbox, worker, onWait: (j, what) => emit({ type: 'wait', id: j.verificationId, task: j.task, what }) }),
    slots,
  );
  const lander = new Lander(world, ledger, manifest.branch, startHead);
  const inbox = new Inbox<Wake>();
  let snapshots: Promise<void> = Promise.resolve();
  const stage = new IntegrationStage({
    world,
    ledger,
    lander,
    verifications,
    slots,
    head: startHead,
    worldName: manifest.name,
    onOutcome: async (outcome) => inbox.push({ kind: 'integrated', outcome }),
    onChange: (entries) => {
      emit({ type: 'integration', entries });
      // One write at a time, in order: the file always holds the latest state.
      snapshots = snapshots.then(() => writeQueueSnapshot(world.scratchDir, lander.head, entries)).catch(() => undefined);
    },
  });
  // Ratchet worlds keep the episode's score in the trailer of what lands, known only after its gate: no places before it.
  const reserveTip: ReserveTip = (c) =>
    manifest.verify.mode === 'ratchet' || finished
      ? Promise.resolve(null)
      : stage.reserve({ id: c.episodeId, task: c.task, candidate: c.candidate, base: c.base });
  const guard = async () => {
    const moved = await lander.guard();
    if (moved) emit({ type: 'foreign-move', commit: moved.foreign, quarantine: moved.quarantine });
  };

  const recovered = await recoverOpenRecords({ world, ledger, branch: manifest.branch, records, distributed: distributed !== undefined, journaled });
  for (const r of records.values()) summaries.set(r.id, r);
  if (!distributed) await removeStaleWorkspaces(world);
  else await removeClosedEpisodeDirs(world, (id) => summaries.get(id)?.status === 'final');
  // A killed scheduler's leases outlive it (in Redis, until their ttl): all but those of the episodes taken over go at once.
  await releaseLeftoverLeases(leases, recovered);
  const jobs = new Map<string, EpisodeJob>(
    recovered.running.map((r) => [r.id, { episodeId: r.id, world: manifest.name, task: r.task, attempt: r.attempt, base: r.base }]),
  );
  const done = await readDoneTasks(world.path, manifest.branch);
  let policy: PolicyState = initialPolicyState({
    config: {
      parallelism: manifest.parallelism,
      maxAttempts: manifest.retry.maxAttempts,
      blockOnRepeat: manifest.retry.blockOnRepeat,
      budgets: runBudgets(
        { ...manifest, goal: { ...manifest.goal, stop: liftedBudgets(manifest.goal.stop, await readBudgetLifts(world.path)) } },
        summaries.size,
        options.maxEpisodes,
      ),
      distributed: distributed !== undefined,
      pastEvidence: options.pastEvidence ?? false,
    },
    tasks: manifest.tasks,
    done,
    records: summaries.values(),
    now: Date.now(),
    running: new Map(recovered.running.map((r) => [r.id, r.task])),
    integrating: new Map(recovered.integrating.map((r) => [r.id, r.task])),
    retries: await readTaskRetries(world.path),
  });
  emit({
    type: 'start',
    world: world.path,
    head: startHead,
    sandbox: sandbox.kind,
    agent: agent.label,
    tasks: manifest.tasks.length,
    done: done.size,
    recovered: recovered.closed + recovered.running.length + recovered.integrating.length,
    parallelism: manifest.parallelism,
  });

  let finished: StopReason | null = null;
  let reconciledAt = Date.now();
  let evidence: RunSummary['evidence'] = null;
  let closed = false;

  const apply = async (event: PolicyEvent): Promise<void> => {
    if (event.type === 'started' || event.type === 'finished') records.set(event.record.id, event.record);
    const decision = decide(policy, event);
    policy = decision.state;
    for (const command of decision.commands) await execute(command);
  };

  const execute = async (command: PolicyCommand): Promise<void> => {
    switch (command.type) {
      case 'start':
        return startEpisodes(command.tasks, command.limit);
      case 'stop-episodes':
        if (policy.stop?.kind === 'interrupted') {
          // Changes waiting for integration keep their passing records: the next run takes them up again.
          for (const id of await stage.withdrawAll()) await apply({ type: 'withdrawn', id });
        }
        await closeEpisodes();
        return apply({ type: 'tick', now: Date.now() });
      case 'check-evidence': {
        const head = lander.head!;
        const verdict = await checkEvidence(world, sandbox, manifest, head);
        if (!verdict) return;
        evidence = { command: manifest.goal.evidence!, passed: verdict.ok };
        emit({ type: 'evidence', commit: head, passed: verdict.ok, command: manifest.goal.evidence! });
        return apply({ type: 'evidence', passed: verdict.ok, command: manifest.goal.evidence! });
      }
      case 'finish':
        finished = command.reason;
    }
  };

  const closeEpisodes = async () => {
    if (closed) return;
    closed = true;
    // In process, closing aborts the agents; their results (abandoned) still arrive through the inbox.
    if (!distributed) await queue.close();
  };

  const startEpisodes = async (tasks: Array<{ task: TaskSpec; attempt: number }>, limit: number): Promise<void> => {
    const head = lander.head!;
    const starting: Array<{ record: EpisodeRecord; task: TaskSpec; attempt: number }> = [];
    const refused: string[] = [];
    for (const { task, attempt } of tasks) {
      if (starting.length >= limit) break;
      const id = newEpisodeId();
      if (!(await leases.tryAcquire(id, task.paths))) {
        refused.push(task.id);
        continue;
      }
      starting.push({
        record: openEpisodeRecord({ id, world: manifest.name, task: task.id, attempt, base: head, agent: agentForAttempt(agent, attempt).label, worker }),
        task,
        attempt,
      });
    }
    // Each record is in the world before its job exists; written together, a wave of episodes starts at once, not one write apart.
    // In process, in the ledger's journal (the episode's one git write is its final record); for workers elsewhere, in git.
    await Promise.all(starting.map(({ record }) => (distributed ? ledger.write(record) : ledger.open(record))));
    for (const { record, task, attempt } of starting) {
      const id = record.id;
      const earlier = episodesOfTask(policy.ledger, task.id)
        .filter((r) => r.status === 'final' && r.outcome !== 'accepted')
        .map((r) => r.id)
        .slice(-10);
      const job: EpisodeJob = { episodeId: id, world: manifest.name, task: task.id, attempt, base: head, earlier };
      jobs.set(id, job);
      await apply({ type: 'started', record });
      emit({ type: 'episode-start', id, task: task.id, attempt });
      await queue.submit(job);
    }
    await apply({ type: 'starts-done', now: Date.now(), refused });
    for (const t of refused) if ((policy.cooldown.get(t) ?? 0) > Date.now()) emit({ type: 'lease-wait', task: t, untilMs: policy.cooldown.get(t)! });
  };

  const onEpisodeResult = async (result: EpisodeResult): Promise<void> => {
    if (!policy.running.has(result.episodeId)) {
      // Delivered twice, or already integrating. A duplicate run may have reopened a closed record: close it again.
      const known = records.get(result.episodeId) ?? summaries.get(result.episodeId);
      const now = known?.status === 'final' ? await ledger.read(result.episodeId) : null;
      // A record closed before this run is known by its summary: the reopened record, closed again as the summary says.
      if (known && now && now.status !== 'final') await ledger.write(records.get(result.episodeId) ?? { ...now, ...closingOf(known) });
      await queue.acknowledge(result.episodeId);
      return;
    }
    jobs.delete(result.episodeId);
    // Its place in the integration queue, taken when its agent finished (see ReserveTip).
    const placed = stage.holds(result.episodeId);
    if (result.verdict === 'passed') {
      const record = await ledger.read(result.episodeId);
      const forged = forgedResultProblem(record, result);
      if (!forged) {
        await apply({ type: 'passed', id: result.episodeId });
        const change = {
          id: result.episodeId,
          task: result.task,
          candidate: result.candidate!,
          base: result.gatedOn ?? result.base,
          ...(result.source ? { source: result.source } : {}),
        };
        if (placed) await stage.gated(change, result.candidate!);
        else await stage.join(change);
        await queue.acknowledge(result.episodeId);
        return;
      }
      if (placed) await stage.withdraw(result.episodeId);
      const refused: EpisodeRecord = {
        ...(record ?? records.get(result.episodeId)!),
        status: 'final',
        outcome: 'rejected',
        reason: 'unverified-result',
        message: `a result claimed the gate passed, but the ledger does not agree: ${forged}`,
        signature: 'unverified-result',
        endedAt: new Date().toISOString(),
      };
      await ledger.write(refused);
      return ended(refused, null, result.episodeId);
    }
    if (placed) await stage.withdraw(result.episodeId);
    const final = await finishEpisode(ledger, result, records.get(result.episodeId));
    const hold = result.holdUntil === undefined ? null : { untilMs: result.holdUntil, message: result.message ?? '' };
    return ended(
      final,
      result.fatal ? { reason: result.reason ?? ('worker-error' satisfies EpisodeReason), message: result.message ?? '' } : null,
      result.episodeId,
      hold,
    );
  };

  const ended = async (
    final: EpisodeRecord,
    fatal: { reason: string; message: string } | null,
    ackId: string,
    hold: WorldHold | null = null,
  ): Promise<void> => {
    await leases.release(final.id);
    await queue.acknowledge(ackId);
    emitEnd(emit, final);
    const before = policy.hold;
    await apply({ type: 'finished', record: final, fatal, hold, now: Date.now() });
    if (policy.hold && policy.hold !== before) {
      emit({ type: 'hold', untilMs: policy.hold.untilMs, message: policy.hold.message });
      await writeWorldHold(world.scratchDir, policy.hold).catch(() => undefined);
    }
  };

  const onIntegrated = async (outcome: IntegrationOutcome): Promise<void> => {
    const final = outcome.record;
    await leases.release(final.id);
    emitEnd(emit, final);
    if (outcome.type === 'landed') {
      manifest = await world.manifestAt(outcome.head);
      await apply({ type: 'landed', task: final.task, tasks: manifest.tasks });
    }
    await apply({ type: 'finished', record: final, now: Date.now() });
  };

  // Results of both stages arrive through one inbox, handled one at a time.
  const pumpEpisodes = async () => {
    while (!finished) inbox.push({ kind: 'episode', result: await queue.nextResult() });
  };
  const pumpVerifications = async () => {
    while (!finished) inbox.push({ kind: 'verification', result: await verifications.nextResult() });
  };
  void pumpEpisodes();
  void pumpVerifications();
  const onAbort = () => inbox.push({ kind: 'aborted' });
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  // Workers ask for places only for an episode this run is running, from the base it was given.
  distributed?.tips?.serve((c) =>
    policy.running.get(c.episodeId) === c.task && jobs.get(c.episodeId)?.base === c.base ? reserveTip(c) : Promise.resolve(null),
  );
  try {
    await guard();
    const startVerdict = await checkEvidence(world, sandbox, manifest, startHead);
    if (startVerdict) {
      evidence = { command: manifest.goal.evidence!, passed: startVerdict.ok };
      emit({ type: 'evidence', commit: startHead, passed: startVerdict.ok, command: manifest.goal.evidence! });
      await apply({ type: 'evidence', passed: startVerdict.ok, command: manifest.goal.evidence! });
    }
    for (const r of recovered.integrating) {
      // Its change exists and the policy counts it as integrating: it joins even if its paths are taken.
      await leases.tryAcquire(r.id, manifest.tasks.find((t) => t.id === r.task)?.paths ?? []);
      await stage.join({ id: r.id, task: r.task, candidate: r.candidate!, base: r.gatedOn ?? r.base, ...(r.source ? { source: r.source } : {}) });
    }
    if (!finished) await apply({ type: 'tick', now: Date.now(), retries: await readTaskRetries(world.path) });
    while (!finished) {
      emit({
        type: 'progress',
        done: policy.done.size,
        tasks: policy.tasks.length,
        running: [...policy.running.values()],
        accepted: policy.tally.accepted,
        rejected: policy.tally.rejected,
        failed: policy.tally.failed,
      });
      const wake = nextWake(policy);
      const waitMs = Math.min(wake === null ? Infinity : Math.max(0, wake - Date.now()), distributed ? (distributed.reconcileMs ?? 5_000) : Infinity);
      const next = await inbox.next(Number.isFinite(waitMs) ? waitMs : null);
      await guard();
      switch (next.kind) {
        case 'episode':
          await onEpisodeResult(next.result);
          break;
        case 'verification':
          await stage.verified(next.result);
          break;
        case 'integrated':
          await onIntegrated(next.outcome);
          break;
        case 'aborted':
          await apply({ type: 'aborted' });
          // Distributed episodes keep running on their workers; the next run takes them back.
          if (distributed && !finished) finished = { kind: 'interrupted' };
          break;
        case 'tick':
          break;
      }
      // By the clock, not only when the inbox is quiet: a steady stream of results must not starve lease renewals.
      if (distributed && Date.now() - reconciledAt >= (distributed.reconcileMs ?? 5_000)) {
        await reconcile(queue, verifications, leases, jobs, policy);
        reconciledAt = Date.now();
      }
      if (!finished) await apply({ type: 'tick', now: Date.now(), retries: await readTaskRetries(world.path) });
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    await closeEpisodes();
    await queue.close();
    await verifications.close();
  }
  await guard();
  // A worker running a duplicate of a closed episode (a job put back after Redis lost it) may have reopened its record:
  // only one this run closed (or found open) can be, so only those are read, not the whole ledger.
  const closedHere = [...records.values()].filter((r) => r.status === 'final');
  for (const known of closedHere) if ((await ledger.read(known.id))?.status === 'running') await ledger.write(known);
  // Changes a stopping run withdrew from integration stay open for the next run: in git, like any record, not only in the journal.
  await ledger.writeJournal();
  if (distributed) await removeClosedEpisodeDirs(world, (id) => (records.get(id) ?? summaries.get(id))?.status === 'final');
  const stop = finished!;
  emit({ type: 'stop', reason: stop });
  return { stop, head: lander.head!, ...policy.tally, durationMs: Date.now() - started, evidence };
}

/** What closing an episode sets on its record (a summary holds all of it). */
function closingOf(s: EpisodeSummary): Partial<EpisodeRecord> {
  return { status: s.status, outcome: s.outcome, reason: s.reason, message: s.message, signature: s.signature, endedAt: s.endedAt, commit: s.commit };
}

/** The manifest's budgets, with a run's own episode limit counted on top of the records already in the ledger. */
function runBudgets(manifest: WorldManifest, recorded: number, maxEpisodes: number | undefined): WorldManifest['goal']['stop'] {
  if (maxEpisodes === undefined) return manifest.goal.stop;
  return { ...manifest.goal.stop, maxEpisodes: Math.min(manifest.goal.stop.maxEpisodes ?? Infinity, recorded + maxEpisodes) };
}

/** Verification slots: `integration.slots` in world.yaml, else as many as episodes run at once. */
function verificationSlots(manifest: WorldManifest): number {
  return manifest.integration?.slots ?? manifest.parallelism;
}

/** Keeps every lease the scheduler holds alive (episodes and changes in integration) and every job submitted. */
async function reconcile(
  queue: EpisodeQueue,
  verifications: VerificationQueue,
  leases: LeaseStore,
  jobs: Map<string, EpisodeJob>,
  policy: PolicyState,
): Promise<void> {
  for (const [id, task] of [...policy.running, ...policy.integrating]) {
    // Lost (a Redis restart dropped it): taken again, so no new episode takes these paths meanwhile.
    const paths = policy.tasks.find((t) => t.id === task)?.paths;
    if (!(await leases.renew(id)) && paths) await leases.tryAcquire(id, paths);
  }
  for (const [id, job] of jobs) if (policy.running.has(id)) await queue.ensureSubmitted(job);
  // A verification job Redis lost would leave its change waiting in the integration queue for ever.
  await verifications.ensureSubmitted();
}

function emitEnd(emit: (event: RunEvent) => void, final: EpisodeRecord): void {
  emit({
    type: 'episode-end',
    id: final.id,
    task: final.task,
    attempt: final.attempt,
    outcome: final.outcome!,
    reason: final.reason,
    message: final.message,
    commit: final.commit,
    durationMs: Date.parse(final.endedAt!) - Date.parse(final.startedAt),
  });
}
