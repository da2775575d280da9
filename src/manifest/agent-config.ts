import type { WorldManifest } from './schema.js';

/** One agent's resolved configuration: the manifest's `agent` without its rotation. */
export type AgentConfig = Omit<WorldManifest['agent'], 'rotation'>;
type RotationEntry = WorldManifest['agent']['rotation'][number];

/** Fields that pick a different agent; an entry naming one of them brings its whole choice. */
const AGENT_PICKERS = ['kind', 'preset', 'command', 'script', 'sim'] as const;
/** Fields that configure the chosen agent and its model. */
const CHOICE_FIELDS = [...AGENT_PICKERS, 'args', 'model', 'baseUrl', 'apiKeyEnv', 'price'] as const;

/**
 * The agent attempt `attempt` (from 1) of a task uses: `rotation[(attempt - 1) mod length]` merged
 * over the base agent, or the base agent when there is no rotation. Retries that differ from the
 * last attempt fail less alike (DESIGN.md: the correlation term).
 *
 * How an entry merges: an entry that names another agent (`kind`, `preset`, `command`, `script`
 * or `sim`) replaces the base's whole choice of agent and model (its `model`, `args`, `baseUrl`,
 * `apiKeyEnv` and `price` too, since they belong to the other agent), and `kind` defaults to
 * `command` when it names a preset or a command. An entry naming only `model`, `args`, `baseUrl`,
 * `apiKeyEnv` or `price` keeps the base's agent and changes just those. `env` adds to the base's;
 * budgets, sandbox and prompt template are always the base's.
 */
export function agentConfigForAttempt(agent: WorldManifest['agent'], attempt: number): AgentConfig {
  const { rotation, ...base } = agent;
  if (rotation.length === 0) return base;
  return mergeRotationEntry(base, rotation[(Math.max(1, attempt) - 1) % rotation.length]!);
}

export function mergeRotationEntry(base: AgentConfig, entry: RotationEntry): AgentConfig {
  const merged: Record<string, unknown> = { ...base };
  if (AGENT_PICKERS.some((key) => entry[key] !== undefined)) {
    for (const key of CHOICE_FIELDS) delete merged[key];
    merged.kind = entry.kind ?? (entry.preset !== undefined || entry.command !== undefined ? 'command' : base.kind);
  }
  for (const key of CHOICE_FIELDS) if (entry[key] !== undefined) merged[key] = entry[key];
  merged.env = [...new Set([...base.env, ...(entry.env ?? [])])];
  return merged as AgentConfig;
}
