import type { AgentUsage } from '../../usage/usage.js';
import { lineSplitter, numberAt, objectAt, type JsonObject } from './json-lines.js';
import { LastJsonObject } from './last-json-object.js';
import { PRESET_ENV } from '../../../manifest/preset-names.js';
import { classifyApiError, statusIn, type CliFailure } from './cli-failure.js';
import type { CommandPreset, PresetLaunch, PresetOptions, UsageReader } from './preset.js';

/** The `--prompt` text; the task itself arrives on stdin, which Gemini CLI puts before it. */
export const GEMINI_PROMPT = 'Carry out the task given above.';
/** The result object is printed last; an object longer than this is not kept. */
const KEEP_CHARS = 8 * 1024 * 1024;

/**
 * Gemini CLI, headless: `gemini --output-format json --yolo --skip-trust [--model M] [args…]
 * --prompt "Carry out the task given above."`, the prompt on stdin (Gemini CLI joins piped input
 * and --prompt). `--yolo` approves its tool calls; `--skip-trust` lets it work in the episode's
 * fresh workspace, which it would otherwise refuse as an untrusted folder (exit 55);
 * `--output-format json` prints one (pretty-printed) object at the end: `{ response, stats, error? }`.
 *
 * A settings file in the agent's private HOME (`.gemini/settings.json`) selects the API-key
 * authentication (without it, a key alone fails "Invalid auth method selected.") and turns usage
 * statistics, telemetry and update checks off; `agent.baseUrl` (Gemini's API root) becomes
 * GOOGLE_GEMINI_BASE_URL. A settings file of your own (`agent.homeFiles`) takes its place.
 *
 * Usage is the sum over `stats.models.<model>.tokens` of `prompt` input tokens (cached included),
 * `cached` cached, and `candidates + thoughts` output (thinking is billed as output). Gemini CLI
 * does not report a cost: it stays unknown unless `agent.price` prices the tokens. A refused call
 * ends with the object's `error` (`{ type, message, code }`).
 */
export const geminiPreset: CommandPreset = {
  name: 'gemini',
  install: 'npm install -g @google/gemini-cli',
  env: PRESET_ENV.gemini,
  defaultUpstream: () => 'https://generativelanguage.googleapis.com',
  argv: (o: PresetOptions) => [
    'gemini',
    '--output-format',
    'json',
    '--yolo',
    '--skip-trust',
    ...(o.model ? ['--model', o.model] : []),
    ...o.args,
    '--prompt',
    GEMINI_PROMPT,
  ],
  launch: launchGemini,
  usageReader: readGeminiUsage,
};

function launchGemini(o: PresetOptions): PresetLaunch {
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
  };
  return {
    env: { ...(o.baseUrl ? { GOOGLE_GEMINI_BASE_URL: o.baseUrl } : {}), GEMINI_CLI_TRUST_WORKSPACE: 'true' },
    homeFiles: { '.gemini/settings.json': `${JSON.stringify(settings, null, 2)}\n` },
  };
}

function readGeminiUsage(): UsageReader {
  const result = new LastJsonObject(KEEP_CHARS);
  // With --output-format json, Gemini CLI prints its error object, and each refusal it retries, on stderr.
  const errorObject = new LastJsonObject(KEEP_CHARS);
  const retried = retriedFailures();
  const errorLines = lineSplitter(retried.line);
  return {
    // Each chunk is read once as it comes: the result object comes at the end, in a few chunks.
    failure: (): CliFailure | null => errorObjectFailure(result.value) ?? errorObjectFailure(errorObject.value) ?? retried.found(),
    pushError(chunk) {
      errorObject.push(chunk);
      errorLines.push(chunk);
    },
    push: (chunk) => result.push(chunk),
    usage(): AgentUsage {
      const models = Object.values(objectAt(objectAt(result.value?.stats).models));
      if (!result.value || models.length === 0) return { inputTokens: null, outputTokens: null, cachedTokens: null, costUsd: null };
      const total = { input: 0, cached: 0, output: 0 };
      for (const model of models) {
        const tokens = objectAt(objectAt(model).tokens);
        total.input += numberAt(tokens.prompt) ?? 0;
        total.cached += numberAt(tokens.cached) ?? 0;
        total.output += (numberAt(tokens.candidates) ?? 0) + (numberAt(tokens.thoughts) ?? 0);
      }
      return { inputTokens: total.input, outputTokens: total.output, cachedTokens: total.cached, costUsd: null };
    },
  };
}

/** The `error` of Gemini CLI's final object, classified. */
function errorObjectFailure(result: JsonObject | null): CliFailure | null {
  const error = objectAt(result?.error);
  if (Object.keys(error).length === 0) return null;
  const message = String(error.message ?? '');
  return classifyApiError(numberAt(error.code) ?? statusIn(message), message);
}

/** Retried overloads taken as the model being overloaded: Gemini CLI backs off for minutes, longer than a short agent.timeoutSec. */
const OVERLOADED_RETRIES = 3;

/**
 * A refusal Gemini CLI retries by itself, "Attempt 1 failed: …" or "Attempt 2 failed with status
 * 503. Retrying with backoff... …": refused credentials or a limit would only burn time, so the
 * first says so; an overload it may outlast, so only its third retry does. Read a line at a time.
 */
function retriedFailures(): { line(line: string): void; found(): CliFailure | null } {
  let overloaded = 0;
  let found: CliFailure | null = null;
  return {
    line(line) {
      if (found) return;
      for (const m of line.matchAll(/^Attempt \d+ failed(?: with status (\d{3}))?[.:] ?(.*)$/gm)) {
        const text = m[2]!;
        const failure = classifyApiError(m[1] ? Number(m[1]) : statusIn(text), text);
        if ((failure && failure.kind !== 'overloaded') || (failure?.kind === 'overloaded' && ++overloaded >= OVERLOADED_RETRIES)) {
          found = failure;
          return;
        }
      }
    },
    found: () => found,
  };
}
