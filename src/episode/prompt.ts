import type { EpisodeRecord } from '../world/episode-record.js';
import type { TaskSpec, WorldManifest } from '../world/manifest-schema.js';

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
}

/**
 * The prompt a fresh episode starts from. It is the only memory an episode has of the world's
 * past, so it carries the goal, the task, the rules the gate will enforce and what went wrong in
 * earlier attempts, newest first and bounded in size.
 */
export function composePrompt(input: PromptInput): string {
  const { manifest, task } = input;
  const lines: string[] = [
    `# World "${manifest.name}": task ${task.id} (attempt ${input.attempt} of ${manifest.retry.maxAttempts})`,
    '',
    '## Goal',
    manifest.goal.outcome,
    '',
    `## Task: ${task.title}`,
    task.description || '(no further description)',
  ];
  if (task.acceptance) lines.push('', '## Acceptance', task.acceptance);
  lines.push('', '## Rules the gate enforces', `- Change only: ${task.paths.join(', ')}`, `- Never change: ${manifest.protected.join(', ')}`);
  lines.push(`- Every change must pass: ${manifest.verify.test}${task.check ? ` and ${task.check}` : ''}`);
  for (const constraint of manifest.goal.constraints) lines.push(`- ${constraint}`);
  lines.push('- Leave your change in the working tree (committing is optional); an empty change counts as a failure.');
  if (task.kind === 'planner') {
    lines.push('', '## You are planning', `Propose the next tasks: write a new YAML file in ${manifest.tasksDir ?? '(no tasksDir set)'}/ holding { tasks: [...] }, each task with id, title, description, acceptance, paths, dependsOn and check, as in world.yaml. Existing tasks: ${manifest.tasks.map((t) => t.id).join(', ')}. The gate accepts only a plan that validates and leaves existing tasks unchanged.`);
  }
  if (manifest.goal.progressFile) {
    lines.push('', '## Handoff notes', `Read ${manifest.goal.progressFile} first: it holds what earlier episodes learned. Before you finish, append a few lines on what you did and what the next episode should know (you may always change that file).`);
  }
  if (input.retryNote) lines.push('', '## A note from the person who asked for this retry', input.retryNote);
  const reflections = reflect(input.earlier, input.lastGateLog);
  if (reflections.length > 0) lines.push('', '## Earlier attempts at this task (newest first)', ...reflections);
  return `${lines.join('\n')}\n`;
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
    // Hidden checks stay hidden: their output never reaches an agent.
    if (i === 0 && lastGateLog && e.reason !== 'holdout-failed') out.push('  gate log (tail):', ...indent(lastGateLog.slice(-MAX_REFLECTION_CHARS)));
    return out;
  });
}

function indent(text: string): string[] {
  return text.split('\n').map((line) => `    ${line}`);
}
