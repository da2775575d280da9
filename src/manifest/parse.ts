import { parse as parseYaml, YAMLParseError } from 'yaml';
import type { z } from 'zod';
import { GenesisError } from '../errors/genesis-error.js';
import { describePatternProblem, patternSetsOverlap } from './path-patterns.js';
import { literalSecretsIn } from './secret-shapes.js';
import { manifestSchema, type WorldManifest } from './schema.js';
import { PROMPT_PLACEHOLDERS } from './prompt-placeholders.js';
import { checkPromptTemplate } from './prompt-template.js';
import { agentConfigForAttempt, type AgentConfig } from './agent-config.js';
import { depsSpecProblems } from './deps-rules.js';

export interface ManifestParseResult {
  manifest: WorldManifest | null;
  errors: string[];
  warnings: string[];
}

/**
 * Parses world.yaml text into a complete manifest. Never throws: a malformed manifest comes back
 * as `errors`, each `path: what is wrong`, the way the CLI prints them.
 */
export function parseManifest(text: string, taskFiles: ReadonlyArray<{ path: string; text: string }> = []): ManifestParseResult {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    const where = error instanceof YAMLParseError && error.linePos ? ` (line ${error.linePos[0].line})` : '';
    return { manifest: null, errors: [`world.yaml is not valid YAML${where}: ${(error as Error).message.split('\n')[0]}`], warnings: [] };
  }
  const extra = readTaskFiles(taskFiles);
  if (extra.errors.length > 0) return { manifest: null, errors: extra.errors, warnings: [] };
  if (extra.tasks.length > 0 && raw && typeof raw === 'object') {
    const doc = raw as { tasks?: unknown };
    doc.tasks = [...(Array.isArray(doc.tasks) ? doc.tasks : []), ...extra.tasks];
  }
  // Before the schema: a secret in world.yaml is refused by where it is, whatever else is wrong.
  const secrets = literalSecretsIn(raw);
  if (secrets.length > 0) return { manifest: null, errors: secrets, warnings: [] };
  const parsed = manifestSchema.safeParse(raw ?? {});
  if (!parsed.success) return { manifest: null, errors: parsed.error.issues.flatMap((issue) => formatIssue(issue, raw)), warnings: [] };
  const errors: string[] = [];
  const warnings: string[] = [];
  for (const rule of CROSS_FIELD_RULES) rule(parsed.data, errors, warnings);
  return { manifest: errors.length === 0 ? parsed.data : null, errors, warnings };
}

/** The tasks of the files in `tasksDir`: each file is `{ tasks: [...] }`, appended in name order. */
function readTaskFiles(files: ReadonlyArray<{ path: string; text: string }>): { tasks: unknown[]; errors: string[] } {
  const tasks: unknown[] = [];
  const errors: string[] = [];
  for (const file of [...files].sort((a, b) => a.path.localeCompare(b.path))) {
    let doc: unknown;
    try {
      doc = parseYaml(file.text);
    } catch (error) {
      errors.push(`${file.path}: not valid YAML: ${(error as Error).message.split('\n')[0]}`);
      continue;
    }
    const list = (doc as { tasks?: unknown } | null)?.tasks;
    if (!Array.isArray(list)) errors.push(`${file.path}: expected a list under "tasks:"`);
    else tasks.push(...list);
  }
  return { tasks, errors };
}

/** Parses world.yaml (and the task files of its tasksDir) or throws one GenesisError listing every problem. */
export function readManifest(text: string, source = 'world.yaml', taskFiles: ReadonlyArray<{ path: string; text: string }> = []): WorldManifest {
  const { manifest, errors } = parseManifest(text, taskFiles);
  if (manifest) return manifest;
  throw new GenesisError('manifest-invalid', `Found issues in ${source}:\n${errors.map((e) => `  - ${e}`).join('\n')}`, {
    hint: 'fix the fields named above; docs/reference/world-yaml.md lists every field of world.yaml with its type, default and meaning',
  });
}

function formatIssue(issue: z.core.$ZodIssue, raw: unknown): string[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => `${formatPath([...issue.path, key], raw)}: unknown field; remove it or check its spelling`);
  }
  // zod says a field that is not there was "received undefined": a person wrote nothing, so say it is missing.
  const missing = issue.code === 'invalid_type' && / received undefined$/.test(issue.message);
  const what = missing ? `missing; it is required (${issue.expected})` : issue.message;
  return [`${formatPath(issue.path, raw) || '(top level)'}: ${what}`];
}

/** A field's path as written, a task named by its id as well as its place: `tasks[1] (id "b").dependsOn[0]`. */
function formatPath(path: readonly PropertyKey[], raw: unknown): string {
  return path
    .map((part, i) => {
      if (typeof part !== 'number') return `${i === 0 ? '' : '.'}${String(part)}`;
      if (i !== 1 || path[0] !== 'tasks') return `[${part}]`;
      const id = (raw as { tasks?: Array<{ id?: unknown }> } | null)?.tasks?.[part]?.id;
      return typeof id === 'string' && id !== '' ? taskPlace(part, id) : `[${part}]`;
    })
    .join('');
}

/** Where a task is, by its id and its place in the list (the place alone means nothing in a long list). */
function taskPlace(i: number, id: string): string {
  return `[${i}] (id ${JSON.stringify(id)})`;
}

type Rule = (m: WorldManifest, errors: string[], warnings: string[]) => void;

const CROSS_FIELD_RULES: Rule[] = [
  function agentHasWhatItsKindNeeds(m, errors) {
    agentConfigProblems(m.agent, 'agent', errors);
    // Each rotation entry is checked as the agent it becomes once merged over the base.
    m.agent.rotation.forEach((_, i) => {
      agentConfigProblems(agentConfigForAttempt(m.agent, i + 1), `agent.rotation[${i}]`, errors);
    });
  },
  function agentPromptTemplateIsReadable(m, errors) {
    if (m.agent.promptTemplate === undefined) return;
    for (const problem of checkPromptTemplate(m.agent.promptTemplate, Object.keys(PROMPT_PLACEHOLDERS))) errors.push(`agent.promptTemplate: ${problem}`);
  },
  function agentConfinementNeedsASandbox(m, errors, warnings) {
    const sandboxed = m.agent.sandbox === 'auto' || m.agent.sandbox === 'bwrap';
    if (m.agent.network === 'host') {
      errors.push(
        'agent.network: host would give the agent every service of this host (Redis, the dashboard, every port of its loopback); its model is reachable without it (agent.baseUrl). To run it on the host network anyway, write agent.network: { mode: host, acknowledge: "<why>" }',
      );
    }
    if (typeof m.agent.network !== 'string' && 'allow' in m.agent.network && !sandboxed) {
      errors.push(
        `agent.network.allow: an allow-list is enforced by the auto (bubblewrap) agent sandbox, not by agent.sandbox: ${m.agent.sandbox}; remove agent.sandbox or the list`,
      );
    }
    if (m.agent.limits.diskMb !== undefined && m.agent.sandbox === 'none') {
      warnings.push('agent.limits.diskMb: has no effect with agent.sandbox: none (an unconfined agent can write anywhere you can)');
    }
  },
  function agentSandboxFitsItsKind(m, _errors, warnings) {
    const kinds = new Set([m.agent.kind, ...m.agent.rotation.map((_, i) => agentConfigForAttempt(m.agent, i + 1).kind)]);
    if (m.agent.sandbox !== 'none' && m.agent.sandbox !== 'auto' && ![...kinds].some((k) => k === 'command' || k === 'openai')) {
      warnings.push(`agent.sandbox: ${m.agent.sandbox} has no effect on a ${m.agent.kind} agent, which runs inside Genesis`);
    }
    if (m.agent.apiKeyEnv && m.agent.env.includes(m.agent.apiKeyEnv)) {
      warnings.push(`agent.env: lists ${m.agent.apiKeyEnv}, the API key, so the commands the agent runs can read it too`);
    }
  },
  function webhookSecretsStayWithGenesis(m, errors) {
    const secrets = new Set(m.notify.webhooks.flatMap((h) => [h.urlEnv, h.secretEnv].filter((name): name is string => name !== undefined)));
    const passed = [...m.agent.env, ...m.agent.rotation.flatMap((entry) => entry.env ?? [])];
    for (const name of new Set(passed.filter((n) => secrets.has(n)))) {
      errors.push(`agent.env: lists ${name}, which holds a webhook's URL or secret; every agent would get it. Remove it from agent.env`);
    }
  },
  function depsPathsStayInTheTree(m, errors) {
    if (m.verify.deps) errors.push(...depsSpecProblems(m.verify.deps));
  },
  function taskIdsAreUnique(m, errors) {
    const seen = new Set<string>();
    m.tasks.forEach((task, i) => {
      if (seen.has(task.id)) errors.push(`tasks${taskPlace(i, task.id)}.id: "${task.id}" is used by an earlier task; task ids must be unique`);
      seen.add(task.id);
    });
  },
  function pathsAreSafePatterns(m, errors) {
    m.tasks.forEach((task, i) => {
      task.paths.forEach((pattern, j) => {
        const problem = describePatternProblem(pattern);
        if (problem) errors.push(`tasks${taskPlace(i, task.id)}.paths[${j}]: ${problem}`);
      });
    });
    m.protected.forEach((pattern, j) => {
      const problem = describePatternProblem(pattern);
      if (problem) errors.push(`protected[${j}]: ${problem}`);
    });
  },
  function dependenciesExist(m, errors) {
    const ids = new Set(m.tasks.map((t) => t.id));
    m.tasks.forEach((task, i) => {
      task.dependsOn.forEach((dep, j) => {
        if (!ids.has(dep)) errors.push(`tasks${taskPlace(i, task.id)}.dependsOn[${j}]: no task has id "${dep}"`);
        if (dep === task.id) errors.push(`tasks${taskPlace(i, task.id)}.dependsOn[${j}]: a task cannot depend on itself`);
      });
    });
  },
  function dependenciesHaveNoCycle(m, errors) {
    const cycle = findCycle(m.tasks.map((t) => ({ id: t.id, deps: t.dependsOn })));
    if (cycle) errors.push(`tasks: dependency cycle ${cycle.join(' -> ')}; remove one of these dependsOn entries`);
  },
  function overlappingTasksAreSerialised(m, _errors, warnings) {
    // Two tasks that dependsOn already orders (one reaches the other) never run at once anyway.
    const ancestors = ancestorsOf(m.tasks.map((t) => ({ id: t.id, deps: t.dependsOn })));
    const ordered = (a: string, b: string) => ancestors.get(a)?.has(b) || ancestors.get(b)?.has(a);
    for (let i = 0; i < m.tasks.length; i++) {
      for (let j = i + 1; j < m.tasks.length; j++) {
        const a = m.tasks[i]!;
        const b = m.tasks[j]!;
        if (!ordered(a.id, b.id) && patternSetsOverlap(a.paths, b.paths)) {
          warnings.push(`tasks "${a.id}" and "${b.id}" have overlapping paths; they will never run at the same time`);
        }
      }
    }
  },
];

/** What an agent of this configuration lacks, as `<prefix>.<field>: problem` lines. */
function agentConfigProblems(a: AgentConfig, prefix: string, errors: string[]): void {
  if (a.kind === 'command' && !a.command && !a.preset)
    errors.push(`${prefix}.command: required when agent.kind is "command" (an argv list, e.g. ["bash", "agent.sh"])`);
  if (a.preset && a.kind !== 'command') errors.push(`${prefix}.preset: a preset is a command agent; set kind: command or remove preset`);
  if (a.kind === 'script' && !a.script) errors.push(`${prefix}.script: required when agent.kind is "script" (the path of a recording in the world)`);
  if (a.kind === 'sim' && !a.sim)
    errors.push(`${prefix}.sim: required when agent.kind is "sim" (its rates e, w, d and a seed, e.g. { e: 0.1, w: 0.05, d: 0.8, seed: 1 })`);
  // A tolerance so that e = 0.1 + 0.2 (0.30000000000000004) with w = 0.7 is accepted.
  if (a.kind === 'sim' && a.sim && a.sim.e + a.sim.w > 1 + 1e-12) {
    errors.push(`${prefix}.sim: e + w must be at most 1 (they share one draw), got ${a.sim.e} + ${a.sim.w}`);
  }
  if (a.kind === 'openai' && !a.baseUrl)
    errors.push(`${prefix}.baseUrl: required when agent.kind is "openai" (the API root, e.g. https://api.openai.com/v1 or http://localhost:11434/v1)`);
  if (a.kind === 'openai' && !a.model) errors.push(`${prefix}.model: required when agent.kind is "openai" (the model name the endpoint serves)`);
}

/** Every task each task waits for, directly or through others (a cycle, reported on its own, ends the walk). */
function ancestorsOf(nodes: Array<{ id: string; deps: string[] }>): Map<string, Set<string>> {
  const deps = new Map(nodes.map((n) => [n.id, n.deps]));
  const result = new Map<string, Set<string>>();
  for (const node of nodes) {
    const seen = new Set<string>();
    const todo = [...node.deps];
    while (todo.length > 0) {
      const id = todo.pop()!;
      if (seen.has(id)) continue;
      seen.add(id);
      todo.push(...(deps.get(id) ?? []));
    }
    result.set(node.id, seen);
  }
  return result;
}

function findCycle(nodes: Array<{ id: string; deps: string[] }>): string[] | null {
  const deps = new Map(nodes.map((n) => [n.id, n.deps]));
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (id: string): string[] | null => {
    if (state.get(id) === 'done') return null;
    if (state.get(id) === 'visiting') return [...stack.slice(stack.indexOf(id)), id];
    state.set(id, 'visiting');
    stack.push(id);
    for (const dep of deps.get(id) ?? []) {
      // A self-dependency is reported on its own by dependenciesExist.
      const found = deps.has(dep) && dep !== id ? visit(dep) : null;
      if (found) return found;
    }
    stack.pop();
    state.set(id, 'done');
    return null;
  };
  for (const node of nodes) {
    const found = visit(node.id);
    if (found) return found;
  }
  return null;
}
