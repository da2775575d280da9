import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GenesisError } from '../../errors/genesis-error.js';
import { computeChainLength, computeStepOutcome, INVALID_MODEL_INPUT, type ChainInput } from '../../reliability/index.js';
import { SIM_CHECK_SCRIPT } from './check-script.js';
import { simStepId, simStepPath } from './chain.js';

/** What a sim-chain world is made of: its length, the agent's rates, the check's flakiness, the retry policy. */
export interface SimWorldOptions {
  /** Tasks in the chain, each depending on the one before. @default 10 */
  steps?: number;
  /** The agent's visible error rate. @default 0.1 */
  e?: number;
  /** The agent's silent error rate. @default 0.05 */
  w?: number;
  /** Share of wrong answers of the kind the world's last-digit check catches. @default 0.8 */
  d?: number;
  /** False-rejection rate of the world's brittle check (it applies to every answer). @default 0.05 */
  f?: number;
  /** Seed of the agent's draws. @default 1 */
  seed?: number;
  /** Rounds per task before it is blocked and the run stops: retry.maxAttempts is `attempts × race`. @default 3 */
  attempts?: number;
  /** agent.race: episodes raced at once per round (the first to pass wins); parallelism is set to it. @default 1 */
  race?: number;
  /** The world's name. @default 'sim-chain' */
  name?: string;
  /** verify.sandbox. @default 'auto' */
  sandbox?: 'auto' | 'docker' | 'bwrap' | 'none';
  /** agent.sim.refusals: failure classes the first episodes meet. @default [] */
  refusals?: Array<{ kind: 'auth' | 'usage-limit' | 'overloaded'; resetSec?: number }>;
}

/** The defaults of {@link SimWorldOptions}: what worlds/sim-chain holds. */
export const SIM_WORLD_DEFAULTS: Required<SimWorldOptions> = {
  steps: 10,
  e: 0.1,
  w: 0.05,
  d: 0.8,
  f: 0.05,
  seed: 1,
  attempts: 3,
  race: 1,
  name: 'sim-chain',
  sandbox: 'auto',
  refusals: [],
};

/**
 * The reliability model of a sim-chain world. The gate rejects a wrong answer when the last-digit
 * check catches it (d) or, failing that, the brittle check rejects it (f), so the verifier's recall
 * is d + (1 − d)·f; it rejects a right answer with f.
 */
export function computeSimWorldModel(options: SimWorldOptions = {}): ChainInput & { steps: number } {
  const o = { ...SIM_WORLD_DEFAULTS, ...options };
  return { e: o.e, w: o.w, recall: o.d + (1 - o.d) * o.f, falseReject: o.f, attempts: o.attempts, race: o.race, steps: o.steps };
}

/** The files of a sim-chain world, path → content. Throws `invalid-model-input` on rates out of range. */
export function renderSimWorld(options: SimWorldOptions = {}): Map<string, string> {
  const o = { ...SIM_WORLD_DEFAULTS, ...options };
  // d and the seed are checked here; the closed form checks e, w, e + w, f, attempts and steps.
  if (!(o.d >= 0 && o.d <= 1)) invalid(`d (share of wrong answers the check catches) must be a probability in [0, 1], got ${o.d}`);
  if (!Number.isSafeInteger(o.seed) || o.seed < 0 || o.seed > 0xffffffff) invalid(`seed must be an integer in [0, 4294967295], got ${o.seed}`);
  const model = computeSimWorldModel(o);
  computeChainLength(computeStepOutcome(model), model.steps);
  const plan = `genesis model chain --e ${o.e} --w ${o.w} --recall ${round(model.recall!)} --false-reject ${o.f} --attempts ${o.attempts}${o.race > 1 ? ` --race ${o.race}` : ''} --steps ${o.steps}`;
  const tasks = Array.from({ length: o.steps }, (_, i) => renderTask(i + 1));
  const yaml = [
    `# A calibration world: a chain of ${o.steps} trivial steps worked by the \`sim\` agent, whose error`,
    '# rates are known, so that what Genesis measures can be held against the reliability model.',
    '# Written by renderSimWorld (src/agents/sim/world.ts); change the options there, not this file.',
    `# In the model's terms: e ${o.e}, w ${o.w}, verifier recall d + (1 - d)·f = ${round(model.recall!)},`,
    `# false rejection f ${o.f}, ${o.attempts} attempt(s) per step${o.race > 1 ? `, each a race of ${o.race}` : ''}. Plan it with:`,
    `#   ${plan}`,
    `name: ${o.name}`,
    'branch: main',
    'goal:',
    '  outcome: "Every step file steps/tNN.txt holds the right answer: step NN-1\'s answer plus NN."',
    'verify:',
    `  sandbox: ${o.sandbox}`,
    "  # The argument is the brittle check's false-rejection rate f (see checks/steps.sh).",
    `  test: "sh checks/steps.sh ${o.f}"`,
    '  timeoutSec: 60',
    '  limits: { cpus: 1, memoryMb: 256, pids: 128 }',
    'protected: ["world.yaml", "checks/**"]',
    'agent:',
    '  kind: sim',
    `  sim: { e: ${o.e}, w: ${o.w}, d: ${o.d}, seed: ${o.seed}${o.refusals.length > 0 ? `, refusals: ${JSON.stringify(o.refusals)}` : ''} }`,
    '  timeoutSec: 30',
    ...(o.race > 1 ? [`  race: ${o.race}`] : []),
    '# Attempts are independent draws, as the model assumes: a failure that repeats its signature',
    '# (the same crash, the same failing check) is chance here, not determinism, so it must not block.',
    // Every racer is an attempt of its own: a round of N racers spends N of them.
    `retry: { maxAttempts: ${o.attempts * o.race}, blockOnRepeat: false }`,
    `parallelism: ${o.race}`,
    'tasks:',
    ...tasks,
    '',
  ].join('\n');
  return new Map([
    ['world.yaml', yaml],
    ['checks/steps.sh', SIM_CHECK_SCRIPT],
    ['README.md', renderReadme(plan)],
  ]);
}

/** Writes a sim-chain world's directory, ready for `genesis init --from <dir>` or initWorld. */
export async function writeSimWorld(dir: string, options: SimWorldOptions = {}): Promise<void> {
  for (const [path, content] of renderSimWorld(options)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

function renderTask(index: number): string {
  const lines = [
    `  - id: ${simStepId(index)}`,
    `    title: "step ${index}"`,
    `    description: "Write ${simStepPath(index)} with the line \`answer: N\`, where N is the answer in ${index === 1 ? 'no file (0)' : simStepPath(index - 1)} plus ${index}."`,
    '    acceptance: "checks/steps.sh passes."',
    `    paths: ["${simStepPath(index)}"]`,
  ];
  if (index > 1) lines.push(`    dependsOn: [${simStepId(index - 1)}]`);
  return lines.join('\n');
}

function renderReadme(plan: string): string {
  return `# sim-chain: a calibration world

A chain of trivial steps (step i writes \`steps/tNN.txt\` with \`answer: N\`, N = step i − 1's
answer + i) worked by the \`sim\` agent, whose error rates are set in \`world.yaml\` (\`agent.sim\`).
Each attempt, by a draw seeded with (seed, task, attempt), exits with an error (e), writes a
plausible wrong answer (w) or writes the right one. The gate runs \`checks/steps.sh\`: its last-digit
check catches a share d of the wrong answers, and its brittle check rejects any answer with
probability f. Whether the finished world is truly right is decided outside the gate, by
\`judgeSimWorld\` (src/agents/sim/hidden-check.ts), which compares every answer with i(i + 1)/2.

What the reliability model predicts for this world:

    ${plan}

Try it:

    genesis init --from worlds/sim-chain --world /tmp/sim.world
    genesis run --world /tmp/sim.world
    genesis stats --world /tmp/sim.world
`;
}

function invalid(message: string): never {
  throw new GenesisError(INVALID_MODEL_INPUT, message, { hint: 'check the options passed to renderSimWorld / writeSimWorld' });
}

// Enough digits for the model, without float noise such as 0.8099999999999999.
function round(value: number): number {
  return Number(value.toPrecision(12));
}
