import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Agent, AgentRunInput, AgentRunResult } from '../agent.js';
import { formatSimNote, formatSimStep, parseSimAnswer, parseSimStepId, simStepPath } from './chain.js';
import { drawSimAttempt, type SimRates } from './draw.js';
import { authFailedError, episodeFailureOf } from '../failure-classes.js';

/** A refusal the sim's endpoint answers an episode with (`sim.refusals`). */
export interface SimRefusal {
  kind: 'auth' | 'usage-limit' | 'overloaded';
  resetSec?: number;
}

/**
 * The `sim` calibration agent: an agent whose error rates are known, so that what Genesis
 * measures on a real world (real git, real gate, real sandbox) can be held against the closed
 * forms of the reliability model. It works in sim-chain worlds (see sim-chain.ts): for step i it
 * reads step i − 1's answer from its workspace and, by a draw seeded with (seed, task, attempt),
 * - with probability e exits 1 and writes nothing (a visible error),
 * - with probability w writes a plausible wrong answer (a silent error), of the kind the world's
 *   check catches with probability d and of a kind it misses otherwise,
 * - else writes the right answer.
 * Whether the gate then rejects it is up to the world's check, which the agent never sees.
 * Before any draw, its first episodes meet the refusals of `sim.refusals`, one each, as a real
 * CLI reports them: refused credentials (agent-auth-failed), a usage limit with its reset, an
 * overloaded model.
 */
export class SimAgent implements Agent {
  readonly label: string;

  private readonly refusals: SimRefusal[];

  constructor(
    private readonly rates: SimRates,
    refusals: readonly SimRefusal[] = [],
  ) {
    this.label = `sim:e=${rates.e},w=${rates.w},d=${rates.d},seed=${rates.seed}`;
    this.refusals = [...refusals];
  }

  async run(input: AgentRunInput): Promise<AgentRunResult> {
    const started = Date.now();
    const end = (exitCode: number, lines: string[]): AgentRunResult => ({
      exitCode,
      timedOut: false,
      aborted: Boolean(input.signal?.aborted),
      log: `${lines.join('\n')}\n`,
      durationMs: Date.now() - started,
    });
    const step = parseSimStepId(input.taskId);
    if (step === null) return end(2, [`sim: task ${input.taskId} is not a sim-chain step (t01, t02, …); the sim agent works only in sim-chain worlds`]);
    if (input.signal?.aborted) return end(137, ['sim: stopped before it started']);
    const refusal = this.refusals.shift();
    if (refusal?.kind === 'auth') throw authFailedError(this.label, 'the endpoint answered 401 (simulated)');
    if (refusal) {
      const failure =
        refusal.kind === 'overloaded'
          ? episodeFailureOf({ kind: 'overloaded', message: 'the endpoint answered 529 (simulated)' })
          : episodeFailureOf({
              kind: 'usage-limit',
              message: 'the endpoint answered 429 (simulated)',
              resetAt: refusal.resetSec === undefined ? null : Date.now() + refusal.resetSec * 1000,
            });
      return { ...end(1, [`sim: ${input.taskId} attempt ${input.attempt}: ${failure.message}`]), failure };
    }

    const draw = drawSimAttempt(this.rates, input.taskId, input.attempt);
    const head = `sim: ${input.taskId} attempt ${input.attempt}, draw u=${draw.u.toFixed(6)}`;
    if (draw.outcome === 'visible-error') return end(1, [head, 'sim: simulated crash (a visible error)']);

    const previous = step === 1 ? 0 : await readAnswer(input.workspace, simStepPath(step - 1));
    if (previous === null) return end(1, [head, `sim: cannot read the answer of ${simStepPath(step - 1)}; its task must be done first`]);
    const answer = previous + step + draw.offset;
    const target = join(input.workspace, simStepPath(step));
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, formatSimStep(answer, formatSimNote(this.rates.seed, input.attempt)));
    // The log says what was drawn, for whoever audits a calibration; the gate never reads it.
    return end(0, [head, `sim: wrote ${simStepPath(step)} = ${answer} (${draw.outcome})`]);
  }
}

async function readAnswer(workspace: string, path: string): Promise<number | null> {
  const text = await readFile(join(workspace, path), 'utf8').catch(() => null);
  return text === null ? null : parseSimAnswer(text);
}
