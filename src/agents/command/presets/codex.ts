import type { AgentUsage } from '../../usage/usage.js';
import { lineSplitter, numberAt, objectAt, parseJsonObject } from './json-lines.js';
import { PRESET_ENV } from '../../../manifest/preset-names.js';
import type { CommandPreset, PresetOptions, UsageReader } from './preset.js';

/**
 * Codex CLI, non-interactive: `codex exec --json --full-auto [--model M] [args…] -`, the prompt on
 * stdin (`-`). `--json` prints one event per line (`thread.started`, `item.completed`, …,
 * `turn.completed`). In an agent sandbox (docker, bwrap) `--full-auto` becomes
 * `--dangerously-bypass-approvals-and-sandbox`: Codex's own Landlock sandbox cannot nest inside
 * ours, and ours is the boundary that matters.
 *
 * Usage is the sum over `turn.completed` events of `usage.input_tokens` (cached included),
 * `usage.cached_input_tokens` and `usage.output_tokens`. Codex does not report a cost: it stays
 * unknown unless `agent.price` (or the price table, for a known `agent.model`) prices the tokens.
 */
export const codexPreset: CommandPreset = {
  name: 'codex',
  install: 'npm install -g @openai/codex',
  env: PRESET_ENV.codex,
  argv: (o: PresetOptions) => [
    'codex',
    'exec',
    '--json',
    o.sandboxed ? '--dangerously-bypass-approvals-and-sandbox' : '--full-auto',
    ...(o.model ? ['--model', o.model] : []),
    ...o.args,
    '-',
  ],
  usageReader: readCodexUsage,
};

function readCodexUsage(): UsageReader {
  let turns = 0;
  const total = { input: 0, cached: 0, output: 0, cachedKnown: true, complete: true };
  const lines = lineSplitter((line) => {
    const event = parseJsonObject(line);
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
  };
}
