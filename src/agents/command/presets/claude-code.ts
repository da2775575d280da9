import { unknownUsage, type AgentUsage } from '../../usage/usage.js';
import { classifyApiError, type CliFailure } from './cli-failure.js';
import { lineSplitter, numberAt, objectAt, parseJsonObject, sumKnown } from './json-lines.js';
import { PRESET_ENV } from '../../../manifest/preset-names.js';
import type { CommandPreset, PresetOptions, UsageReader } from './preset.js';

/**
 * Claude Code in print mode: `claude -p --output-format stream-json --verbose
 * --dangerously-skip-permissions [--model M] [args…]`, the prompt on stdin. stream-json (rather
 * than json) makes the agent log a readable transcript of every turn, and ends with the same
 * `{"type":"result", …}` object that `--output-format json` prints alone.
 *
 * Usage comes from that result object: `usage.input_tokens + usage.cache_creation_input_tokens +
 * usage.cache_read_input_tokens` input tokens (Anthropic counts cached input apart; Genesis counts
 * it in), `usage.cache_read_input_tokens` cached, `usage.output_tokens` output, and
 * `total_cost_usd` (`cost_usd` in older versions) as reported by Claude Code itself.
 *
 * Claude Code refuses to skip its permission prompts when it runs as root, unless IS_SANDBOX=1 is
 * set (passed through when set); the docker and bwrap agent sandboxes run it as a user that is not root.
 *
 * `agent.baseUrl` (Anthropic's API root, e.g. `http://127.0.0.1:8080`) becomes ANTHROPIC_BASE_URL;
 * telemetry, error reports, the auto-updater and other non-essential traffic are off.
 *
 * Claude Code retries a refused call by itself and says so in a `{"type":"system","subtype":
 * "api_retry","error_status":…}` line: a 401 it would retry until killed, so the first one is
 * read as refused credentials; a 429 as a usage limit resetting after its `retry_delay_ms`; a 529
 * as an overloaded model once it has retried three times.
 */
export const claudeCodePreset: CommandPreset = {
  name: 'claude-code',
  install: 'npm install -g @anthropic-ai/claude-code',
  env: PRESET_ENV['claude-code'],
  defaultUpstream: () => 'https://api.anthropic.com',
  argv: (o: PresetOptions) => [
    'claude',
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    '--dangerously-skip-permissions',
    ...(o.model ? ['--model', o.model] : []),
    ...o.args,
  ],
  launch: (o: PresetOptions) => ({
    env: {
      ...(o.baseUrl ? { ANTHROPIC_BASE_URL: o.baseUrl } : {}),
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    },
    homeFiles: {},
  }),
  usageReader: readClaudeUsage,
};

/** Overloaded answers Claude Code may retry by itself before Genesis takes over with its own backoff. */
const OVERLOADED_RETRIES = 3;

function readClaudeUsage(): UsageReader {
  let usage: AgentUsage = unknownUsage();
  let failure: CliFailure | null = null;
  let overloaded = 0;
  const lines = lineSplitter((line) => {
    const event = parseJsonObject(line);
    if (event?.type === 'system' && event.subtype === 'api_retry') {
      const status = numberAt(event.error_status);
      const seen = classifyApiError(status, typeof event.error === 'string' ? event.error : '');
      const message = `the model endpoint answered ${status ?? 'no status'} (${String(event.error ?? 'unknown')})`;
      if (seen?.kind === 'auth') failure ??= { kind: 'auth', message };
      if (seen?.kind === 'usage-limit') failure ??= { kind: 'usage-limit', message, resetAt: Date.now() + (numberAt(event.retry_delay_ms) ?? 60_000) };
      if (seen?.kind === 'overloaded' && ++overloaded >= OVERLOADED_RETRIES) failure ??= { kind: 'overloaded', message };
      return;
    }
    if (event?.type !== 'result') return;
    if (event.is_error === true && failure === null) {
      failure = classifyApiError(numberAt(event.api_error_status), typeof event.result === 'string' ? event.result : '');
    }
    const u = objectAt(event.usage);
    const fresh = numberAt(u.input_tokens);
    const written = numberAt(u.cache_creation_input_tokens);
    const read = numberAt(u.cache_read_input_tokens);
    usage = {
      inputTokens: fresh === null ? null : sumKnown(fresh, written, read),
      outputTokens: numberAt(u.output_tokens),
      cachedTokens: fresh === null ? null : (read ?? 0),
      costUsd: numberAt(event.total_cost_usd) ?? numberAt(event.cost_usd),
    };
  });
  return {
    push: (chunk) => lines.push(chunk),
    usage: () => {
      lines.flush();
      return usage;
    },
    failure: () => failure,
  };
}
