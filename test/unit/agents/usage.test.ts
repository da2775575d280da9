import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUsage, costOf, unknownUsage, withCost, zeroUsage } from '../../../src/agents/usage/usage.js';
import { priceOf } from '../../../src/agents/usage/prices.js';

describe('agent usage', () => {
  it('adds field by field', () => {
    expect(
      addUsage({ inputTokens: 1, outputTokens: 2, cachedTokens: 3, costUsd: 0.5 }, { inputTokens: 10, outputTokens: 20, cachedTokens: 30, costUsd: 1 }),
    ).toEqual({ inputTokens: 11, outputTokens: 22, cachedTokens: 33, costUsd: 1.5 });
  });

  it('keeps a field unknown when either side does not know it', () => {
    expect(addUsage({ ...zeroUsage(), cachedTokens: null }, { inputTokens: 5, outputTokens: 5, cachedTokens: 5, costUsd: null })).toEqual({
      inputTokens: 5,
      outputTokens: 5,
      cachedTokens: null,
      costUsd: null,
    });
    expect(addUsage(unknownUsage(), zeroUsage())).toEqual(unknownUsage());
  });

  it('charges cached input at the cached price and the rest at the input price', () => {
    expect(
      costOf({ inputTokens: 1_000_000, cachedTokens: 400_000, outputTokens: 100_000 }, { inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 0.5 }),
    ).toBe(1.2 + 0.2 + 0.8);
  });

  it('charges all input at the input price when the cached share is unknown', () => {
    expect(costOf({ inputTokens: 1_000_000, cachedTokens: null, outputTokens: 0 }, { inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 0.5 })).toBe(2);
  });

  it('has no cost without a price or without token counts', () => {
    expect(costOf({ inputTokens: 10, cachedTokens: 0, outputTokens: 10 }, null)).toBeNull();
    expect(costOf({ inputTokens: null, cachedTokens: null, outputTokens: 10 }, { inputPerMTok: 1, outputPerMTok: 1 })).toBeNull();
  });

  it("replaces a CLI's cost of 0 for spent tokens with the price, and without one leaves it unknown, never 0", () => {
    const free = { inputTokens: 1_000_000, outputTokens: 0, cachedTokens: 0, costUsd: 0 };
    expect(withCost(free, { inputPerMTok: 2, outputPerMTok: 8 }).costUsd).toBe(2);
    expect(withCost(free, null).costUsd).toBeNull();
    // Nothing spent costs nothing.
    expect(withCost({ inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0 }, null).costUsd).toBe(0);
  });

  it('has a price for every hosted model the README and the agents guide name', () => {
    // Read from the pages themselves, so an example added later without a price fails here. A block
    // that gives its own price, or points at a model on this machine (a baseUrl on loopback), needs none.
    const named = new Set<string>();
    for (const page of ['README.md', 'docs/guides/agents-and-presets.md']) {
      const text = readFileSync(join(import.meta.dirname, '..', '..', '..', page), 'utf8');
      for (const [, block] of text.matchAll(/```yaml\n([\s\S]*?)```/g)) {
        for (const line of block!.split('\n')) {
          const model = /\bmodel: "?([^",}\s]+)/.exec(line)?.[1];
          if (model && !/\bprice:|baseUrl: "?http:\/\/(127\.0\.0\.1|localhost)[:/]/.test(line)) named.add(model);
        }
      }
    }
    expect([...named]).toEqual(expect.arrayContaining(['sonnet', 'gpt-5-codex', 'gemini-2.5-pro']));
    for (const model of named) expect(priceOf(model, undefined), model).not.toBeNull();
  });

  it('keeps a cost the agent reported over one computed from a price', () => {
    expect(withCost({ inputTokens: 1e6, outputTokens: 0, cachedTokens: 0, costUsd: 9 }, { inputPerMTok: 1, outputPerMTok: 1 }).costUsd).toBe(9);
    expect(withCost({ inputTokens: 1e6, outputTokens: 0, cachedTokens: 0, costUsd: null }, { inputPerMTok: 1, outputPerMTok: 1 }).costUsd).toBe(1);
  });

  it('finds list prices by model name, dated snapshots and provider prefixes included, and lets the manifest override them', () => {
    expect(priceOf('gpt-4o-mini', undefined)).toMatchObject({ inputPerMTok: 0.15 });
    expect(priceOf('gpt-4o-2024-08-06', undefined)).toMatchObject({ inputPerMTok: 2.5 });
    expect(priceOf('openai/gpt-4.1', undefined)).toMatchObject({ inputPerMTok: 2 });
    expect(priceOf('qwen2.5-coder:7b', undefined)).toBeNull();
    expect(priceOf('qwen2.5-coder:7b', { inputPerMTok: 0, outputPerMTok: 0 })).toEqual({ inputPerMTok: 0, outputPerMTok: 0 });
  });
});
