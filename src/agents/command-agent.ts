import { execa } from 'execa';
import { GenesisError } from '../errors.js';
import type { Agent, AgentRunInput, AgentRunResult } from './agent.js';
import { OutputTail } from '../sandbox/output-tail.js';

const KILL_GRACE_MS = 2_000;

/**
 * Runs any CLI agent as a child process. The process gets its own process group so that the
 * whole tree (the agent and whatever it spawned) can be killed at the timeout and at the end.
 */
export class CommandAgent implements Agent {
  readonly label: string;

  constructor(private readonly argv: readonly string[]) {
    this.label = `command:${argv.join(' ')}`;
  }

  async run(input: AgentRunInput): Promise<AgentRunResult> {
    const argv = this.argv.map((arg) => arg.replaceAll('{promptFile}', input.promptFile));
    const started = Date.now();
    const log = new OutputTail(1024 * 1024);
    const child = execa(argv[0]!, argv.slice(1), {
      cwd: input.workspace,
      env: input.env,
      extendEnv: false,
      input: input.prompt,
      detached: true,
      reject: false,
      all: true,
      buffer: false,
      stdin: 'pipe',
    });
    child.all?.on('data', (chunk: Buffer) => log.push(chunk));
    let timedOut = false;
    let aborted = false;
    const killGroup = (signal: NodeJS.Signals) => {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, signal);
        } catch {
          // already gone
        }
      }
    };
    const stop = (why: 'timeout' | 'abort') => {
      if (why === 'timeout') timedOut = true;
      else aborted = true;
      killGroup('SIGTERM');
      setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS).unref();
    };
    // Daemons the agent left in its group must not outlive it, nor hold its output pipe open.
    child.once('exit', () => killGroup('SIGKILL'));
    const timer = setTimeout(() => stop('timeout'), input.timeoutMs);
    const onAbort = () => stop('abort');
    input.signal?.addEventListener('abort', onAbort, { once: true });
    const result = await child;
    clearTimeout(timer);
    input.signal?.removeEventListener('abort', onAbort);
    if (result.failed && result.exitCode === undefined && !timedOut && !aborted && result.code === 'ENOENT') {
      throw new GenesisError('agent-not-found', `the agent command "${argv[0]}" was not found`, {
        hint: 'install it or fix agent.command in world.yaml; retrying cannot help',
        retryable: false,
      });
    }
    return {
      exitCode: result.exitCode ?? (timedOut || aborted ? 137 : 1),
      timedOut,
      aborted,
      log: (log.truncated ? `[${log.totalBytes - log.capacity} earlier bytes not kept]\n` : '') + log.text() + (result.code === 'ENOENT' ? `\n${result.shortMessage}\n` : ''),
      durationMs: Date.now() - started,
    };
  }
}
