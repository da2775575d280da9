import type { AgentUsage } from '../../usage/usage.js';
import { lineSplitter, numberAt, objectAt, parseJsonObject } from './json-lines.js';
import { PRESET_ENV } from '../../../manifest/preset-names.js';
import type { CommandPreset, PresetOptions, UsageReader } from './preset.js';

/** What the positional message says; the task itself arrives on stdin, which `opencode run` reads. */
export const OPENCODE_MESSAGE = 'Carry out the task given on standard input.';

/**
 * OpenCode, non-interactive: `opencode run --format json [--model provider/model] [args…]
 * "Carry out the task given on standard input."`, the prompt on stdin (OpenCode joins piped
 * input with the message). `--format json` prints one event per line.
 *
 * Usage is the sum over `step_finish` events of `part.tokens`: `input + cache.read + cache.write`
 * input tokens (OpenCode counts cached input apart; Genesis counts it in), `cache.read` cached,
 * `output + reasoning` output (reasoning is billed as output), and `part.cost`, the cost OpenCode
 * computed from its own price list.
 */
export const opencodePreset: CommandPreset = {
  name: 'opencode',
  install: 'npm install -g opencode-ai',
  env: PRESET_ENV.opencode,
  argv: (o: PresetOptions) => ['opencode', 'run', '--format', 'json', ...(o.model ? ['--model', o.model] : []), ...o.args, OPENCODE_MESSAGE],
  usageReader: readOpencodeUsage,
};

function readOpencodeUsage(): UsageReader {
  let steps = 0;
  const total = { input: 0, cached: 0, output: 0, cost: 0, costKnown: true };
  const lines = lineSplitter((line) => {
    const event = parseJsonObject(line);
    if (event?.type !== 'step_finish') return;
    const part = objectAt(event.part);
    const tokens = objectAt(part.tokens);
    const cache = objectAt(tokens.cache);
    steps++;
    total.input += (numberAt(tokens.input) ?? 0) + (numberAt(cache.read) ?? 0) + (numberAt(cache.write) ?? 0);
    total.cached += numberAt(cache.read) ?? 0;
    total.output += (numberAt(tokens.output) ?? 0) + (numberAt(tokens.reasoning) ?? 0);
    const cost = numberAt(part.cost);
    if (cost === null) total.costKnown = false;
    total.cost += cost ?? 0;
  });
  return {
    push: (chunk) => lines.push(chunk),
    usage: (): AgentUsage => {
      lines.flush();
      if (steps === 0) return { inputTokens: null, outputTokens: null, cachedTokens: null, costUsd: null };
      return { inputTokens: total.input, outputTokens: total.output, cachedTokens: total.cached, costUsd: total.costKnown ? total.cost : null };
    },
  };
}
