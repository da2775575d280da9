import { type ChildProcess, spawn } from 'node:child_process';
import { GenesisError } from '../errors/genesis-error.js';
import { SPAWNER_SOURCE } from './spawner-source.js';

/** A command to run to its end, its output collected. */
export interface SpawnRequest {
  file: string;
  args: readonly string[];
  cwd?: string;
  /** The command's whole environment (nothing is inherited). */
  env: Readonly<Record<string, string | undefined>>;
  /** Written to its standard input, which is then closed; without it, standard input is empty. */
  input?: string | Buffer;
  /** Stdout past this many bytes kills the command; the first `maxBytes` are kept and `cut` is set. */
  maxBytes?: number;
}

export interface SpawnOutcome {
  /** Null when a signal ended it. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  /** Its first megabyte. */
  stderr: Buffer;
  cut: boolean;
}

interface Answer {
  id: number;
  exitCode?: number | null;
  signal?: NodeJS.Signals | null;
  stdout?: Uint8Array;
  stderr?: Uint8Array;
  cut?: boolean;
  error?: { code?: string; message: string };
}

interface Pending {
  resolve: (outcome: SpawnOutcome) => void;
  reject: (error: Error) => void;
}

/**
 * Starts short commands (git, mount, umount, nsenter) from a small process of its own rather than
 * from Genesis: Linux's fork copies the page tables of the process that forks, on Node's event
 * loop, so each command Genesis forked itself cost it time in proportion to its own memory (an
 * episode runs about a dozen: measured in bench/RESULTS.md, "Short commands from the spawner").
 * The spawner is one `node -e` process, started on first use, whose channel does not keep Genesis
 * alive while nothing is asked of it. If it dies, the commands it was asked for fail with
 * `spawner-lost` (they may have run: a caller must not take that as "did not run") and the next
 * request starts another. `GENESIS_SPAWNER=0` runs every command from Genesis itself, as before.
 */
class Spawner {
  private child: ChildProcess | undefined;
  private readonly pending = new Map<number, Pending>();
  private next = 0;

  run(request: SpawnRequest): Promise<SpawnOutcome> {
    const child = this.started();
    const id = ++this.next;
    return new Promise<SpawnOutcome>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) child.channel?.ref();
      child.send(
        { id, file: request.file, args: request.args, cwd: request.cwd, env: request.env, input: request.input, maxBytes: request.maxBytes },
        (error) => {
          if (error) this.settle(id, (p) => p.reject(lost(error.message)));
        },
      );
    });
  }

  private started(): ChildProcess {
    if (this.child) return this.child;
    // Its own environment is the bare minimum: no NODE_OPTIONS (a loader Genesis runs under would load in it too).
    const child = spawn(process.execPath, ['--max-old-space-size=64', '-e', SPAWNER_SOURCE], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    child.on('message', (answer: Answer) => this.answered(answer));
    const gone = (why: string) => {
      if (this.child !== child) return;
      this.child = undefined;
      for (const id of [...this.pending.keys()]) this.settle(id, (p) => p.reject(lost(why)));
    };
    child.on('error', (error) => gone(error.message));
    child.on('exit', (code, signal) => gone(`it exited (${signal ?? code})`));
    child.unref();
    child.channel?.unref();
    this.child = child;
    return child;
  }

  private answered(answer: Answer): void {
    this.settle(answer.id, (p) => {
      if (answer.error) {
        const error = Object.assign(new Error(answer.error.message), { code: answer.error.code });
        p.reject(error);
        return;
      }
      p.resolve({
        exitCode: answer.exitCode ?? null,
        signal: answer.signal ?? null,
        stdout: bytes(answer.stdout),
        stderr: bytes(answer.stderr),
        cut: answer.cut === true,
      });
    });
  }

  private settle(id: number, how: (p: Pending) => void): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (this.pending.size === 0) this.child?.channel?.unref();
    how(p);
  }
}

const bytes = (data: Uint8Array | undefined): Buffer => (data ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.alloc(0));

const lost = (why: string) =>
  new GenesisError('spawner-lost', `the process that starts Genesis's commands ended before answering: ${why}`, {
    hint: 'run again; if it keeps happening, set GENESIS_SPAWNER=0 to start commands from Genesis itself and report it',
  });

let shared: Spawner | undefined;

/** Whether commands go through the spawner (the default) or are forked by Genesis itself (`GENESIS_SPAWNER=0`). */
function spawnerEnabled(): boolean {
  return process.env.GENESIS_SPAWNER !== '0';
}

/**
 * Runs a command to its end through the spawner, or from this process when the spawner is off.
 * Rejects only when the command could not be started (its error carries the system's code,
 * `ENOENT` for a missing program) or the spawner was lost; a failing exit is an outcome.
 */
export function runCommand(request: SpawnRequest): Promise<SpawnOutcome> {
  if (!spawnerEnabled()) return runHere(request);
  shared ??= new Spawner();
  return shared.run(request);
}

/** The same contract, forked from this process: the spawner's fallback, and what `GENESIS_SPAWNER=0` gives. */
function runHere(request: SpawnRequest): Promise<SpawnOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(request.file, request.args, {
      cwd: request.cwd,
      env: request.env,
      stdio: [request.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let cut = false;
    let failed: Error | undefined;
    child.on('error', (error) => {
      failed = error;
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      if (cut) return;
      out.push(chunk);
      outBytes += chunk.length;
      if (request.maxBytes !== undefined && outBytes > request.maxBytes) {
        cut = true;
        child.kill('SIGTERM');
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (errBytes >= 1024 * 1024) return;
      err.push(chunk);
      errBytes += chunk.length;
    });
    if (request.input !== undefined) {
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(request.input);
    }
    child.on('close', (exitCode, signal) => {
      if (failed && child.pid === undefined) return reject(failed);
      const stdout = Buffer.concat(out);
      resolve({ exitCode, signal, stdout: cut ? stdout.subarray(0, request.maxBytes) : stdout, stderr: Buffer.concat(err), cut });
    });
  });
}

/**
 * Runs a command that says nothing worth reading and must succeed: resolves on exit 0, else
 * rejects with an error whose `code` is its exit code (or the system's code when it could not
 * start), as `execFile` does, and whose message ends with its standard error.
 */
export async function runChecked(file: string, args: readonly string[], env: Readonly<Record<string, string>>): Promise<void> {
  const outcome = await runCommand({ file, args, env });
  if (outcome.exitCode === 0) return;
  const why = outcome.stderr.toString('utf8').trim().split('\n').slice(-3).join('\n');
  throw Object.assign(new Error(`${file} ${outcome.signal ? `was ended by ${outcome.signal}` : `exited ${outcome.exitCode}`}${why ? `: ${why}` : ''}`), {
    code: outcome.exitCode ?? outcome.signal,
  });
}
