import type { ErrorCode } from '../errors/error-codes.js';
import { GenesisError, isGenesisError } from '../errors/genesis-error.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { WorldManifest } from '../manifest/schema.js';
import type { SteeringRequestInput } from '../world/steering-requests.js';
import type { WorldRepo } from '../world/world-repo.js';
import { addTaskUnlocked } from './add-task.js';
import { amendWorld, type AmendResult } from './amend-world.js';
import type { LandSteering } from './land-steering.js';
import { reopenTask, type ReopenResult } from './reopen-task.js';

/** What came of a request: what the operation returned, or the error it refused with (as data, so it crosses processes). */
export type SteeringOutcome =
  | { ok: true; kind: 'amend'; result: AmendResult }
  | { ok: true; kind: 'add-task'; result: { commit: string; task: string } }
  | { ok: true; kind: 'reopen'; result: ReopenResult }
  | { ok: false; error: { code: string; message: string; hint?: string } };

export interface SteeringDeps {
  /** The sandbox the gate of the changed world runs in. */
  sandboxFor: (m: WorldManifest) => Promise<Sandbox>;
  /** How the verified commit lands: the run's lander in a running world; a compare-and-swap under the run lock otherwise. */
  land?: LandSteering;
}

/**
 * Carries out one steering request against the world as it is now: the same operation whether a
 * running scheduler took it (between two landings, through its lander) or the command itself
 * holds the run lock. A refusal (a GenesisError) is part of the outcome; anything else throws.
 */
export async function carryOutSteering(world: WorldRepo, request: SteeringRequestInput, deps: SteeringDeps): Promise<SteeringOutcome> {
  const land = deps.land;
  try {
    switch (request.kind) {
      case 'amend': {
        const input = { from: request.source, tree: request.tree, base: request.base, message: request.message, by: request.by, force: request.force };
        return { ok: true, kind: 'amend', result: await amendWorld(world, input, deps.sandboxFor, land) };
      }
      case 'add-task':
        return {
          ok: true,
          kind: 'add-task',
          result: { commit: await addTaskUnlocked(world, request.task, deps.sandboxFor, land), task: String(request.task.id) },
        };
      case 'reopen':
        return { ok: true, kind: 'reopen', result: await reopenTask(world, { task: request.task, reason: request.reason, by: request.by }, land) };
    }
  } catch (error) {
    if (!isGenesisError(error)) throw error;
    return { ok: false, error: { code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}) } };
  }
}

interface SteeringResults {
  amend: AmendResult;
  'add-task': { commit: string; task: string };
  reopen: ReopenResult;
}

/** The outcome's result, or the error its operation refused with, thrown again for a command that prints it. */
export function outcomeResult<K extends keyof SteeringResults>(outcome: SteeringOutcome, kind: K): SteeringResults[K] {
  if (!outcome.ok) throw new GenesisError(outcome.error.code as ErrorCode, outcome.error.message, outcome.error.hint ? { hint: outcome.error.hint } : {});
  if (outcome.kind !== kind) throw new GenesisError('internal', `a ${kind} request was answered as ${outcome.kind}`);
  return outcome.result as SteeringResults[K];
}
