import { z } from 'zod';
import { verifyCandidate, type CandidateVerdict } from '../../gate/verify-candidate.js';
import type { WorldManifest } from '../../manifest/schema.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import type { LocalWorld } from '../../world/local-world.js';
import type { WorldRepo } from '../../world/world-repo.js';
import { REPLAY_TASK } from './scratch-world.js';

const sha = z.string().regex(/^[0-9a-f]{40}$/, 'a full object id');

/** One gate a calibration asks for: validated when it is sent to a worker and again when the worker takes it. */
export const calibrationGateJobSchema = z
  .object({
    /** Unique within the calibration: names the gate's directory and log. */
    name: z.string().regex(/^[A-Za-z0-9._-]+$/),
    head: sha,
    fromTree: sha,
    candidateTree: sha,
    /** Wait this long for the head's test baseline another gate of this calibration is learning. */
    awaitHeadBaselineMs: z.number().int().min(0).optional(),
    /** A shorter gate time than verify.timeoutSec (never a longer one): a mutant's, from the suite's own time. */
    timeoutSec: z.number().int().positive().optional(),
    /**
     * A mutant's gate: a failing test is the catch it asks for, so only a failure the machine may
     * have made (a per-test or the gate's timeout) is run again; a replay's runs every failure again.
     */
    rerunOnlyTimeouts: z.boolean().optional(),
  })
  .strict();

export type CalibrationGateJob = z.output<typeof calibrationGateJobSchema>;

/**
 * The port between a calibration and whatever runs its gates: this process, or the world's
 * workers. Replays and mutants only say what to gate, so where gates run is chosen by the
 * composition root, not by calibrate's core.
 */
export type CalibrationGate = (job: CalibrationGateJob) => Promise<CandidateVerdict>;

/**
 * Opens the gate for one calibration, once its scratch world exists (the gates read from it).
 * `worldHead` is the world's commit `manifest` was read at; the scratch world reaches it through
 * the objects it borrows, so a gate elsewhere reads the very same manifest there.
 */
export type CalibrationGates = (where: { scratch: LocalWorld; worldHead: string; manifest: WorldManifest; sandbox: Sandbox }) => CalibrationGate;

/** What one calibration gate needs, wherever it runs. */
export interface CalibrationGateContext {
  scratch: WorldRepo;
  manifest: WorldManifest;
  sandbox: Sandbox;
  /** Told what a long wait is on, and null when it ends. */
  onWait?: (what: string | null) => void;
}

/**
 * One calibration gate: the candidate judged as an episode's change to `head` would be, under the
 * task a replayed change is judged by. This process and a worker both gate through here, so a
 * calibration measures the same gate wherever it runs.
 */
export function runCalibrationGate(context: CalibrationGateContext, job: CalibrationGateJob): Promise<CandidateVerdict> {
  const { verify } = context.manifest;
  const timeoutSec = Math.min(verify.timeoutSec, job.timeoutSec ?? verify.timeoutSec);
  return verifyCandidate({
    world: context.scratch,
    sandbox: context.sandbox,
    head: job.head,
    headManifest: timeoutSec === verify.timeoutSec ? context.manifest : { ...context.manifest, verify: { ...verify, timeoutSec } },
    fromTree: job.fromTree,
    candidateTree: job.candidateTree,
    baseTree: job.fromTree,
    task: REPLAY_TASK,
    doneTasks: new Set(),
    name: job.name,
    ...(job.awaitHeadBaselineMs !== undefined ? { awaitHeadBaselineMs: job.awaitHeadBaselineMs } : {}),
    ...(context.onWait ? { onWait: context.onWait } : {}),
    ...(job.rerunOnlyTimeouts ? { rerunOnlyTimeouts: true } : {}),
  });
}

/** Gates in this process, with the sandbox the world's manifest asks for. */
export const localCalibrationGates: CalibrationGates =
  ({ scratch, manifest, sandbox }) =>
  (job) =>
    runCalibrationGate({ scratch, manifest, sandbox }, job);
