import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * What a worker's health file says, on its first line:
 * - `ready`: the worker takes jobs, and its gate and agent sandboxes passed their probes;
 * - `unconfined`: it takes jobs but a sandbox probe failed, so jobs that need it are refused;
 * - `stopping`: it finishes its running episodes and takes no more.
 */
export type WorkerHealth = 'ready' | 'unconfined' | 'stopping';

/** How often the file is rewritten: a probe that finds it older than a few of these finds a stuck process. */
export const HEALTH_BEAT_MS = 10_000;

/**
 * The file a container's probes read (`genesis worker --health-file`): an exec probe is a shell
 * command, far cheaper than a second Node process, and a file that stops being rewritten is a
 * worker whose event loop stopped. The state is on the first line, the details after it (JSON).
 * The file is written to a sibling and renamed, so a probe never reads half of it.
 */
export class WorkerHealthFile {
  private state: WorkerHealth | null = null;
  private details: Record<string, unknown> = {};
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly path: string) {}

  /** Sets the state and keeps the file fresh until `remove`. */
  async set(state: WorkerHealth, details: Record<string, unknown> = {}): Promise<void> {
    this.state = state;
    this.details = details;
    await this.write();
    if (!this.timer) {
      this.timer = setInterval(() => void this.write().catch(() => undefined), HEALTH_BEAT_MS);
      this.timer.unref();
    }
  }

  async remove(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await rm(this.path, { force: true });
  }

  private async write(): Promise<void> {
    if (this.state === null) return;
    await mkdir(dirname(this.path), { recursive: true });
    const next = `${this.path}.next`;
    await writeFile(next, `${this.state}\n${JSON.stringify({ ...this.details, at: new Date().toISOString() })}\n`);
    await rename(next, this.path);
  }
}
