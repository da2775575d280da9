import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../run-command-tool.js';
import type { ToolContext } from '../tools.js';
import { PROGRAM_ENV, RESULT_FILE, TRANSCRIPT_FILE } from './program-result.js';
import { runToolLoop, type ToolLoopOptions } from './tool-loop.js';

/**
 * The `openai` agent's program: the whole tool loop, run inside the agent sandbox like any CLI
 * agent, once per episode. Its working directory is the workspace, its stdin the prompt;
 * everything else comes from its environment (PROGRAM_ENV). Its tools act on the files it can see and run commands as its
 * own children; the log goes to stdout as it happens, the outcome and the transcript into
 * `GENESIS_RESULT_DIR`. SIGTERM (the wall time, a stopped run) ends the conversation where it
 * is, kills the command running, and still writes the outcome.
 */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const stop = new AbortController();
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(signal, () => stop.abort());
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const resultDir = required(env, PROGRAM_ENV.resultDir);
  const options = loopOptions(env);
  // Its stdin, as for any agent: the prompt Genesis composed (the prompt file holds the same text).
  const prompt = await readStdin();
  const workspace = process.cwd();
  // The key is the program's alone: the commands it runs never get it.
  const commandEnv = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[0] !== PROGRAM_ENV.apiKey));
  const commandTimeoutMs = int(env, PROGRAM_ENV.commandTimeoutMs) ?? 600_000;
  const tools: ToolContext = {
    workspace,
    runCommand: (command, timeoutSec) =>
      runCommand(command, {
        cwd: workspace,
        env: commandEnv,
        signal: stop.signal,
        timeoutMs: Math.min(commandTimeoutMs, (timeoutSec ?? Infinity) * 1000),
        maxOutputBytes: int(env, PROGRAM_ENV.commandOutputBytes) ?? 16_384,
      }),
  };
  const { result, transcript } = await runToolLoop(options, prompt, tools, stop.signal, say);
  await mkdir(resultDir, { recursive: true });
  await writeAtomically(join(resultDir, TRANSCRIPT_FILE), transcript.toJSON());
  await writeAtomically(join(resultDir, RESULT_FILE), `${JSON.stringify(result)}\n`);
  return result.outcome === 'finished' ? 0 : result.outcome === 'stopped' ? 143 : 1;
}

function loopOptions(env: NodeJS.ProcessEnv): ToolLoopOptions {
  const maxTokens = int(env, PROGRAM_ENV.maxTokens);
  const maxRetries = int(env, PROGRAM_ENV.maxRetries);
  const maxRetryWaitMs = int(env, PROGRAM_ENV.maxRetryWaitMs);
  const apiKey = env[PROGRAM_ENV.apiKey];
  return {
    baseUrl: env[PROGRAM_ENV.baseUrl] || required(env, PROGRAM_ENV.modelUrl),
    model: required(env, PROGRAM_ENV.model),
    ...(apiKey ? { apiKey } : {}),
    maxTurns: int(env, PROGRAM_ENV.maxTurns) ?? 50,
    ...(maxTokens === undefined ? {} : { maxTokens }),
    requestTimeoutMs: int(env, PROGRAM_ENV.requestTimeoutMs) ?? 300_000,
    ...(maxRetries === undefined ? {} : { maxRetries }),
    ...(maxRetryWaitMs === undefined ? {} : { maxRetryWaitMs }),
  };
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`the openai agent's program needs ${name} in its environment`);
  return value;
}

function int(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a whole number, not ${JSON.stringify(value)}`);
  return n;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Written beside and renamed, so a file is whole or absent. */
async function writeAtomically(path: string, text: string): Promise<void> {
  await writeFile(`${path}.part`, text);
  await rename(`${path}.part`, path);
}

const code = await main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return 2;
});
// At once: a kept-alive connection to the model would hold the process a few seconds more (stdout to a pipe is written synchronously).
process.exit(code);
