/**
 * How often a job may stall a worker (its lock expired while it ran: the worker died, or froze on
 * input that holds its event loop) before BullMQ gives it up. One stall hands the job to another
 * worker, since the first may have died of something else (the machine, a deploy); a second means
 * the job itself kills or freezes whoever takes it, and a third worker must not be offered it.
 * Every worker of Genesis takes every job kind (episodes, verifications, calibration gates) with
 * this one limit (see workerSettings).
 */
export const STALLS_ALLOWED = 1;

/** What BullMQ fails a job with when it stalled more often than `STALLS_ALLOWED`. */
const STALL_LIMIT_REASON = 'job stalled more than allowable limit';

/** How a job BullMQ gave up on ends, for every job kind alike. */
export interface LostJobEnd {
  /** `poison-pill` when the job stalled two workers (the task is then held), else `worker-lost`. */
  reason: 'poison-pill' | 'worker-lost';
  message: string;
}

/**
 * The one rule for a job BullMQ failed instead of a worker finishing it: stalled twice, it is a
 * poison pill, closed and its task held until a person retries it; failed otherwise (refused as
 * malformed, say), its worker is lost. `what` names the job in the message ("the episode",
 * "the verification of …"), `then` what follows from a poison pill.
 */
export function lostJobEnd(failedReason: string, what: string, then = 'the task is blocked (genesis task retry <task> to try again)'): LostJobEnd {
  if (failedReason.includes(STALL_LIMIT_REASON)) {
    return { reason: 'poison-pill', message: `${what} stalled two workers in a row (each died or froze while it ran): ${then}` };
  }
  return { reason: 'worker-lost', message: `no worker finished ${what}: ${failedReason}` };
}
