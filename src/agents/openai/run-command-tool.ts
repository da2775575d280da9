import { randomBytes } from 'node:crypto';
import { execa } from 'execa';
import { OutputTail } from '../../sandbox/gate/output-tail.js';
import type { AgentSandbox } from '../../sandbox/agent-sandbox.js';

export interface RunCommandOptions {
  sandbox: AgentSandbox;
  workspace: string;
  home: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** Bytes of output kept (the tail): a chatty build must not flood the model's context. */
  maxOutputBytes: number;
  signal: AbortSignal;
  /** Names the launch (the container), with a random suffix. */
  name: string;
  /** Host paths shown read-only (the dependency sets the workspace links to). @default [] */
  readOnly?: readonly string[];
}

/**
 * `run_command`: `/bin/sh -c command` in the workspace, inside the agent sandbox, as the leader of
 * its own process group, which is killed at the timeout, at an abort and when the shell exits (no
 * daemon outlives the call). The result for the model says the exit code, whether it timed out,
 * and the tail of the combined output.
 */
export async function runCommand(command: string, options: RunCommandOptions): Promise<string> {
  const launch = await options.sandbox.launch(['/bin/sh', '-c', command], {
    workspace: options.workspace,
    home: options.home,
    env: options.env,
    readOnly: [...(options.readOnly ?? [])],
    name: `${options.name}-${randomBytes(3).toString('hex')}`,
  });
  const tail = new OutputTail(options.maxOutputBytes);
  let timedOut = false;
  try {
    const child = execa(launch.file, launch.args, {
      cwd: options.workspace,
      env: launch.env,
      extendEnv: false,
      detached: true,
      reject: false,
      all: true,
      buffer: false,
      stdin: 'ignore',
    });
    child.all?.on('data', (chunk: Buffer) => tail.push(chunk));
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    child.once('exit', killGroup);
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    options.signal.addEventListener('abort', killGroup, { once: true });
    const result = await child;
    clearTimeout(timer);
    options.signal.removeEventListener('abort', killGroup);
    const head = timedOut
      ? `timed out after ${Math.round(options.timeoutMs / 1000)}s and was killed`
      : `exit code ${result.exitCode ?? 'none'}${result.signal ? ` (${result.signal})` : ''}`;
    const cut = tail.truncated ? `[${tail.totalBytes - tail.capacity} earlier bytes of output not shown]\n` : '';
    return `${head}\n${cut}${tail.text()}`;
  } finally {
    await launch.dispose();
  }
}
