import type { WorldRepo } from '../../world/world-repo.js';
import { computeSimTruth, parseSimAnswer, parseSimStepId, simStepPath } from './chain.js';

/** Whether a sim-chain world's accepted head is truly right, step by step. */
export interface SimJudgement {
  /** Tasks in the manifest. */
  steps: number;
  /** Tasks the accepted history carries. */
  done: number;
  /** Done steps whose answer is not i(i + 1)/2: silent errors the gate let through. */
  wrong: string[];
  /** Every task done and every answer right: the run succeeded. */
  success: boolean;
}

/**
 * The hidden check of a sim-chain world: compares every accepted answer with the truth. It runs
 * on the orchestrator's side, outside the gate and outside the world (no file of the repository
 * knows the full truth), so it sees the silent errors that the world's own tests missed.
 */
export async function judgeSimWorld(world: WorldRepo): Promise<SimJudgement> {
  const manifest = await world.manifestAt('HEAD');
  const head = await world.head(manifest.branch);
  const done = await world.doneTasks(manifest.branch);
  const wrong: string[] = [];
  for (const task of manifest.tasks) {
    const index = parseSimStepId(task.id);
    if (!done.has(task.id)) continue;
    const text = index === null ? null : await world.readFile(head, simStepPath(index));
    const answer = text === null ? null : parseSimAnswer(text);
    if (index === null || answer !== computeSimTruth(index)) wrong.push(task.id);
  }
  const doneCount = manifest.tasks.filter((t) => done.has(t.id)).length;
  return { steps: manifest.tasks.length, done: doneCount, wrong, success: doneCount === manifest.tasks.length && wrong.length === 0 };
}
