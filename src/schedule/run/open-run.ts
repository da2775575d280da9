import { hostname } from 'node:os';
import { runEpisode } from '../../episode/run-episode.js';
import { IntegrationStage } from '../../integrate/integration-stage.js';
import { Lander } from '../../integrate/lander.js';
import { writeQueueSnapshot } from '../../integrate/queue-snapshot.js';
import { queueWaits } from '../../integrate/queue-waits.js';
import type { VerificationJob } from '../../queue/verification-job.js';
import { runVerification } from '../../integrate/verification/run-verification.js';
import { ledgerOf } from '../../ledger/git-ledger.js';
import { secretEnvNames } from '../../ledger/secret-env.js';
import { LiveWaits } from '../live-waits.js';
import type { RunEvent } from './ports/events.js';
import { Inbox } from './ports/inbox.js';
import { reserveTip } from './carry-out/reserve-tip.js';
import { clearGateRunning, markGateRunning } from './gate-marks.js';
import { policyConfig } from './policy-config.js';
import { readLedger } from './read-ledger.js';
import type { EpisodeJob } from '../../episode/episode-job.js';
import { initialPolicyState, mayHandOver } from '../run-policy.js';
import type { Run, RunOptions, Wake } from './ports/state.js';

/**
 * Opens a run: the manifest and head it starts from, the sandbox checked, the agent made, the
 * ledger read (summaries of every episode, the open records in full), and the stages wired to this
 * run: the episode queue (agent and own gate on a worker), the verification queue, the lander and
 * the integration stage. Nothing is recovered yet: the policy knows no episode until recoverRun.
 */
export async function openRun(options: RunOptions): Promise<Run> {
  const { world } = options;
  const startedAt = Date.now();
  const tell = options.onEvent ?? (() => undefined);
  // Waits are kept where genesis status --world and the dashboard read them, besides being told.
  const waits = new LiveWaits(world.scratchDir);
  // A run that died (kill -9) left its waits in the file: none of them is this run's.
  await waits.clear();
  const emit = (event: RunEvent) => {
    if (event.type === 'wait') waits.note(event.id, event.task, event.what);
    tell(event);
  };
  const manifest = await world.manifestAt('HEAD');
  const startHead = await world.head(manifest.branch);
  const { sandbox, leases } = options.ports;
  await sandbox.check();
  const agent = await options.ports.agent(manifest, startHead);
  const ledger = ledgerOf(world, { secretEnv: secretEnvNames(manifest.agent) });
  const { journaled, summaries, records } = await readLedger(ledger);
  const worker = `${hostname()}:${process.pid}`;
  const { distributed } = options;
  // In process, a gate that takes the process down (out of memory) is known to the next run by its mark (crashClosing).
  const markGates = distributed === undefined;
  const onPhase = (j: EpisodeJob, phase: string) => {
    if (markGates && phase.startsWith('gate')) markGateRunning(world, j.episodeId);
    else if (markGates) clearGateRunning(world, j.episodeId);
    emit({ type: 'episode-phase', id: j.episodeId, task: j.task, phase });
  };
  const queue = options.ports.episodes(
    (job, signal) =>
      runEpisode(job, {
        world,
        ledger,
        sandbox,
        agent,
        worker,
        signal,
        reserveTip: (change) => reserveTip(run, change),
        watchPlace: (change) => run.stage.watchPlace(change.episodeId, change.commit),
        placeAfterFailure: async (change) => {
          // A change ahead still judged answers within its gate's time (and its run again); past that, the base decides.
          const withinMs = manifest.verify.timeoutSec * 3 * 1000;
          let ahead = await run.stage.judgedAhead(change.episodeId, change.commit, 0);
          if (ahead === null) {
            emit({ type: 'wait', id: job.episodeId, task: job.task, what: 'the changes ahead of it in the integration queue to be judged' });
            ahead = await run.stage.judgedAhead(change.episodeId, change.commit, withinMs);
            emit({ type: 'wait', id: job.episodeId, task: job.task, what: null });
          }
          if (ahead === 'passed') return 'own';
          return ahead === 'moved' && mayHandOver(run.policy, change.episodeId, job.task) ? 'queue' : null;
        },
        onPhase,
        onWait: (j, what) => emit({ type: 'wait', id: j.episodeId, task: j.task, what }),
        hold: distributed === undefined,
      }).finally(() => {
        if (markGates) clearGateRunning(world, job.episodeId);
      }),
    manifest.parallelism,
  );
  const slots = manifest.integration?.slots ?? manifest.parallelism;
  const onVerificationWait = (j: VerificationJob, what: string | null) => emit({ type: 'wait', id: j.verificationId, task: j.task, what });
  const verifications = options.ports.verifications((job) => {
    // Marked with the change's episode: a verification that takes the process down counts as that change's gate.
    if (markGates) markGateRunning(world, job.episodeId);
    return runVerification(job, { world, sandbox, worker, onWait: onVerificationWait }).finally(() => {
      if (markGates) clearGateRunning(world, job.episodeId);
    });
  }, slots);
  const lander = new Lander(world, ledger, manifest.branch, startHead);
  const inbox = new Inbox<Wake>();
  // A change that waits in the integration queue (for a slot, for those ahead) is told and kept like any other wait.
  let queueWaiting = new Map<string, { task: string; what: string }>();
  const noteQueueWaits = (entries: Parameters<typeof queueWaits>[0]) => {
    const now = new Map(queueWaits(entries, slots).map((w) => [`${w.id}:queue`, w]));
    for (const [id, w] of queueWaiting) if (!now.has(id)) emit({ type: 'wait', id, task: w.task, what: null });
    for (const [id, w] of now) if (queueWaiting.get(id)?.what !== w.what) emit({ type: 'wait', id, task: w.task, what: w.what });
    queueWaiting = now;
  };
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
      noteQueueWaits(entries);
      // One write at a time, in order: the file always holds the latest state.
      run.snapshots = run.snapshots.then(() => writeQueueSnapshot(world.scratchDir, lander.head, entries)).catch(() => undefined);
    },
  });
  const config = await policyConfig(options, manifest, ledger, summaries.size);
  // Last, so a run that fails to open leaves no subscription behind.
  const unwatchWorkerWaits = distributed?.waits
    ? await distributed.waits.watch((w) => emit({ type: 'wait', id: w.id, task: w.task, what: w.what === null ? null : `${w.what}, on worker ${w.worker}` }))
    : async () => undefined;
  const run: Run = {
    world,
    emit,
    tracer: options.ports.tracer,
    startedAt,
    distributed,
    manifest,
    startHead,
    sandbox,
    leases,
    agent,
    ledger,
    worker,
    journaled,
    summaries,
    records,
    queue,
    verifications,
    lander,
    stage,
    inbox,
    snapshots: Promise.resolve(),
    waits,
    unwatchWorkerWaits,
    recovered: { integrating: [], running: [], reviewing: [], closed: 0 },
    jobs: new Map(),
    raceLeases: new Map(),
    policy: initialPolicyState({ config, tasks: manifest.tasks, done: new Set(), records: [], now: Date.now() }),
    evidence: null,
    reconciledAt: Date.now(),
    episodesStopped: false,
    steering: new Map(),
    loopEnded: false,
  };
  return run;
}
