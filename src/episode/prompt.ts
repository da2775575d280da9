import { DEFAULT_PROMPT_TEMPLATE } from '../manifest/prompt-placeholders.js';
import { renderPromptTemplate, type TemplateValues } from '../manifest/prompt-template.js';
import { planGate } from '../gate/plan.js';
import { isHoldoutDerived } from '../gate/hidden-checks.js';
import type { EpisodeRecord } from '../ledger/episode-record.js';
import type { TaskSpec, WorldManifest } from '../manifest/schema.js';

const MAX_REFLECTIONS = 3;
const MAX_REFLECTION_CHARS = 1500;

export interface PromptInput {
  manifest: WorldManifest;
  task: TaskSpec;
  attempt: number;
  /** Earlier finished episodes of this task, any order. */
  earlier: readonly EpisodeRecord[];
  /** Tail of the gate log of the latest failed attempt, if any. */
  lastGateLog?: string;
  /** What a person said when they gave the blocked task new attempts. */
  retryNote?: string | null;
  /** Tasks done at the episode's base: the gate runs their checks too. @default none */
  doneTasks?: ReadonlySet<string>;
}

/**
 * The prompt a fresh episode starts from. It is the only memory an episode has of the world's
 * past, so it carries the goal, the task, the rules the gate will enforce and what went wrong in
 * earlier attempts, newest first and bounded in size. It is `agent.promptTemplate` rendered with
 * {@link promptValues}, or the built-in DEFAULT_PROMPT_TEMPLATE.
 */
export function composePrompt(input: PromptInput): string {
  return renderPromptTemplate(input.manifest.agent.promptTemplate ?? DEFAULT_PROMPT_TEMPLATE, promptValues(input));
}

/** What each placeholder of a prompt template stands for (see PROMPT_PLACEHOLDERS). */
export function promptValues(input: PromptInput): TemplateValues {
  const { manifest, task } = input;
  // The very plan the gate runs (setup, build, test, this task's check, every done task's check).
  const gate = planGate(manifest, task, input.doneTasks ?? new Set());
  return {
    world: manifest.name,
    taskId: task.id,
    attempt: String(input.attempt),
    maxAttempts: String(manifest.retry.maxAttempts),
    goal: manifest.goal.outcome,
    title: task.title,
    description: task.description,
    acceptance: task.acceptance,
    paths: task.paths,
    protected: manifest.protected,
    test: manifest.verify.test,
    check: task.check ?? '',
    testCommands: gate.map((step) => step.command).join(' and '),
    gateCommands: gate.map((step) => `${step.name}: ${step.command}`),
    constraints: manifest.goal.constraints,
    planner: task.kind === 'planner',
    tasksDir: manifest.tasksDir ?? '(no tasksDir set)',
    taskIds: manifest.tasks.map((t) => t.id),
    progressFile: manifest.goal.progressFile ?? '',
    retryNote: input.retryNote ?? '',
    reflections: reflect(input.earlier, input.lastGateLog).join('\n'),
  };
}

/**
 * What a finished, failed episode tells the next attempt at its task: the exact lines the next
 * prompt carries (empty for an accepted or abandoned episode, which leave no reflection).
 */
export function reflectionOf(episode: EpisodeRecord, gateLog?: string): string {
  return reflect([episode], gateLog).join('\n');
}

function reflect(earlier: readonly EpisodeRecord[], lastGateLog: string | undefined): string[] {
  const failed = earlier
    .filter((e) => e.status === 'final' && e.outcome !== 'accepted' && e.outcome !== 'abandoned')
    .sort((a, b) => b.attempt - a.attempt)
    .slice(0, MAX_REFLECTIONS);
  return failed.flatMap((e, i) => {
    const out = [`- attempt ${e.attempt}: ${e.outcome} (${e.reason}): ${e.message ?? ''}`];
    if (e.changedFiles.length > 0) out.push(`  changed: ${e.changedFiles.slice(0, 10).join(', ')}`);
    if (e.quarantine) out.push(`  its unfinished work is kept: git fetch origin ${e.quarantine} && git diff HEAD FETCH_HEAD`);
    // Hidden checks stay hidden: no log of a gate that ran them reaches an agent.
    if (i === 0 && lastGateLog && !isHoldoutDerived(e)) out.push('  gate log (tail):', ...indent(lastGateLog.slice(-MAX_REFLECTION_CHARS)));
    return out;
  });
}

function indent(text: string): string[] {
  return text.split('\n').map((line) => `    ${line}`);
}
