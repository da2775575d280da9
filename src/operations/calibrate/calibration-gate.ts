import { verifyCandidate, type CandidateVerdict } from '../../gate/verify-candidate.js';
import type { WorldManifest } from '../../manifest/schema.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import type { LocalWorld } from '../../world/local-world.js';
import { REPLAY_TASK } from './scratch-world.js';

/** One gate a calibration asks for: a candidate tree judged against a head, in the scratch world. */
export interface CalibrationGateJob {
  /** Unique within the calibration: names the gate's directory and log. */
  name: string;
  head: string;
  fromTree: string;
  candidateTree: string;
  /** Wait this long for the head's test baseline another gate of this calibration is learning. */
  awaitHeadBaselineMs?: number;
}

/**
 * The port between a calibration and whatever runs its gates: this process, or the world's
 * workers. Replays and mutants only say what to gate, so where gates run is chosen by the
 * composition root, not by calibrate's core.
 */
export type CalibrationGate = (job: CalibrationGateJob) => Promise<CandidateVerdict>;

/** Opens the gate for one calibration, once its scratch world exists (the gates read from it). */
export type CalibrationGates = (where: { scratch: LocalWorld; manifest: WorldManifest; sandbox: Sandbox }) => CalibrationGate;

/** Gates in this process, with the sandbox the world's manifest asks for. */
export const localCalibrationGates: CalibrationGates =
  ({ scratch, manifest, sandbox }) =>
  (job) =>
    verifyCandidate({
      world: scratch,
      sandbox,
      head: job.head,
      headManifest: manifest,
      fromTree: job.fromTree,
      candidateTree: job.candidateTree,
      baseTree: job.fromTree,
      task: REPLAY_TASK,
      doneTasks: new Set(),
      name: job.name,
      ...(job.awaitHeadBaselineMs !== undefined ? { awaitHeadBaselineMs: job.awaitHeadBaselineMs } : {}),
    });
