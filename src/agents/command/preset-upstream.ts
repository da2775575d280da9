import { GenesisError } from '../../errors/genesis-error.js';
import { agentConfigForAttempt, type AgentConfig } from '../../manifest/agent-config.js';
import type { WorldManifest } from '../../manifest/schema.js';
import { PRESETS } from './presets/index.js';

/** The vendor endpoint a preset's CLI calls for its model when world.yaml sets no `agent.baseUrl`, or null when Genesis cannot know it. */
export function presetUpstream(config: Pick<AgentConfig, 'preset' | 'model'>): string | null {
  if (!config.preset) return null;
  return PRESETS[config.preset].defaultUpstream?.(config.model) ?? null;
}

/**
 * Why an agent's CLI could not be put behind the model gateway (a preset whose endpoint follows
 * a model name Genesis cannot place, without `agent.baseUrl`), or null. Such a CLI would reach its
 * model past the gateway, with the real key in its sandbox: refused rather than let through.
 * `where` names the entry of world.yaml (`agent`, `agent.rotation[1]`).
 */
export function unroutedPreset(config: AgentConfig, where = 'agent'): GenesisError | null {
  if (config.kind !== 'command' || !config.preset || config.baseUrl || presetUpstream(config) !== null) return null;
  const model = config.model ? ` for the model ${config.model}` : '';
  const hint = PRESETS[config.preset].upstreamHint;
  return new GenesisError(
    'agent-endpoint-unknown',
    `${where}.preset ${config.preset} has no endpoint Genesis knows${model}: its model calls could not go through the model gateway, and would carry the real key in its sandbox`,
    { hint: `set ${where}.baseUrl to the API root of its model (e.g. https://api.openai.com/v1)${hint ? `, ${hint}` : ''}; then run again` },
  );
}

/** Refuses, before anything starts, a world with an agent (or a rotation entry) whose CLI could not be put behind the gateway. */
export function checkPresetUpstreams(manifest: WorldManifest): void {
  const entries = manifest.agent.rotation.length;
  for (let attempt = 1; attempt <= Math.max(1, entries); attempt++) {
    const error = unroutedPreset(agentConfigForAttempt(manifest.agent, attempt), entries > 0 ? `agent.rotation[${attempt - 1}]` : 'agent');
    if (error) throw error;
  }
}

/** Variables that hold a key signing each request itself (AWS SigV4 for Bedrock, a Google service account for Vertex): no gateway can swap them. */
const SIGNING_KEYS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'GOOGLE_APPLICATION_CREDENTIALS'];

/**
 * A warning when an agent would be given a request-signing key of this host (`env`): it enters the
 * sandbox as it is, since the gateway can swap a bearer key but cannot re-sign a request. Null when none would.
 */
export function signingKeysWarning(configs: readonly AgentConfig[], env: Readonly<Record<string, string | undefined>>): string | null {
  const passed = new Set<string>();
  for (const config of configs) {
    if (config.kind !== 'command') continue;
    const names = [...(config.preset ? PRESETS[config.preset].env : []), ...config.env];
    for (const name of SIGNING_KEYS) if (names.includes(name) && env[name]) passed.add(name);
  }
  if (passed.size === 0) return null;
  return `the agent is given ${[...passed].join(', ')} in its sandbox: keys that sign each request (Bedrock, Vertex) cannot be swapped by the model gateway, so the agent holds them. Unset them for the run and use an API key, or accept that the agent can read them`;
}
