import type { AgentUsage } from '../../usage/usage.js';
import { lineSplitter, numberAt, objectAt, parseJsonObject } from './json-lines.js';
import { PRESET_ENV } from '../../../manifest/preset-names.js';
import { classifyApiError, statusIn, type CliFailure } from './cli-failure.js';
import type { CommandPreset, PresetLaunch, PresetOptions, UsageReader } from './preset.js';

/** What the positional message says; the task itself arrives on stdin, which `opencode run` reads. */
export const OPENCODE_MESSAGE = 'Carry out the task given on standard input.';
/** The provider entry Genesis writes for `agent.baseUrl`. */
export const OPENCODE_PROVIDER = 'genesis';
/** The session's title: given, so OpenCode makes no model call of its own to invent one (a call whose tokens its output never reports). */
export const OPENCODE_TITLE = 'genesis episode';

/**
 * Its error log on stderr: OpenCode retries an overloaded model silently in its JSON output, and
 * only this log ("stream error" lines) says why no step finishes.
 */
const OPENCODE_LOGS = ['--print-logs', '--log-level', 'ERROR'];
/** Logged overloads taken as the model being overloaded: OpenCode backs off and retries without end. */
const OVERLOADED_RETRIES = 3;

/** The API root of each of OpenCode's own providers Genesis can route, as its SDK calls it by default (the `provider/` of `--model`). */
const PROVIDER_ROOTS: Readonly<Record<string, string>> = {
  anthropic: 'https://api.anthropic.com/v1',
  openai: 'https://api.openai.com/v1',
  google: 'https://generativelanguage.googleapis.com/v1beta',
};

/** The provider `agent.model` names (`anthropic/claude-sonnet-4-5` → `anthropic`), when it is one of those Genesis can route. */
function vendorOf(model: string | undefined): string | null {
  const provider = model?.split('/')[0];
  return provider !== undefined && model!.includes('/') && provider in PROVIDER_ROOTS ? provider : null;
}

/**
 * OpenCode, non-interactive: `opencode run --format json --title "genesis episode" [--model
 * provider/model] [args…] "Carry out the task given on standard input."`, the prompt on stdin
 * (OpenCode joins piped input with the message). `--format json` prints one event per line.
 *
 * Its configuration is a file in the agent's private HOME (`.config/opencode/opencode.json`: a
 * host path in OPENCODE_CONFIG would not exist in the sandbox): autoupdate and sharing off, and for
 * `agent.baseUrl` (an OpenAI-compatible root ending in /v1) a provider `genesis`
 * (`@ai-sdk/openai-compatible`, key from OPENAI_API_KEY) whose model is `agent.model`, passed as
 * `--model genesis/<model>`; with `agent.price`, the model's cost, so OpenCode prices it itself.
 * Without `agent.baseUrl`, `agent.model` names one of OpenCode's own providers (`anthropic/…`,
 * `openai/…`, `google/…`): that provider is kept and only its `baseURL` moves to the gateway, which
 * forwards to the provider's own API root; any other provider needs `agent.baseUrl`.
 *
 * Usage is the sum over `step_finish` events of `part.tokens`: `input + cache.read + cache.write`
 * input tokens (OpenCode counts cached input apart; Genesis counts it in), `cache.read` cached,
 * `output + reasoning` output (reasoning is billed as output), and `part.cost`, the cost OpenCode
 * computed from its own price list. OpenCode prints a cost of 0 for a model it has no price for:
 * a 0 for tokens that were spent is read as unknown, never as free.
 */
export const opencodePreset: CommandPreset = {
  name: 'opencode',
  install: 'npm install -g opencode-ai',
  env: PRESET_ENV.opencode,
  defaultUpstream: (model) => PROVIDER_ROOTS[vendorOf(model) ?? ''] ?? null,
  upstreamHint: 'or set agent.model to a model of one of its providers Genesis routes: anthropic/…, openai/… or google/…',
  argv: (o: PresetOptions) => [
    'opencode',
    'run',
    '--format',
    'json',
    '--title',
    OPENCODE_TITLE,
    ...OPENCODE_LOGS,
    ...opencodeModel(o),
    ...o.args,
    OPENCODE_MESSAGE,
  ],
  launch: launchOpencode,
  usageReader: readOpencodeUsage,
};

function opencodeModel(o: PresetOptions): string[] {
  if (!o.model) return [];
  return ['--model', o.baseUrl && !o.vendorEndpoint ? `${OPENCODE_PROVIDER}/${o.model}` : o.model];
}

function launchOpencode(o: PresetOptions): PresetLaunch {
  const config = { $schema: 'https://opencode.ai/config.json', autoupdate: false, share: 'disabled', ...providerOf(o) };
  return {
    env: { OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_SHARE: '1' },
    homeFiles: { '.config/opencode/opencode.json': `${JSON.stringify(config, null, 2)}\n` },
  };
}

/** The provider entries of its configuration: its own provider with the gateway's endpoint, or the `genesis` one for `agent.baseUrl`. */
function providerOf(o: PresetOptions): { provider?: Record<string, unknown> } {
  if (!o.baseUrl) return {};
  if (o.vendorEndpoint) return { provider: { [vendorOf(o.model) ?? 'openai']: { options: { baseURL: o.baseUrl } } } };
  const model = o.model ?? 'default';
  const cost = o.price
    ? { cost: { input: o.price.inputPerMTok, output: o.price.outputPerMTok, cache_read: o.price.cachedInputPerMTok ?? o.price.inputPerMTok } }
    : {};
  return {
    provider: {
      [OPENCODE_PROVIDER]: {
        npm: '@ai-sdk/openai-compatible',
        name: OPENCODE_PROVIDER,
        options: { baseURL: o.baseUrl, apiKey: '{env:OPENAI_API_KEY}' },
        models: { [model]: { name: model, ...cost } },
      },
    },
  };
}

function readOpencodeUsage(): UsageReader {
  let steps = 0;
  let failure: CliFailure | null = null;
  const total = { input: 0, cached: 0, output: 0, cost: 0, costKnown: true };
  const lines = lineSplitter((line) => {
    const event = parseJsonObject(line);
    if (event?.type === 'error') {
      const error = objectAt(event.error);
      const data = objectAt(error.data);
      const message = String(data.message ?? error.message ?? error.name ?? '');
      failure ??= classifyApiError(numberAt(data.statusCode) ?? statusIn(message), `${message} ${String(data.responseBody ?? '')}`);
      return;
    }
    if (event?.type !== 'step_finish') return;
    const part = objectAt(event.part);
    const tokens = objectAt(part.tokens);
    const cache = objectAt(tokens.cache);
    steps++;
    const input = (numberAt(tokens.input) ?? 0) + (numberAt(cache.read) ?? 0) + (numberAt(cache.write) ?? 0);
    const output = (numberAt(tokens.output) ?? 0) + (numberAt(tokens.reasoning) ?? 0);
    total.input += input;
    total.cached += numberAt(cache.read) ?? 0;
    total.output += output;
    const cost = numberAt(part.cost);
    // 0 for spent tokens: a model without a price, not a free call.
    if (cost === null || (cost === 0 && input + output > 0)) total.costKnown = false;
    total.cost += cost ?? 0;
  });
  let overloaded = 0;
  const errors = lineSplitter((line) => {
    if (!line.includes('message="stream error"')) return;
    const message = /error\.error="([^"]*)"/.exec(line)?.[1] ?? line;
    if (classifyApiError(statusIn(message), message)?.kind === 'overloaded' && ++overloaded >= OVERLOADED_RETRIES) {
      failure ??= { kind: 'overloaded', message };
    }
  });
  return {
    push: (chunk) => lines.push(chunk),
    pushError: (chunk) => errors.push(chunk),
    usage: (): AgentUsage => {
      lines.flush();
      if (steps === 0) return { inputTokens: null, outputTokens: null, cachedTokens: null, costUsd: null };
      return { inputTokens: total.input, outputTokens: total.output, cachedTokens: total.cached, costUsd: total.costKnown ? total.cost : null };
    },
    failure: () => failure,
  };
}
