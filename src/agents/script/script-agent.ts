import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { GenesisError } from '../../errors/genesis-error.js';
import type { Agent, AgentRunInput, AgentRunResult } from '../agent.js';

const stepSchema = z
  .object({
    say: z.string().default('').describe('text the agent prints to its log'),
    write: z.record(z.string(), z.string()).default({}).describe('files to write: path -> content'),
    delete: z.array(z.string()).default([]).describe('files to delete'),
    exit: z.number().int().min(0).max(255).default(0).describe('exit code of the attempt'),
    sleepMs: z.number().int().min(0).default(0).describe('time to wait before exiting'),
  })
  .strict();

export const recordingSchema = z
  .object({ tasks: z.record(z.string(), z.array(stepSchema).min(1)) })
  .strict()
  .describe('per task, one step per attempt; attempts past the last step repeat it');

export type Recording = z.output<typeof recordingSchema>;

export function parseRecording(text: string, source: string): Recording {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new GenesisError('recording-invalid', `the script agent's recording ${source} is not valid YAML: ${(error as Error).message.split('\n')[0]}`, {
      hint: 'fix the YAML syntax of the recording',
      cause: error,
    });
  }
  const parsed = recordingSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `  - ${i.path.join('.')}: ${i.message}`).join('\n');
  throw new GenesisError('recording-invalid', `Found issues in the script agent's recording ${source}:\n${problems}`, {
    hint: 'each task maps to a list of steps with say, write, delete, exit and sleepMs',
  });
}

/**
 * Replays recorded changes: attempt n of a task applies step n of its recording. It makes runs
 * reproducible (tests, the demo, bug reports) while going through exactly the same workspace,
 * gate and integrator as a real agent.
 */
export class ScriptAgent implements Agent {
  readonly label = 'script';

  constructor(private readonly recording: Recording) {}

  async run(input: AgentRunInput): Promise<AgentRunResult> {
    const started = Date.now();
    const steps = this.recording.tasks[input.taskId];
    if (!steps) {
      return { exitCode: 3, timedOut: false, aborted: false, log: `script: no recording for task ${input.taskId}\n`, durationMs: 0 };
    }
    const step = steps[Math.min(input.attempt, steps.length) - 1]!;
    const log: string[] = [`script: task ${input.taskId} attempt ${input.attempt}`];
    if (step.say) log.push(step.say);
    for (const [path, content] of Object.entries(step.write)) {
      const target = insideWorkspace(input.workspace, path);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
      log.push(`wrote ${path}`);
    }
    for (const path of step.delete) {
      await rm(insideWorkspace(input.workspace, path), { force: true, recursive: true });
      log.push(`deleted ${path}`);
    }
    if (step.sleepMs > 0) {
      const timedOut = await sleep(Math.min(step.sleepMs, input.timeoutMs), undefined, { signal: input.signal }).then(
        () => step.sleepMs > input.timeoutMs,
        () => false,
      );
      if (timedOut || input.signal?.aborted) {
        return { exitCode: 137, timedOut, aborted: Boolean(input.signal?.aborted), log: log.join('\n') + '\n', durationMs: Date.now() - started };
      }
    }
    return { exitCode: step.exit, timedOut: false, aborted: false, log: log.join('\n') + '\n', durationMs: Date.now() - started };
  }
}

function insideWorkspace(workspace: string, path: string): string {
  const target = resolve(workspace, path);
  if (!target.startsWith(resolve(workspace) + sep)) {
    throw new GenesisError('recording-invalid', `recording path ${path} leaves the workspace`, { hint: 'use paths relative to the world root' });
  }
  return target;
}
