import type { AgentUsage } from '../../usage/usage.js';
import { lineSplitter } from './json-lines.js';
import { PRESET_ENV } from '../../../manifest/preset-names.js';
import type { CommandPreset, PresetLaunch, PresetOptions, UsageReader } from './preset.js';

/**
 * Aider, one message and exit: `aider --message-file {promptFile} --yes-always --no-auto-commits
 * --no-dirty-commits --no-gitignore --no-check-update --no-analytics --no-pretty --no-stream
 * --no-show-model-warnings --chat-history-file /dev/null --input-history-file /dev/null
 * [--model M] [args…]`. Auto-commits stay off (Genesis reads the working tree, committed or not),
 * and Aider must not add itself to `.gitignore` nor leave history files in the tree: either would
 * be a change outside the task's paths. Its tags cache (`.aider.tags.cache.v*`) still lands in the
 * workspace; list `.aider*` in the world's `.gitignore`.
 *
 * Usage is the sum of Aider's per-message report lines, `Tokens: 12k sent, 1.2k cache write,
 * 10k cache hit, 132 received. Cost: $0.01 message, $0.03 session.`: "sent" (the prompt tokens,
 * cached ones included) as input tokens, "cache hit" as cached, "received" as output, and the
 * last "session" cost. Aider rounds tokens above 1,000 to 0.1k (above 10,000 to 1k), so its
 * counts are approximate; older versions print exact counts ("2,345 sent") and no cache figures.
 *
 * Aider reaches its model through litellm, which picks a provider, its endpoint and its key
 * variable from the model's name: Genesis cannot know that endpoint, so Aider needs `agent.baseUrl`
 * (an OpenAI-compatible root ending in /v1, with `agent.model: openai/<model>`), which it is given
 * in OPENAI_API_BASE, the variable Aider documents for such endpoints.
 */
export const aiderPreset: CommandPreset = {
  name: 'aider',
  install: 'python -m pip install aider-install && aider-install',
  env: PRESET_ENV.aider,
  upstreamHint: 'with agent.model as openai/<model> for an OpenAI-compatible endpoint',
  argv: (o: PresetOptions) => [
    'aider',
    '--message-file',
    '{promptFile}',
    '--yes-always',
    '--no-auto-commits',
    '--no-dirty-commits',
    '--no-gitignore',
    '--no-check-update',
    '--no-analytics',
    '--no-pretty',
    '--no-stream',
    '--no-show-model-warnings',
    '--chat-history-file',
    '/dev/null',
    '--input-history-file',
    '/dev/null',
    ...(o.model ? ['--model', o.model] : []),
    ...o.args,
  ],
  launch: (o: PresetOptions): PresetLaunch => ({ env: o.baseUrl ? { OPENAI_API_BASE: o.baseUrl } : {}, homeFiles: {} }),
  usageReader: readAiderUsage,
};

const COUNT = String.raw`[\d.,]+[kM]?`;
// Older Aider prints "2,345 sent" and "$0.01 request"; newer "2.3k sent" and "$0.01 message".
const TOKENS = new RegExp(
  String.raw`^Tokens: (${COUNT}) sent(?:, (${COUNT}) cache write)?(?:, (${COUNT}) cache hit)?, (${COUNT}) received\.(?: Cost: \$([\d.]+) (?:message|request), \$([\d.]+) session\.)?`,
);

/** Aider's token counts: "950", "2,345", "2.5k", "12k", "1.2M". */
export function parseAiderCount(text: string): number {
  const scale = text.endsWith('k') ? 1e3 : text.endsWith('M') ? 1e6 : 1;
  return Math.round(Number.parseFloat(text.replaceAll(',', '')) * scale);
}

function readAiderUsage(): UsageReader {
  let reports = 0;
  const total = { input: 0, cached: 0, output: 0 };
  let sessionCost: number | null = null;
  const lines = lineSplitter((line) => {
    const m = TOKENS.exec(line.trim());
    if (!m) return;
    reports++;
    total.input += parseAiderCount(m[1]!);
    total.cached += m[3] ? parseAiderCount(m[3]) : 0;
    total.output += parseAiderCount(m[4]!);
    if (m[6]) sessionCost = Number.parseFloat(m[6]);
  });
  return {
    push: (chunk) => lines.push(chunk),
    usage: (): AgentUsage => {
      lines.flush();
      if (reports === 0) return { inputTokens: null, outputTokens: null, cachedTokens: null, costUsd: null };
      return { inputTokens: total.input, outputTokens: total.output, cachedTokens: total.cached, costUsd: sessionCost };
    },
  };
}
