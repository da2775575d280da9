import { unknownUsage, type AgentUsage } from '../../usage/usage.js';
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
 * set (passed through when set); the docker and bwrap agent sandboxes run it as uid 1000.
 */
export const claudeCodePreset: CommandPreset = {
  name: 'claude-code',
  install: 'npm install -g @anthropic-ai/claude-code',
  env: PRESET_ENV['claude-code'],
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
  usageReader: readClaudeUsage,
};

function readClaudeUsage(): UsageReader {
  let usage: AgentUsage = unknownUsage();
  const lines = lineSplitter((line) => {
    const event = parseJsonObject(line);
    if (event?.type !== 'result') return;
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
  };
}
