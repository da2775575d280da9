import { unknownUsage, type AgentUsage } from '../../usage/usage.js';
import { lineSplitter, numberAt, objectAt, parseJsonObject } from './json-lines.js';
import { PRESET_ENV } from '../../../manifest/preset-names.js';
import { classifyApiError, statusIn, type CliFailure } from './cli-failure.js';
import type { CommandPreset, PresetLaunch, PresetOptions, UsageReader } from './preset.js';

/** The positional prompt; the task itself arrives on stdin, which Qwen Code puts before it. */
export const QWEN_PROMPT = 'Carry out the task given above.';

/**
 * Qwen Code, headless: `qwen --output-format stream-json --yolo [--model M] [args…] "Carry out
 * the task given above."`, the prompt on stdin (Qwen Code joins piped input and the positional
 * prompt). `--yolo` approves its tool calls; `stream-json` prints one event per line, Claude
 * Code's shape (`system`, `assistant`, …, `result`).
 *
 * A settings file in the agent's private HOME (`.qwen/settings.json`) selects the OpenAI-compatible
 * authentication (key from OPENAI_API_KEY), and turns usage statistics, telemetry, update checks
 * and the background memory extraction off (a second model call per episode that would write into
 * HOME, its tokens spent on nothing the episode keeps); `agent.baseUrl` (an OpenAI-compatible root
 * ending in /v1) becomes OPENAI_BASE_URL. A settings file of your own (`agent.homeFiles`) takes its place.
 * Without `agent.baseUrl` the gateway forwards to Alibaba Cloud's DashScope, the OpenAI-compatible
 * endpoint of Qwen Code's own default model (qwen3-coder-plus).
 *
 * Usage comes from the `result` event, the session's sum: `usage.input_tokens` (the API's prompt
 * tokens, cached included), `usage.cache_read_input_tokens` cached, `usage.output_tokens` output
 * (reasoning included, as the API counts it). Qwen Code does not report a cost: it stays unknown
 * unless `agent.price` (or the price table) prices the tokens.
 *
 * A refused call ends the run with an error result, `[API Error: 401 …]`. A limit or an overload
 * Qwen Code retries by itself, silently at first (with the delay the server asked for), then with
 * a line on stderr, `Retrying in 60s (attempt 1/10): [API Error: 429 …]`: the first such line is
 * read, since by then its quiet retries are spent.
 */
export const qwenCodePreset: CommandPreset = {
  name: 'qwen-code',
  install: 'npm install -g @qwen-code/qwen-code',
  env: PRESET_ENV['qwen-code'],
  defaultUpstream: () => 'https://dashscope.aliyuncs.com/compatible-mode/v1',
  argv: (o: PresetOptions) => ['qwen', '--output-format', 'stream-json', '--yolo', ...(o.model ? ['--model', o.model] : []), ...o.args, QWEN_PROMPT],
  launch: launchQwen,
  usageReader: readQwenUsage,
};

function launchQwen(o: PresetOptions): PresetLaunch {
  const settings = {
    security: { auth: { selectedType: 'openai' } },
    general: { enableAutoUpdate: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false },
  };
  return {
    env: {
      ...(o.baseUrl ? { OPENAI_BASE_URL: o.baseUrl } : {}),
      // Its warning that --yolo runs unconfined is false in an agent sandbox.
      ...(o.sandboxed ? { QWEN_CODE_SUPPRESS_YOLO_WARNING: '1' } : {}),
    },
    homeFiles: { '.qwen/settings.json': `${JSON.stringify(settings, null, 2)}\n` },
  };
}

/** `[API Error: 401 Incorrect API key provided.]`, the whole of Qwen Code's message for a refused call (not a model's sentence quoting one). */
const API_ERROR = /^\[API Error: (.*)\]$/s;
/** Its retry line on stderr: `Retrying in 60s (attempt 1/10): [API Error: 503 …]`. */
const RETRY_LINE = /^Retrying in \d+s \(attempt \d+\/\d+\): (.*)$/;

function readQwenUsage(): UsageReader {
  let usage: AgentUsage = unknownUsage();
  let failure: CliFailure | null = null;
  const refused = (text: string) => {
    const message = API_ERROR.exec(text.trim())?.[1];
    if (message !== undefined) failure ??= classifyApiError(statusIn(message), message);
  };
  const lines = lineSplitter((line) => {
    const event = parseJsonObject(line);
    if (event?.type === 'assistant') {
      const content = objectAt(event.message).content;
      for (const part of Array.isArray(content) ? content : []) {
        const text = objectAt(part).text;
        if (typeof text === 'string') refused(text);
      }
      return;
    }
    if (event?.type !== 'result') return;
    if (event.is_error === true) refused(String(objectAt(event.error).message ?? ''));
    const u = objectAt(event.usage);
    const input = numberAt(u.input_tokens);
    const output = numberAt(u.output_tokens);
    // An error result before any answer reports zeros: nothing was measured, not nothing spent.
    if (input === null || output === null || (event.is_error === true && input + output === 0)) return;
    usage = { inputTokens: input, outputTokens: output, cachedTokens: numberAt(u.cache_read_input_tokens) ?? 0, costUsd: null };
  });
  const errors = lineSplitter((line) => {
    const retried = RETRY_LINE.exec(line.trim())?.[1];
    if (retried !== undefined) refused(retried);
  });
  return {
    push: (chunk) => lines.push(chunk),
    pushError: (chunk) => errors.push(chunk),
    usage: () => {
      lines.flush();
      return usage;
    },
    failure: () => failure,
  };
}
