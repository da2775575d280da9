import { unknownUsage, type AgentUsage } from '../../usage/usage.js';
import { lineSplitter, numberAt, objectAt, parseJsonObject, type JsonObject } from './json-lines.js';
import { PRESET_ENV } from '../../../manifest/preset-names.js';
import { classifyApiError, resetTimeOf, type CliFailure } from './cli-failure.js';
import type { CommandPreset, PresetLaunch, PresetOptions, UsageReader } from './preset.js';

/**
 * Copilot's usage report (`--usage-output-file`), in the agent's private HOME, read once it has
 * exited: Copilot writes it by renaming a temporary file over the name, so it cannot be a pipe.
 */
export const COPILOT_USAGE_FILE = '.copilot-usage.json';
/** Failed calls taken as the model being overloaded: Copilot retries five times with a backoff of seconds. */
const OVERLOADED_RETRIES = 3;

/**
 * GitHub Copilot CLI, non-interactive: `copilot --output-format json --allow-all-tools
 * --no-ask-user --no-auto-update --disable-client-telemetry [--model M] [args…]`, the prompt on
 * stdin (piped input is the prompt when no `-p` is given). `--allow-all-tools` is what
 * non-interactive mode requires; file access stays within the workspace, its working directory.
 * `--output-format json` prints one event per line (`assistant.message`, `model.call_failure`,
 * `session.error`, …, `result`).
 *
 * `agent.baseUrl` (an OpenAI-compatible root ending in /v1) selects Copilot's bring-your-own-model
 * mode: COPILOT_PROVIDER_BASE_URL, with COPILOT_PROVIDER_API_KEY (or _BEARER_TOKEN) passed through
 * and COPILOT_OFFLINE=true, so no GitHub login, telemetry or update check is tried.
 * COPILOT_PROVIDER_TYPE (`anthropic`, `azure`) and COPILOT_PROVIDER_WIRE_API (`responses`) pass
 * through for other APIs. Without a baseUrl the same mode goes to OpenAI's API, Copilot's default
 * provider type (https://api.openai.com/v1, COPILOT_PROVIDER_TYPE set to `openai`): GitHub's own
 * models (COPILOT_GITHUB_TOKEN) are reached through a login of its own that the gateway cannot
 * stand between, so Genesis does not use them; another provider needs `agent.baseUrl`.
 *
 * Copilot prints no token counts in its events: `--usage-output-file=~/.copilot-usage.json` has it
 * write its usage report into its private HOME (a settings file there turns auto-update and the
 * banner off, and makes that HOME private even unconfined), read once it has exited. Usage is the
 * sum over its `modelMetrics` of `usage.inputTokens` (the API's prompt tokens, cached included),
 * `usage.cacheReadTokens` cached and `usage.outputTokens` output (reasoning included). Its
 * `requests.cost` counts premium requests, not dollars: the cost stays unknown unless
 * `agent.price` (or the price table) prices the tokens.
 *
 * Copilot retries a refused call by itself and says so in a `model.call_failure` event with the
 * status: a 401 it retries three times, so the first is read as refused credentials; a 429 as a
 * usage limit resetting when its message says; a 503 or 529 as an overloaded model at the third.
 */
export const copilotPreset: CommandPreset = {
  name: 'copilot',
  install: 'npm install -g @github/copilot',
  env: PRESET_ENV.copilot,
  defaultUpstream: () => 'https://api.openai.com/v1',
  argv: (o: PresetOptions) => [
    'copilot',
    '--output-format',
    'json',
    '--allow-all-tools',
    '--no-ask-user',
    '--no-auto-update',
    '--disable-client-telemetry',
    // One argument: Genesis expands a leading ~ to the host's HOME; Copilot expands this one to the agent's.
    `--usage-output-file=~/${COPILOT_USAGE_FILE}`,
    ...(o.model ? ['--model', o.model] : []),
    ...o.args,
  ],
  launch: launchCopilot,
  usageReader: readCopilotUsage,
};

function launchCopilot(o: PresetOptions): PresetLaunch {
  return {
    env: {
      ...(o.baseUrl ? { COPILOT_PROVIDER_BASE_URL: o.baseUrl, COPILOT_OFFLINE: 'true' } : {}),
      // The vendor's endpoint is OpenAI's: a provider type of this host's naming another would not match it.
      ...(o.vendorEndpoint ? { COPILOT_PROVIDER_TYPE: 'openai' } : {}),
      COPILOT_AUTO_UPDATE: 'false',
    },
    homeFiles: { '.copilot/settings.json': `${JSON.stringify({ autoUpdate: false, banner: 'never' }, null, 2)}\n` },
    outputFiles: [COPILOT_USAGE_FILE],
  };
}

function readCopilotUsage(): UsageReader {
  let failure: CliFailure | null = null;
  let overloaded = 0;
  const events = lineSplitter((line) => {
    const event = parseJsonObject(line);
    if (event?.type !== 'model.call_failure' && event?.type !== 'session.error') return;
    const data = objectAt(event.data);
    const status = numberAt(data.statusCode);
    const text = String(data.errorMessage ?? data.message ?? '');
    const seen = classifyApiError(status, text);
    if (!seen) return;
    const message = `the model endpoint answered ${status ?? 'no status'} (${text.slice(0, 300)})`;
    if (seen.kind === 'auth') failure ??= { kind: 'auth', message };
    if (seen.kind === 'usage-limit') failure ??= { kind: 'usage-limit', message, resetAt: resetTimeOf(text) };
    // A session.error is Copilot giving up after its own retries: overloaded then, whatever the count.
    if (seen.kind === 'overloaded' && (++overloaded >= OVERLOADED_RETRIES || event.type === 'session.error')) failure ??= { kind: 'overloaded', message };
  });
  let usage: AgentUsage = unknownUsage();
  return {
    push: (chunk) => events.push(chunk),
    pushFile: (_path, content) => {
      usage = usageOfReport(parseJsonObject(content));
    },
    usage: () => {
      events.flush();
      return usage;
    },
    failure: () => failure,
  };
}

/** The tokens of a usage report, summed over its models; unknown when it names no usage. */
function usageOfReport(report: JsonObject | null): AgentUsage {
  const models = Object.values(objectAt(report?.modelMetrics)).map((m) => objectAt(objectAt(m).usage));
  const total = { input: 0, cached: 0, output: 0 };
  for (const u of models) {
    const input = numberAt(u.inputTokens);
    const output = numberAt(u.outputTokens);
    if (input === null || output === null) return unknownUsage();
    total.input += input;
    total.output += output;
    total.cached += numberAt(u.cacheReadTokens) ?? 0;
  }
  if (models.length === 0) return unknownUsage();
  return { inputTokens: total.input, outputTokens: total.output, cachedTokens: total.cached, costUsd: null };
}
