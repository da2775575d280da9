import { setTimeout as sleep } from 'node:timers/promises';
import { GenesisError, isGenesisError } from '../errors/genesis-error.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { WorldManifest } from '../manifest/schema.js';
import { acquireRunLock, readRunLock } from '../world/run-lock.js';
import type { PendingSteering, SteeringRequestInput } from '../world/steering-requests.js';
import type { WorldRepo } from '../world/world-repo.js';
import { carryOutSteering, type SteeringOutcome } from './carry-out-steering.js';

export interface SteerOptions {
  sandboxFor: (m: WorldManifest) => Promise<Sandbox>;
  /** What is asked, for the progress lines (`the amendment`). */
  what: string;
  /** A progress line every few seconds while a running scheduler has the request. */
  onWait?: (line: string) => void;
  /** How long a running scheduler may take to take the request before the command gives up. @default 120000 */
  timeoutMs?: number;
  /** @default 250 */
  pollMs?: number;
  /** Giving up (Ctrl-C): a request not taken yet is withdrawn. */
  signal?: AbortSignal;
  /** Told when a request starts and stops waiting in the world (a command may then take Ctrl-C to mean `signal`). */
  onWaiting?: (waiting: boolean) => void;
}

const LINE_EVERY_MS = 3_000;

/**
 * Lands a person's change (an amendment, a new task, a reopening) whether or not the world runs.
 * Between runs the command takes the run lock and carries it out itself. While a `genesis run`
 * holds the world, it leaves a request in the world for that run's scheduler, which carries it out
 * between two landings, through its lander (the branch keeps one writer), and answers; the command
 * waits for the answer. If the run ends before taking it, the request is withdrawn and the command
 * carries it out itself.
 */
export async function steerWorld(world: WorldRepo, request: SteeringRequestInput, options: SteerOptions): Promise<SteeringOutcome> {
  for (;;) {
    let lock: { release(): Promise<void> };
    try {
      lock = await acquireRunLock(world.scratchDir);
    } catch (error) {
      if (!isGenesisError(error) || error.code !== 'run-in-progress') throw error;
      const holder = await readRunLock(world.scratchDir);
      if (!holder) continue; // the run ended just now
      const pending = await world.writeSteeringRequest(request);
      options.onWaiting?.(true);
      const outcome = await awaitAnswer(world, pending, holder.pid, options).finally(() => options.onWaiting?.(false));
      if (outcome !== 'withdrawn') return outcome;
      continue;
    }
    try {
      return await carryOutSteering(world, request, { sandboxFor: options.sandboxFor });
    } finally {
      await lock.release();
    }
  }
}

/** Waits for the scheduler's answer; 'withdrawn' when the run ended before it took the request. */
async function awaitAnswer(world: WorldRepo, pending: PendingSteering, pid: number, options: SteerOptions): Promise<SteeringOutcome | 'withdrawn'> {
  const { id } = pending.request;
  const started = Date.now();
  const timeoutMs = options.timeoutMs ?? 120_000;
  let told = -LINE_EVERY_MS;
  let taken = false;
  for (;;) {
    const answer = await world.steeringAnswer(id);
    if (answer?.state === 'done') {
      await world.removeSteeringAnswer(id);
      return answer.outcome as SteeringOutcome;
    }
    if (answer?.state === 'taken') taken = true;
    const elapsed = Date.now() - started;
    if (elapsed - told >= LINE_EVERY_MS) {
      told = elapsed;
      const s = Math.round(elapsed / 1000);
      options.onWait?.(
        taken
          ? `the running scheduler (pid ${pid}) took ${options.what} and is verifying it, ${s} s`
          : `waiting for the running scheduler to take ${options.what} (pid ${pid}), ${s} s`,
      );
    }
    const holder = await readRunLock(world.scratchDir);
    const gone = holder === null || holder.pid !== pid;
    const givingUp = options.signal?.aborted === true;
    if (!taken && (gone || givingUp || elapsed >= timeoutMs)) {
      // Withdrawn by compare-and-swap: if the scheduler took it meanwhile, its answer comes.
      if (await world.takeSteeringRequest(pending)) {
        if (gone) return 'withdrawn';
        if (givingUp) throw new GenesisError('steering-timeout', `gave up waiting; ${options.what} was withdrawn before the running scheduler took it`);
        throw new GenesisError('steering-timeout', `the running scheduler (pid ${pid}) did not take ${options.what} within ${Math.round(timeoutMs / 1000)} s`, {
          hint: `nothing landed; the run may be busy landing or stuck: see genesis status, then try again (a longer --timeout), or stop the run (kill -INT ${pid}) and run the command again`,
        });
      }
      taken = true;
    } else if (taken && gone) {
      const last = await world.steeringAnswer(id);
      if (last?.state === 'done') continue;
      throw new GenesisError('steering-lost', `the scheduler (pid ${pid}) took ${options.what} but stopped before it answered`, {
        hint: 'see genesis log: if it did not land, run the command again',
      });
    }
    await sleep(options.pollMs ?? 250);
  }
}
