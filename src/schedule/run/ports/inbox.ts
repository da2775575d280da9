/** An unbounded queue of wake-ups for the run loop: stages push, the loop takes one at a time. */
export class Inbox<T> {
  private readonly items: T[] = [];
  private readonly takers: Array<(item: T | { kind: 'tick' }) => void> = [];

  push(item: T): void {
    const taker = this.takers.shift();
    if (taker) taker(item);
    else this.items.push(item);
  }

  /** The next item, or `{ kind: 'tick' }` when `timeoutMs` passes first (null: wait for ever). */
  next(timeoutMs: number | null): Promise<T | { kind: 'tick' }> {
    const ready = this.items.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const taker = (item: T | { kind: 'tick' }) => {
        if (timer) clearTimeout(timer);
        resolve(item);
      };
      this.takers.push(taker);
      if (timeoutMs !== null) {
        timer = setTimeout(
          () => {
            const at = this.takers.indexOf(taker);
            if (at >= 0) this.takers.splice(at, 1);
            resolve({ kind: 'tick' });
          },
          Math.min(timeoutMs, 2 ** 31 - 1),
        );
      }
    });
  }
}
