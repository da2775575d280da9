import { describe, expect, it } from 'vitest';
import { checkUsage, spendOf } from '../../../src/agents/usage/plausible-usage.js';

const sane = { inputTokens: 1000, outputTokens: 200, cachedTokens: 100, costUsd: 0.02 };

describe('checking the usage an agent reports', () => {
  it('keeps sane figures as they are and flags nothing', () => {
    expect(checkUsage(sane)).toEqual({ usage: sane, problems: [] });
    expect(checkUsage({ inputTokens: null, outputTokens: null, cachedTokens: null, costUsd: 0 })).toEqual({
      usage: { inputTokens: null, outputTokens: null, cachedTokens: null, costUsd: 0 },
      problems: [],
    });
  });

  it('records a negative figure as 0 and names it', () => {
    const { usage, problems } = checkUsage({ ...sane, costUsd: -50, outputTokens: -1 });
    expect(usage).toEqual({ ...sane, costUsd: 0, outputTokens: 0 });
    expect(problems).toEqual([expect.stringMatching(/^outputTokens was -1, below zero/), expect.stringMatching(/^costUsd was -50, below zero/)]);
  });

  it('records a figure that is not a finite number as unknown', () => {
    for (const bad of [Number.NaN, Infinity, -Infinity, '12' as unknown as number]) {
      const { usage, problems } = checkUsage({ ...sane, inputTokens: bad, cachedTokens: null });
      expect(usage.inputTokens).toBeNull();
      expect(problems).toEqual([expect.stringMatching(/^inputTokens was .* not a finite number/)]);
    }
  });

  it('flags a figure over the episode cap as usage-implausible and charges none of it, so no report spends a budget at once', () => {
    const { usage, problems } = checkUsage({ ...sane, costUsd: 99_999, inputTokens: 5e10, cachedTokens: 0 });
    expect(usage).toMatchObject({ costUsd: null, inputTokens: null });
    expect(problems).toEqual([
      expect.stringMatching(/^usage-implausible: inputTokens was 50000000000, over the cap of one episode \(agent.limits.maxTokens 200000000\)/),
      expect.stringMatching(/^usage-implausible: costUsd was 99999, over the cap of one episode \(agent.limits.maxCostUsd 100\)/),
    ]);
    expect(spendOf(usage)).toEqual({ costUsd: 0, tokens: 200 });
  });

  it('holds the caps a world sets, per figure and for input and output together', () => {
    const caps = { costUsd: 2, tokens: 1500 };
    expect(checkUsage({ ...sane, costUsd: 1.5 }, caps).problems).toEqual([]);
    const { usage, problems } = checkUsage({ ...sane, inputTokens: 1000, outputTokens: 600, costUsd: 3 }, caps);
    expect(usage).toMatchObject({ inputTokens: null, outputTokens: null, costUsd: null });
    expect(problems).toHaveLength(2);
  });

  it('caps a cached share larger than the input', () => {
    const { usage, problems } = checkUsage({ ...sane, cachedTokens: 5000 });
    expect(usage.cachedTokens).toBe(1000);
    expect(problems[0]).toMatch(/cachedTokens \(5000\) exceeds inputTokens/);
  });
});

describe('what a record adds to a budget', () => {
  it('never counts below zero, whatever a record holds', () => {
    expect(spendOf({ inputTokens: -5, outputTokens: 10, costUsd: -3 })).toEqual({ costUsd: 0, tokens: 10 });
    expect(spendOf({ inputTokens: Number.NaN, outputTokens: null, costUsd: Number.NaN })).toEqual({ costUsd: 0, tokens: 0 });
    expect(spendOf(null)).toEqual({ costUsd: 0, tokens: 0 });
    expect(spendOf({ inputTokens: 1, outputTokens: 2, costUsd: 0.5 })).toEqual({ costUsd: 0.5, tokens: 3 });
  });
});
