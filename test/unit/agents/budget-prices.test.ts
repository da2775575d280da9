import { describe, expect, it } from 'vitest';
import { checkBudgetPrices } from '../../../src/agents/usage/budget-prices.js';
import { manifestSchema } from '../../../src/manifest/schema.js';

const manifest = (stop: Record<string, unknown>, agent: Record<string, unknown>) =>
  manifestSchema.parse({ name: 'w', goal: { outcome: 'x', stop }, verify: { test: 'true' }, agent: { kind: 'command', preset: 'codex', ...agent } });

describe('a budget in dollars', () => {
  it('is refused at start for a model Genesis has no price of, saying the two ways out', () => {
    const error = (() => {
      try {
        checkBudgetPrices(manifest({ maxCostUsd: 5 }, { model: 'my-local-model' }));
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(error).toMatchObject({ code: 'budget-unpriced', message: expect.stringContaining('no price for the model my-local-model of agent') });
    expect((error as { hint: string }).hint).toContain('agent.price');
    // The CLI's default model has no price either: the budget could never be counted.
    expect(() => checkBudgetPrices(manifest({}, { maxCostUsd: 1 }))).toThrow(/agent.maxCostUsd is set/);
    // A rotation entry without a price is named.
    expect(() => checkBudgetPrices(manifest({ maxCostUsd: 5 }, { model: 'gpt-5', rotation: [{ model: 'unpriced' }] }))).toThrow(/agent.rotation\[0\]/);
  });

  it('is taken with a priced model, with agent.price, or with no budget in dollars', () => {
    expect(() => checkBudgetPrices(manifest({ maxCostUsd: 5 }, { model: 'gpt-5-codex' }))).not.toThrow();
    expect(() => checkBudgetPrices(manifest({ maxCostUsd: 5 }, { model: 'mine', price: { inputPerMTok: 0, outputPerMTok: 0 } }))).not.toThrow();
    expect(() => checkBudgetPrices(manifest({ maxTokens: 1000 }, { model: 'mine' }))).not.toThrow();
  });
});
