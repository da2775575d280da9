/**
 * Tells subscribers when the world changed. It polls a cheap stamp (one `git for-each-ref`)
 * every `intervalMs`, and only while someone listens: a dashboard nobody looks at costs nothing.
 * Polling rather than watching files because the world may be written by another machine
 * through git push, which no file watcher on this side sees as one event.
 */
export class ChangeFeed {
  /** Each listener with the stamp it last saw, so a change between two polls is never lost. */
  private readonly listeners = new Map<(stamp: string) => void, string>();
  private timer: NodeJS.Timeout | null = null;
  private polling = false;

  constructor(
    private readonly readStamp: () => Promise<string>,
    private readonly intervalMs = 1000,
  ) {}

  /**
   * Calls `listener` with the new stamp whenever it differs from the last one the listener saw,
   * starting from `seen` (the stamp the subscriber already showed). Returns the unsubscribe function.
   */
  subscribe(listener: (stamp: string) => void, seen: string): () => void {
    this.listeners.set(listener, seen);
    this.timer ??= setInterval(() => void this.poll(), this.intervalMs);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  /** Stops polling and forgets every listener (the server is closing). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.listeners.clear();
  }

  private async poll(): Promise<void> {
    if (this.polling) return; // a slow git must not stack up polls
    this.polling = true;
    try {
      const stamp = await this.readStamp();
      for (const [listener, seen] of [...this.listeners]) {
        if (seen === stamp || !this.listeners.has(listener)) continue;
        this.listeners.set(listener, stamp);
        listener(stamp);
      }
    } catch {
      // A world briefly unreadable (a git gc, a push in progress) is tried again on the next tick.
    } finally {
      this.polling = false;
    }
  }
}
