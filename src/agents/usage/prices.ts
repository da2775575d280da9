import type { ModelPrice } from './usage.js';

/**
 * List prices of a few hosted models (US dollars per million tokens, as published by OpenAI,
 * Anthropic and Google in 2025; Gemini 2.5 Pro at its rate for prompts up to 200k tokens), among
 * them every model the README's examples name. Prices change and local models cost what your hardware costs, so `agent.price` in
 * world.yaml overrides this table; a model in neither has an unknown cost (null), never 0.
 */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-4o': { inputPerMTok: 2.5, outputPerMTok: 10, cachedInputPerMTok: 1.25 },
  'gpt-4o-mini': { inputPerMTok: 0.15, outputPerMTok: 0.6, cachedInputPerMTok: 0.075 },
  'gpt-4.1': { inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 0.5 },
  'gpt-4.1-mini': { inputPerMTok: 0.4, outputPerMTok: 1.6, cachedInputPerMTok: 0.1 },
  'gpt-4.1-nano': { inputPerMTok: 0.1, outputPerMTok: 0.4, cachedInputPerMTok: 0.025 },
  o3: { inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 0.5 },
  'o4-mini': { inputPerMTok: 1.1, outputPerMTok: 4.4, cachedInputPerMTok: 0.275 },
  'gpt-5': { inputPerMTok: 1.25, outputPerMTok: 10, cachedInputPerMTok: 0.125 },
  'gpt-5-codex': { inputPerMTok: 1.25, outputPerMTok: 10, cachedInputPerMTok: 0.125 },
  'gpt-5-mini': { inputPerMTok: 0.25, outputPerMTok: 2, cachedInputPerMTok: 0.025 },
  'claude-sonnet-4-5': { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3 },
  // Claude Code's alias for its current Sonnet (the README's example), whose list price has stayed the same across versions.
  sonnet: { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3 },
  'claude-haiku-4-5': { inputPerMTok: 1, outputPerMTok: 5, cachedInputPerMTok: 0.1 },
  'claude-opus-4-1': { inputPerMTok: 15, outputPerMTok: 75, cachedInputPerMTok: 1.5 },
  'gemini-2.5-pro': { inputPerMTok: 1.25, outputPerMTok: 10, cachedInputPerMTok: 0.125 },
  'gemini-2.5-flash': { inputPerMTok: 0.3, outputPerMTok: 2.5, cachedInputPerMTok: 0.03 },
};

/**
 * The price to charge `model` at: the manifest's override first, then the table. Dated snapshots
 * (`gpt-4o-2024-08-06`) and provider prefixes (`openai/gpt-4o`) fall back to the base name.
 */
export function priceOf(model: string | undefined, override: ModelPrice | undefined): ModelPrice | null {
  if (override) return override;
  if (!model) return null;
  const name = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  return DEFAULT_PRICES[name] ?? DEFAULT_PRICES[name.replace(/-\d{4}-\d{2}-\d{2}$/, '')] ?? null;
}
