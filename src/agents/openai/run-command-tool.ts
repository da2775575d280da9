import { spawn } from 'node:child_process';
import { OutputTail } from '../../sandbox/gate/output-tail.js';

/** How long output may still arrive after the shell exited. */
const OUTPUT_GRACE_MS = 500;

export interface RunCommandOptions {
  /** The working directory: the workspace. */
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** Bytes of output kept (the tail): a chatty build must not flood the model's context. */
  maxOutputBytes: number;
  signal: AbortSignal;
}

/**
 * `run_command`: `/bin/sh -c command` in the workspace, as a plain child of the agent's program,
 * inside the one sandbox the program itself runs in; the leader of its own process group, which
 * is killed at the timeout, at an abort and when the shell exits (no daemon outlives the call).
 * The result for the model says the exit code, whether it timed out, and the tail of the
 * combined output.
 */
export async function runCommand(command: string, options: RunCommandOptions): Promise<string> {
  const tail = new OutputTail(options.maxOutputBytes);
  let timedOut = false;
  const child = spawn('/bin/sh', ['-c', command], { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk: Buffer) => tail.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => tail.push(chunk));
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, options.timeoutMs);
  options.signal.addEventListener('abort', killGroup, { once: true });
  if (options.signal.aborted) killGroup();
  const ended = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('exit', (code, signal) => {
      // What the group left running goes; a daemon of another group holding the pipes must not keep the call waiting.
      killGroup();
      const cut = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        resolve({ code, signal });
      }, OUTPUT_GRACE_MS);
      child.once('close', () => {
        clearTimeout(cut);
        resolve({ code, signal });
      });
    });
  });
  clearTimeout(timer);
  options.signal.removeEventListener('abort', killGroup);
  const head = ended.error
    ? `could not start /bin/sh: ${ended.error.message}`
    : timedOut
      ? `timed out after ${Math.round(options.timeoutMs / 1000)}s and was killed`
      : `exit code ${ended.code ?? 'none'}${ended.signal ? ` (${ended.signal})` : ''}`;
  const cut = tail.truncated ? `[${tail.totalBytes - tail.capacity} earlier bytes of output not shown]\n` : '';
  return `${head}\n${cut}${tail.text()}`;
}
