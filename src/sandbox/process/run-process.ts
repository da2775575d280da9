import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { OutputTail } from '../gate/output-tail.js';

export interface ProcessTreeOptions {
  cwd: string;
  /** The whole environment of the process; nothing is inherited from the orchestrator. */
  env: Record<string, string>;
  timeoutMs: number;
  maxOutputBytes?: number;
  /** Collect what the process writes to file descriptor 3 (bwrap's --json-status-fd). */
  captureFd3?: boolean;
  /** Aborting it kills the group as the timeout does (then `stopped`). */
  signal?: AbortSignal;
}

export interface ProcessTreeOutcome {
  exitCode: number;
  timedOut: boolean;
  /** Killed because `signal` was aborted. */
  stopped?: boolean;
  output: string;
  outputBytes: number;
  truncated: boolean;
  durationMs: number;
  /** What was written to fd 3, when asked for. */
  fd3: string;
}

/** How long streams may stay open after the process exited (a grandchild holding the pipe). */
const DRAIN_GRACE_MS = 1_000;

/**
 * Runs `file args` as the leader of its own process group, tails its combined output, and kills
 * the whole group with SIGKILL at the timeout and again when the leader exits, so no background
 * process outlives the run (processes that start their own session escape the group; the bwrap
 * adapter catches those with a PID namespace).
 *
 * Rejects only when the process cannot be started at all (for instance, the program is missing).
 */
export function runProcessTree(file: string, args: string[], options: ProcessTreeOptions): Promise<ProcessTreeOutcome> {
  const tail = new OutputTail(options.maxOutputBytes);
  const status: Buffer[] = [];
  const started = performance.now();

  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', ...(options.captureFd3 ? (['pipe'] as const) : [])],
    });
    const streams = child.stdio.slice(1).filter((s): s is Readable => s !== null && s !== undefined);
    child.stdout?.on('data', (chunk: Buffer) => tail.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => tail.push(chunk));
    (child.stdio[3] as Readable | undefined)?.on('data', (chunk: Buffer) => status.push(chunk));

    let timedOut = false;
    let drainTimer: NodeJS.Timeout | undefined;
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    let stopped = false;
    const stop = (): void => {
      stopped = true;
      killGroup();
    };
    if (options.signal?.aborted) stop();
    else options.signal?.addEventListener('abort', stop, { once: true });

    child.once('error', (error) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', stop);
      reject(error);
    });
    child.once('exit', () => {
      clearTimeout(timer);
      killGroup();
      drainTimer = setTimeout(() => {
        for (const s of streams) s.destroy();
      }, DRAIN_GRACE_MS);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', stop);
      if (drainTimer) clearTimeout(drainTimer);
      const bySignal = signal ? 128 + (constants.signals[signal] ?? 0) : 1;
      resolve({
        exitCode: timedOut || stopped ? 137 : (code ?? bySignal),
        timedOut,
        ...(stopped ? { stopped } : {}),
        output: tail.text(),
        outputBytes: tail.totalBytes,
        truncated: tail.truncated,
        durationMs: Math.round(performance.now() - started),
        fd3: Buffer.concat(status).toString('utf8'),
      });
    });
  });
}
