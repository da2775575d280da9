import { describe, expect, it } from 'vitest';
import type { EpisodeRecord, GateRecord } from '../../../src/ledger/episode-record.js';
import { planEpisodeSpans, type PlannedSpan } from '../../../src/telemetry/episode-spans.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const gate = (ok: boolean, hidden = false): GateRecord => ({
  ok,
  sandbox: 'bwrap',
  summary: ok ? 'passed' : 'test failed',
  durationMs: 300,
  steps: [
    { name: 'build', command: 'npm run build', exitCode: 0, timedOut: false, oomKilled: false, durationMs: 100, tests: null },
    {
      name: 'test',
      command: 'npm test',
      exitCode: ok ? 0 : 1,
      timedOut: false,
      oomKilled: false,
      durationMs: 200,
      tests: { format: 'tap', passed: 3, failed: ok ? 0 : 1, skipped: 0 },
      hidden,
    },
  ],
});
const record = (fields: Partial<EpisodeRecord> = {}): EpisodeRecord => ({
  version: 1,
  id: 'e1',
  world: 'w',
  task: 't',
  attempt: 2,
  agent: 'claude-code:sonnet',
  base: 'b'.repeat(40),
  candidate: 'c'.repeat(40),
  commit: 'd'.repeat(40),
  status: 'final',
  outcome: 'accepted',
  reason: null,
  message: null,
  signature: null,
  startedAt: new Date(T0).toISOString(),
  endedAt: new Date(T0 + 10_000).toISOString(),
  phases: { workspace: 50, agent: 4000, collect: 20, gate: 300, integrate: 1000 },
  gate: gate(true),
  changedFiles: ['src/t.js'],
  usage: { inputTokens: 1200, outputTokens: 300, cachedTokens: 1000, costUsd: 0.05 },
  worker: 'host:1',
  ...fields,
});
const names = (s: PlannedSpan) => s.children.map((c) => c.name);
const child = (s: PlannedSpan, name: string) => s.children.find((c) => c.name === name)!;

describe('the spans of an episode', () => {
  it('lays the phases end to end from the start, the agent as a GenAI invoke_agent span, and lands at the end', () => {
    const root = planEpisodeSpans(record());
    expect(root).toMatchObject({ name: 'episode t', startMs: T0, endMs: T0 + 10_000, error: null });
    expect(names(root)).toEqual(['workspace', 'invoke_agent claude-code:sonnet', 'collect', 'gate', 'integrate', 'land']);
    const agent = child(root, 'invoke_agent claude-code:sonnet');
    expect([agent.startMs, agent.endMs]).toEqual([T0 + 50, T0 + 4050]);
    expect(agent.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'sonnet',
      'gen_ai.usage.input_tokens': 1200,
      'gen_ai.usage.output_tokens': 300,
      'gen_ai.usage.cache_read.input_tokens': 1000,
      'genesis.usage.cost_usd': 0.05,
    });
    expect(names(child(root, 'gate'))).toEqual(['gate build', 'gate test']);
    expect(child(root, 'integrate')).toMatchObject({ startMs: T0 + 9000, endMs: T0 + 10_000 });
    expect(child(root, 'land')).toMatchObject({ startMs: T0 + 10_000, attributes: { 'genesis.commit': 'd'.repeat(40) } });
  });

  it('marks a rejected episode and its failing step as errors, leaves unknown usage out, and names no hidden check', () => {
    const root = planEpisodeSpans(
      record({
        outcome: 'rejected',
        reason: 'test-failed',
        commit: null,
        gate: gate(false, true),
        usage: null,
        agent: 'script',
        phases: { workspace: 5, agent: 10, gate: 300 },
      }),
    );
    expect(root.error).toBe('rejected (test-failed)');
    expect(names(root)).toEqual(['workspace', 'invoke_agent script', 'gate']);
    expect(Object.keys(child(root, 'invoke_agent script').attributes).filter((k) => k.includes('usage'))).toEqual([]);
    const [, test] = child(root, 'gate').children;
    expect(test).toMatchObject({ name: 'gate hidden check', error: 'exit 1', attributes: { 'genesis.gate.step': 'hidden', 'genesis.tests.failed': 1 } });
  });

  it('puts the steps under the gate on the base when the tip failed, and the verification on the tip under integration', () => {
    const failedOnTip = planEpisodeSpans(record({ phases: { agent: 10, gate: 300, 'gate-on-base': 300 }, gatedOn: null }));
    expect(child(failedOnTip, 'gate').children).toEqual([]);
    expect(names(child(failedOnTip, 'gate-on-base'))).toEqual(['gate build', 'gate test']);
    const replayed = planEpisodeSpans(
      record({ reason: 'replayed', verification: { id: 'e1-v2', onto: 'f'.repeat(40), tree: 'a'.repeat(40), gate: gate(true) } }),
    );
    const verification = child(child(replayed, 'integrate'), 'verification');
    expect(verification).toMatchObject({ startMs: T0 + 9000, endMs: T0 + 9300 });
    expect(names(verification)).toEqual(['gate build', 'gate test']);
  });

  it('keeps every span inside the episode, even when phases add up to more than it lasted', () => {
    const root = planEpisodeSpans(record({ endedAt: new Date(T0 + 1000).toISOString() }));
    const all = (s: PlannedSpan): PlannedSpan[] => [s, ...s.children.flatMap(all)];
    for (const s of all(root)) expect(s.endMs, s.name).toBeLessThanOrEqual(T0 + 1000);
  });
});
