/**
 * The placeholders a prompt template (`agent.promptTemplate`) may use, with what each holds.
 * docs/guides/agents-and-presets.md lists these placeholders.
 */
export const PROMPT_PLACEHOLDERS: Readonly<Record<string, string>> = {
  world: "the world's name",
  taskId: "the task's id",
  attempt: 'the attempt number counted since the task was last retried or reopened, 1 for the first (never more than retry.maxAttempts)',
  maxAttempts: 'retry.maxAttempts',
  goal: 'goal.outcome',
  title: "the task's title",
  description: "the task's description (may be empty)",
  acceptance: "the task's acceptance text (may be empty)",
  paths: 'the paths the task may change, as a list',
  protected: 'the protected paths, as a list',
  test: 'verify.test',
  check: "the task's check command (may be empty)",
  testCommands:
    'every command the gate runs, in order, joined by " and ": verify.setup, verify.build, verify.test, the check of this task and of every done task',
  gateCommands: 'the same commands as a list, each as "step: command" (setup, build, test, check:<task>)',
  constraints: 'goal.constraints, as a list',
  planner: 'true for a planner task',
  tasksDir: 'tasksDir, or "(no tasksDir set)"',
  taskIds: 'ids of the tasks in world.yaml, as a list',
  progressFile: 'goal.progressFile (may be empty)',
  retryNote: 'the note of the person who gave a blocked task new attempts (may be empty)',
  reflections: 'earlier failed attempts at this task, newest first, with the last gate log tail (empty on a first attempt)',
};

/**
 * The prompt every episode gets unless the manifest sets `agent.promptTemplate`: the goal, the
 * task, the rules the gate enforces, the handoff file and what went wrong before.
 */
export const DEFAULT_PROMPT_TEMPLATE = `# World "{{world}}": task {{taskId}} (attempt {{attempt}} of {{maxAttempts}})

## Goal
{{goal}}

## Task: {{title}}
{{#description}}
{{description}}
{{/description}}
{{^description}}
(no further description)
{{/description}}
{{#acceptance}}

## Acceptance
{{acceptance}}
{{/acceptance}}

## Rules the gate enforces
- Change only: {{paths}}
- Never change: {{protected}}
- Every change must pass each of these commands, run in this order in a fresh sandbox without network (nothing else is run):
{{#gateCommands}}
  - {{.}}
{{/gateCommands}}
{{#constraints}}
- {{.}}
{{/constraints}}
- Leave your change in the working tree (committing is optional); an empty change counts as a failure.
{{#planner}}

## You are planning
Propose the next tasks: write a new YAML file in {{tasksDir}}/ holding { tasks: [...] }, each task with id, title, description, acceptance, paths, dependsOn and check, as in world.yaml. Existing tasks: {{taskIds}}. The gate accepts only a plan that validates and leaves existing tasks unchanged.
{{/planner}}
{{#progressFile}}

## Handoff notes
Read {{progressFile}} first: it holds what earlier episodes learned. Before you finish, append a few lines on what you did and what the next episode should know (you may always change that file).
{{/progressFile}}
{{#retryNote}}

## A note from the person who asked for this retry
{{retryNote}}
{{/retryNote}}
{{#reflections}}

## Earlier attempts at this task (newest first)
{{reflections}}
{{/reflections}}
`;
