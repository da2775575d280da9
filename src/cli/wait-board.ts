/**
 * The long waits of a run's episodes and verifications (a dependency set being installed, a tip's
 * test baseline, a baseline learned before a gate), and when each is due to be told: once it has
 * lasted `firstMs`, then every `everyMs`, so no wait longer than a few seconds is silent and none
 * floods the output. Pure: the printer feeds it events and the time.
 */
export class WaitBoard {
  private readonly waits = new Map<string, { task: string; what: string; since: number; told: number }>();

  constructor(
    private readonly firstMs = 5000,
    private readonly everyMs = 30_000,
  ) {}

  /** A wait began (`what` a sentence) or ended (`what` null) for the job `id`. */
  note(id: string, task: string, what: string | null, now: number): void {
    if (what === null) this.waits.delete(id);
    else if (this.waits.get(id)?.what !== what) this.waits.set(id, { task, what, since: now, told: 0 });
  }

  /** The waits due to be told now, marked as told. */
  due(now: number): Array<{ task: string; what: string; ms: number }> {
    const lines = [];
    for (const wait of this.waits.values()) {
      const ms = now - wait.since;
      const next = wait.told === 0 ? this.firstMs : wait.told + this.everyMs;
      if (ms < next) continue;
      wait.told = ms;
      lines.push({ task: wait.task, what: wait.what, ms });
    }
    return lines;
  }

  /** Every wait now, longest first: for a status line. */
  current(now: number): Array<{ task: string; what: string; ms: number }> {
    return [...this.waits.values()].map((w) => ({ task: w.task, what: w.what, ms: now - w.since })).sort((a, b) => b.ms - a.ms);
  }
}

/** One line of a wait: what a task waits on and for how long so far. */
export function formatWait(wait: { task: string; what: string; ms: number }, at = new Date()): string {
  return `${at.toISOString().slice(11, 19)} … ${wait.task} waits for ${wait.what} (${Math.round(wait.ms / 1000)}s so far)`;
}

/**
 * The waits of one command that is not a run (init): each told on `say` as `genesis run` tells an
 * episode's, once it has lasted five seconds, then every half minute. `stop` when the command ends.
 */
export function tellWaits(who: string, say: (line: string) => void): { onWait: (what: string | null) => void; stop: () => void } {
  const board = new WaitBoard();
  const timer = setInterval(() => {
    for (const wait of board.due(Date.now())) say(formatWait(wait));
  }, 1000);
  timer.unref();
  return { onWait: (what) => board.note(who, who, what, Date.now()), stop: () => clearInterval(timer) };
}
