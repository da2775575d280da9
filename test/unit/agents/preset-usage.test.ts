import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAiderCount } from '../../../src/agents/command/presets/aider.js';
import { PRESETS, type PresetName } from '../../../src/agents/command/presets/index.js';

const OUTPUTS = join(import.meta.dirname, '..', '..', 'fixtures', 'agents', 'outputs');
const output = (file: string) => readFileSync(join(OUTPUTS, file), 'utf8');

/** Feeds `text` to the preset's reader in chunks of `size` characters, as a pipe delivers it. */
function read(preset: PresetName, text: string, size = 7) {
  const reader = PRESETS[preset].usageReader();
  for (let i = 0; i < text.length; i += size) reader.push(text.slice(i, i + size));
  return reader.usage();
}

const UNKNOWN = { inputTokens: null, outputTokens: null, cachedTokens: null, costUsd: null };

describe('reading usage from the output of each CLI agent', () => {
  it('reads Claude Code: cache writes and reads counted as input, reads as cached, its own cost', () => {
    expect(read('claude-code', output('claude-stream.jsonl'))).toEqual({
      inputTokens: 10 + 2320 + 24200,
      outputTokens: 70,
      cachedTokens: 24200,
      costUsd: 0.01932,
    });
  });

  it("reads an older Claude Code's cost_usd", () => {
    const line = JSON.stringify({ type: 'result', subtype: 'success', cost_usd: 0.5, usage: { input_tokens: 100, output_tokens: 7 } });
    expect(read('claude-code', `${line}\n`)).toEqual({ inputTokens: 100, outputTokens: 7, cachedTokens: 0, costUsd: 0.5 });
  });

  it('reads Codex: the sum over turn.completed events, with no cost', () => {
    expect(read('codex', output('codex-exec.jsonl'))).toEqual({ inputTokens: 27763, outputTokens: 152, cachedTokens: 26496, costUsd: null });
  });

  it("reads Aider's report lines, k-rounded counts and the last session cost", () => {
    expect(read('aider', output('aider.txt'))).toEqual({ inputTokens: 12950, outputTokens: 180, cachedTokens: 10000, costUsd: 0.01 });
  });

  it("reads an older Aider's exact counts with thousands separators", () => {
    expect(read('aider', output('aider-old.txt'))).toEqual({ inputTokens: 5355, outputTokens: 165, cachedTokens: 0, costUsd: 0.04 });
  });

  it('reads OpenCode: step_finish tokens with cache and reasoning, and its costs summed', () => {
    const usage = read('opencode', output('opencode-run.jsonl'));
    expect(usage).toMatchObject({ inputTokens: 9200, outputTokens: 116, cachedTokens: 7200 });
    expect(usage.costUsd).toBeCloseTo(0.0163, 10);
  });

  it("reads Gemini CLI's final pretty-printed object, summing every model it used, with no cost", () => {
    expect(read('gemini', output('gemini.json'))).toEqual({ inputTokens: 25739, outputTokens: 184, cachedTokens: 21263, costUsd: null });
  });

  it("reads Qwen Code's result: the API's prompt tokens with the cached ones among them, no cost", () => {
    expect(read('qwen-code', output('qwen-stream.jsonl'))).toEqual({ inputTokens: 1000, outputTokens: 20, cachedTokens: 400, costUsd: null });
  });

  it("reads Copilot's usage report, the file it leaves in its HOME, not its events, which carry no tokens", () => {
    const reader = PRESETS.copilot.usageReader();
    reader.push(`${JSON.stringify({ type: 'result', exitCode: 0, usage: { premiumRequests: 0, totalApiDurationMs: 52 } })}\n`);
    expect(reader.usage()).toEqual(UNKNOWN);
    reader.pushFile?.('.copilot-usage.json', output('copilot-usage.json'));
    expect(reader.usage()).toEqual({ inputTokens: 1000, outputTokens: 20, cachedTokens: 400, costUsd: null });
  });

  for (const preset of Object.keys(PRESETS) as PresetName[]) {
    it(`keeps ${preset}'s usage unknown, never 0, when the output reports none`, () => {
      expect(read(preset, 'Error: something went wrong\n{"type":"other"}\n')).toEqual(UNKNOWN);
    });
  }

  it("parses Aider's token counts", () => {
    expect(['950', '2,345', '2.5k', '12k', '1.2M'].map(parseAiderCount)).toEqual([950, 2345, 2500, 12000, 1200000]);
  });
});
