import { describe, it } from 'vitest';
import { PRESETS } from '../../../src/agents/command/presets/index.js';
import { lineSplitter } from '../../../src/agents/command/presets/json-lines.js';
import { LastJsonObject } from '../../../src/agents/command/presets/last-json-object.js';
import type { PresetName } from '../../../src/manifest/preset-names.js';
import { trimNotes } from '../../../src/episode/trim-handoff.js';
import { scrubSecrets } from '../../../src/ledger/secret-scrubber.js';
import { expectLinear, inChunks } from '../../helpers/linear-time.js';

/**
 * The readers of what an agent prints, and what Genesis does to an agent's text before it keeps
 * it, on shapes that make a reader start over: output that arrives a few characters at a time
 * (each chunk is read as it comes, and a CLI's failure looked for after each), lines that never
 * end, many lines that look like the start of an object, long runs of spaces, nested braces.
 */
const sp = (n: number) => ' '.repeat(n);

/** A preset's reader fed `text` on stdout (or stderr) in chunks of `size`, its failure looked for after each, as command-agent does. */
function feed(preset: PresetName, stream: 'out' | 'err', size: number) {
  return (text: string) => {
    const reader = PRESETS[preset].usageReader();
    const push = stream === 'out' ? (c: string) => reader.push(c) : (c: string) => reader.pushError?.(c);
    inChunks(text, size, push, () => reader.failure?.());
    return reader.usage();
  };
}

/** The last object of `text` fed in chunks of `size`. */
function lastObjectIn(size: number) {
  return (text: string) => {
    const reader = new LastJsonObject();
    inChunks(text, size, (chunk) => reader.push(chunk));
    return reader.value;
  };
}

const SHAPES: Array<[string, (text: string) => unknown, (n: number) => string]> = [
  ['lines: one line that never ends, a character at a time', (t) => inChunks(t, 1, lineSplitter(() => undefined).push), (n) => 'x'.repeat(n)],
  ['lines: many short lines in one chunk', (t) => lineSplitter(() => undefined).push(t), (n) => '\n'.repeat(n)],
  ['last object: many lines that start with a brace', lastObjectIn(64), (n) => '\n{'.repeat(n / 2)],
  ['last object: braces nested deep, never closed', (t) => new LastJsonObject().push(t), (n) => `{${'{"a":['.repeat(n / 6)}`],
  ['gemini: its result object arriving in small chunks', feed('gemini', 'out', 16), (n) => `{\n  "response": "${'x'.repeat(n)}",\n  "stats": {}\n}\n`],
  ['gemini: lines that start with a brace, chunk by chunk', feed('gemini', 'out', 16), (n) => '{ "a": 1\n'.repeat(n / 9)],
  ['gemini: retried refusals on stderr, chunk by chunk', feed('gemini', 'err', 16), (n) => 'Attempt 1 failed with status 503. x\n'.repeat(n / 36)],
  ['gemini: an unfinished string on stderr', feed('gemini', 'err', 16), (n) => `{"error": "${'\\"'.repeat(n / 2)}`],
  ['opencode: a stream error line with a long run of spaces', feed('opencode', 'err', 64), (n) => `message="stream error" error.error="${sp(n)}x\n`],
  ['opencode: a json line that never ends', feed('opencode', 'out', 8), (n) => `{"type":"step_finish","part":{"tokens":${'1'.repeat(n)}`],
  ['claude-code: a json line that never ends', feed('claude-code', 'out', 8), (n) => `{"type":"result","usage":${sp(n)}`],
  ['codex: many events in small chunks', feed('codex', 'out', 8), (n) => '{"type":"turn.completed","usage":{"input_tokens":1}}\n'.repeat(n / 52)],
  [
    'copilot: a failed call whose message is a long run of spaces, chunk by chunk',
    feed('copilot', 'out', 64),
    (n) => `{"type":"model.call_failure","data":{"statusCode":429,"errorMessage":"retry in 1${sp(n)}x"}}\n`,
  ],
  [
    'copilot: failed calls one after another in small chunks',
    feed('copilot', 'out', 8),
    (n) => '{"type":"model.call_failure","data":{"statusCode":503}}\n'.repeat(n / 56),
  ],
  ['copilot: a json line that never ends', feed('copilot', 'out', 8), (n) => `{"type":"session.error","data":{"message":"${'\\"'.repeat(n / 2)}`],
  [
    'copilot: a usage report naming many models',
    (t) => {
      const reader = PRESETS.copilot.usageReader();
      reader.pushFile?.('.copilot-usage.json', t);
      return reader.usage();
    },
    (n) => `{"modelMetrics":{${Array.from({ length: n / 80 }, (_, i) => `"m${i}":{"usage":{"inputTokens":1,"outputTokens":1}}`).join(',')}}}`,
  ],
  [
    'qwen-code: a refusal that never closes, with a long run of spaces',
    feed('qwen-code', 'out', 64),
    (n) => `{"type":"assistant","message":{"content":[{"text":"[API Error: 429${sp(n)}"}]}}\n`,
  ],
  [
    'qwen-code: an error result full of closing brackets',
    feed('qwen-code', 'out', 16),
    (n) => `{"type":"result","is_error":true,"error":{"message":"[API Error: ${']'.repeat(n)}x"}}\n`,
  ],
  [
    'qwen-code: retry lines on stderr with long runs of spaces',
    feed('qwen-code', 'err', 64),
    (n) => `Retrying in 60s (attempt 1/10): ${sp(n / 4)}\n`.repeat(4),
  ],
  ['qwen-code: a json line that never ends', feed('qwen-code', 'out', 8), (n) => `{"type":"result","usage":${sp(n)}`],
  ['aider: token lines with long runs of spaces', feed('aider', 'out', 64), (n) => `Tokens: 1 sent, 1 received.${sp(n)}\n`.repeat(4)],
  ['secrets: a long run of spaces after a bearer word', (t) => scrubSecrets(t), (n) => `Bearer${sp(n)}x token${sp(n)}`],
  ['secrets: key prefixes one after another', (t) => scrubSecrets(t), (n) => `${'sk-a-'.repeat(n / 5)}!${'sk-'.repeat(n / 3)}`],
  ['secrets: private key headers that never close', (t) => scrubSecrets(t), (n) => '-----BEGIN A PRIVATE KEY-----'.repeat(n / 29)],
  ['secrets: values scrubbed from a long log', (t) => scrubSecrets(t, ['s3cr3t-value']), (n) => 's3cr3t-valu'.repeat(n / 11)],
  ['handoff notes: a padded file trimmed to its limit', (t) => trimNotes(t, t.length / 2), (n) => 'x\n'.repeat(n / 2)],
];

describe("the agent-output readers and Genesis's handling of agent text stay linear", () => {
  it.each(SHAPES)('%s', (_name, read, make) => {
    expectLinear(read, make);
  });
});
