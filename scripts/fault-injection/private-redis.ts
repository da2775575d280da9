import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectRedis } from '../../src/queue/redis/connection.js';

/**
 * A redis-server of our own, on its own port and directory, with the append-only file on, so a
 * script can crash and restart it without touching the machine's shared Redis.
 */
export class PrivateRedis {
  private process: ChildProcess | null = null;

  constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--appendonly', 'yes', '--save', '', '--daemonize', 'no'];
    this.process = spawn('redis-server', args, { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      if (await this.answers()) return;
      await sleep(50);
    }
    throw new Error(`redis-server on port ${this.port} did not start`);
  }

  /** kill -9: a crash, not a shutdown; what the append-only file kept is what comes back. */
  async crash(): Promise<void> {
    const p = this.process;
    if (!p || p.exitCode !== null) return;
    const gone = new Promise((resolve) => p.once('exit', resolve));
    p.kill('SIGKILL');
    await gone;
    this.process = null;
  }

  async stop(): Promise<void> {
    const p = this.process;
    if (!p || p.exitCode !== null) return;
    const gone = new Promise((resolve) => p.once('exit', resolve));
    p.kill('SIGTERM');
    await gone;
    this.process = null;
  }

  /** `INFO memory` used_memory in bytes. */
  async usedMemory(): Promise<number> {
    const redis = await connectRedis(this.url, { name: 'genesis-script' });
    try {
      return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? NaN);
    } finally {
      redis.disconnect();
    }
  }

  private async answers(): Promise<boolean> {
    try {
      (await connectRedis(this.url, { timeoutMs: 200 })).disconnect();
      return true;
    } catch {
      return false;
    }
  }
}
