import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/genesis.js', import.meta.url));

/** A `genesis` child process with its stdout lines, for scripts (the test helper needs vitest). */
export interface GenesisProcess {
  child: ChildProcess;
  lines: string[];
  /** Resolves with the first line (seen or to come) matching `pattern`; rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Calls `listener` for every line from now on. */
  onLine(listener: (line: string) => void): void;
  /** The exit code, or null when a signal ended it. */
  exited: Promise<number | null>;
  stderr(): string;
  /** Sends a signal to this process only (by its pid). */
  kill(signal: NodeJS.Signals): void;
}

const live = new Set<GenesisProcess>();

/** Stops every genesis process this script started and that still runs (on Ctrl-C, say). */
export async function stopAllGenesis(graceMs = 3000): Promise<void> {
  await Promise.all([...live].map((p) => stopProcess(p, graceMs)));
}

export function startGenesis(args: string[], env: Record<string, string>): GenesisProcess {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const listeners: Array<(line: string) => void> = [];
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      for (const listener of [...listeners]) listener(line);
    }
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (stderr.length > 1e6) stderr = stderr.slice(-100_000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const p: GenesisProcess = {
    child,
    lines,
    exited,
    stderr: () => stderr,
    onLine: (listener) => listeners.push(listener),
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    waitFor(pattern, timeoutMs = 60_000) {
      const seen = lines.find((l) => pattern.test(l));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms`)), timeoutMs);
        const listener = (line: string) => {
          if (!pattern.test(line)) return;
          clearTimeout(timer);
          listeners.splice(listeners.indexOf(listener), 1);
          resolve(line);
        };
        listeners.push(listener);
      });
    },
  };
  live.add(p);
  void exited.then(() => live.delete(p));
  return p;
}

/** Resolves with the exit code, or 'timeout' when the process is still running after `ms`. */
export function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Asks a process to stop, then kills it if it has not within `graceMs`. */
export async function stopProcess(p: GenesisProcess, graceMs = 15_000): Promise<void> {
  p.kill('SIGTERM');
  if ((await within(p.exited, graceMs)) === 'timeout') {
    p.kill('SIGKILL');
    await p.exited;
  }
}
