import type { AgentUsage } from '../../usage/usage.js';
import { lineSplitter, numberAt, objectAt, parseJsonObject } from './json-lines.js';
import { PRESET_ENV } from '../../../manifest/preset-names.js';
import { classifyApiError, statusIn, type CliFailure } from './cli-failure.js';
import type { CommandPreset, PresetLaunch, PresetOptions, UsageReader } from './preset.js';

/** The provider entry Genesis writes for `agent.baseUrl`. */
export const CODEX_PROVIDER = 'genesis';

/**
 * Codex CLI, non-interactive: `codex exec --json <sandbox> [--model M] [args…] -`, the prompt on
 * stdin (`-`). `--json` prints one event per line (`thread.started`, `item.completed`, …,
 * `turn.completed`). In an agent sandbox (docker, bwrap) it runs with
 * `--dangerously-bypass-approvals-and-sandbox`: Codex's own Landlock sandbox cannot nest inside
 * ours, and ours is the boundary that matters; unconfined, with `-s workspace-write` (exec never
 * asks for approvals). Codex has no `--full-auto` any more.
 *
 * Codex reads its endpoint from its configuration, not from OPENAI_BASE_URL: `agent.baseUrl` (an
 * OpenAI-compatible root ending in /v1) becomes a `model_providers.genesis` entry (Responses API,
 * key from OPENAI_API_KEY) in `$HOME/.codex/config.toml`, written into the agent's private HOME.
 *
 * Usage is the sum over `turn.completed` events of `usage.input_tokens` (cached included),
 * `usage.cached_input_tokens` and `usage.output_tokens`. Codex does not report a cost: it stays
 * unknown unless `agent.price` (or the price table, for a known `agent.model`) prices the tokens.
 * A refused call ends the turn with `turn.failed` (or an `error` event) naming the status.
 */
export const codexPreset: CommandPreset = {
  name: 'codex',
  install: 'npm install -g @openai/codex',
  env: PRESET_ENV.codex,
  defaultUpstream: () => 'https://api.openai.com/v1',
  argv: (o: PresetOptions) => [
    'codex',
    'exec',
    '--json',
    ...(o.sandboxed ? ['--dangerously-bypass-approvals-and-sandbox'] : ['-s', 'workspace-write']),
    ...(o.model ? ['--model', o.model] : []),
    ...o.args,
    '-',
  ],
  launch: launchCodex,
  usageReader: readCodexUsage,
};

function launchCodex(o: PresetOptions): PresetLaunch {
  const lines = ['check_for_update_on_startup = false', '', '[analytics]', 'enabled = false', '', '[otel]', 'exporter = "none"', ''];
  if (o.baseUrl) {
    lines.unshift(`model_provider = "${CODEX_PROVIDER}"`);
    lines.push(
      `[model_providers.${CODEX_PROVIDER}]`,
      `name = "${CODEX_PROVIDER}"`,
      `base_url = ${JSON.stringify(o.baseUrl)}`,
      'env_key = "OPENAI_API_KEY"',
      'wire_api = "responses"',
      '',
    );
  }
  return { env: {}, homeFiles: { '.codex/config.toml': lines.join('\n') } };
}

function readCodexUsage(): UsageReader {
  let turns = 0;
  let failure: CliFailure | null = null;
  const total = { input: 0, cached: 0, output: 0, cachedKnown: true, complete: true };
  const lines = lineSplitter((line) => {
    const event = parseJsonObject(line);
    // Only the turn's end: an `error` event before it is a retry Codex may yet recover from.
    if (event?.type === 'turn.failed') {
      const message = String(objectAt(event.error).message ?? '');
      failure ??= classifyApiError(statusIn(message), message);
      return;
    }
    if (event?.type !== 'turn.completed') return;
    turns++;
    const u = objectAt(event.usage);
    const input = numberAt(u.input_tokens);
    const output = numberAt(u.output_tokens);
    const cached = numberAt(u.cached_input_tokens);
    if (input === null || output === null) total.complete = false;
    total.input += input ?? 0;
    total.output += output ?? 0;
    if (cached === null) total.cachedKnown = false;
    total.cached += cached ?? 0;
  });
  return {
    push: (chunk) => lines.push(chunk),
    usage: (): AgentUsage => {
      lines.flush();
      const known = turns > 0 && total.complete;
      return {
        inputTokens: known ? total.input : null,
        outputTokens: known ? total.output : null,
        cachedTokens: known && total.cachedKnown ? total.cached : null,
        costUsd: null,
      };
    },
    failure: () => failure,
  };
}
