/**
 * The `agent.preset` names world.yaml accepts, and the variables each preset's CLI reads
 * (credentials, endpoints). They live with the manifest, not with the presets, because the world
 * needs both without the agents: the schema validates the name, and the ledger scrubs the values
 * of these variables from every log it stores (secret-env.ts). src/agents/presets/ builds each
 * preset's command line on top of this table.
 */
export const PRESET_NAMES = ['claude-code', 'codex', 'aider', 'opencode', 'gemini', 'copilot', 'qwen-code'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

/**
 * Variables of the presets that hold a setting, not a secret: endpoints, regions, projects and
 * switches. The ledger keeps their values readable (a base URL in a log says where the agent
 * went); every other preset variable is scrubbed.
 */
export const PRESET_SETTINGS: ReadonlySet<string> = new Set([
  'ANTHROPIC_BASE_URL',
  'CLAUDE_CODE_USE_BEDROCK',
  'CLAUDE_CODE_USE_VERTEX',
  'AWS_REGION',
  'ANTHROPIC_VERTEX_PROJECT_ID',
  'CLOUD_ML_REGION',
  'IS_SANDBOX',
  'OPENAI_API_BASE',
  'OLLAMA_API_BASE',
  'AIDER_MODEL',
  'GOOGLE_CLOUD_PROJECT',
  'GOOGLE_CLOUD_LOCATION',
  'GOOGLE_GENAI_USE_VERTEXAI',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'COPILOT_PROVIDER_TYPE',
  'COPILOT_PROVIDER_WIRE_API',
  'OPENAI_MODEL',
]);

/** Variables a preset passes through when set, in addition to `agent.env`. */
export const PRESET_ENV: Readonly<Record<PresetName, readonly string[]>> = {
  'claude-code': [
    'ANTHROPIC_API_KEY',
    'ANTHROPIC_AUTH_TOKEN',
    'ANTHROPIC_BASE_URL',
    'CLAUDE_CODE_OAUTH_TOKEN',
    'CLAUDE_CODE_USE_BEDROCK',
    'CLAUDE_CODE_USE_VERTEX',
    'AWS_REGION',
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'ANTHROPIC_VERTEX_PROJECT_ID',
    'CLOUD_ML_REGION',
    'IS_SANDBOX',
  ],
  codex: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
  aider: [
    'OPENAI_API_KEY',
    'OPENAI_API_BASE',
    'ANTHROPIC_API_KEY',
    'GEMINI_API_KEY',
    'OPENROUTER_API_KEY',
    'DEEPSEEK_API_KEY',
    'OLLAMA_API_BASE',
    'AIDER_MODEL',
  ],
  opencode: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY', 'GOOGLE_GENERATIVE_AI_API_KEY'],
  gemini: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_CLOUD_PROJECT', 'GOOGLE_CLOUD_LOCATION', 'GOOGLE_GENAI_USE_VERTEXAI', 'GOOGLE_APPLICATION_CREDENTIALS'],
  // Bring-your-own-model keys only: Copilot always runs in that mode, behind the gateway. A GitHub token (GitHub's own models)
  // would enter the sandbox as it is, since the gateway cannot stand in for that login.
  copilot: ['COPILOT_PROVIDER_API_KEY', 'COPILOT_PROVIDER_BEARER_TOKEN', 'COPILOT_PROVIDER_TYPE', 'COPILOT_PROVIDER_WIRE_API'],
  'qwen-code': ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL'],
};
