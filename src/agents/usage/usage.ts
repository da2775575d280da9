/**
 * Token usage and cost of one episode's agent, as the ledger records it.
 *
 * Every field is a number when the agent (or the model endpoint) reported it and `null` when it
 * did not: an unknown is never written as 0, so budgets and statistics can tell "free" from "not
 * reported". `inputTokens` counts every input token, cached ones included; `cachedTokens` is the
 * part of them served from the provider's prompt cache (billed cheaper by most providers).
 */
export interface AgentUsage {
  inputTokens: number | null;
  outputTokens: number | null;
  cachedTokens: number | null;
  costUsd: number | null;
}

/** Prices of one model, in US dollars per million tokens. */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
  /** Price of cached input tokens. @default the input price */
  cachedInputPerMTok?: number;
}

/** Nothing reported yet. */
export function unknownUsage(): AgentUsage {
  return { inputTokens: null, outputTokens: null, cachedTokens: null, costUsd: null };
}

/** Known to be nothing: an agent that never called its model. */
export function zeroUsage(): AgentUsage {
  return { inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0 };
}

/**
 * The sum of two usages, field by field. A field unknown on either side is unknown in the sum:
 * a total that silently skipped a turn would look exact while it is not.
 */
export function addUsage(a: AgentUsage, b: AgentUsage): AgentUsage {
  const add = (x: number | null, y: number | null) => (x === null || y === null ? null : x + y);
  return {
    inputTokens: add(a.inputTokens, b.inputTokens),
    outputTokens: add(a.outputTokens, b.outputTokens),
    cachedTokens: add(a.cachedTokens, b.cachedTokens),
    costUsd: add(a.costUsd, b.costUsd),
  };
}

/**
 * What the tokens cost at `price`, or null when the price or the token counts are unknown. With
 * the cached share unknown, all input is charged at the input price (an upper bound: endpoints that
 * do not report caching rarely discount it).
 */
export function costOf(usage: Pick<AgentUsage, 'inputTokens' | 'outputTokens' | 'cachedTokens'>, price: ModelPrice | null): number | null {
  if (!price || usage.inputTokens === null || usage.outputTokens === null) return null;
  const cached = Math.min(usage.cachedTokens ?? 0, usage.inputTokens);
  const cachedPrice = price.cachedInputPerMTok ?? price.inputPerMTok;
  const dollars = ((usage.inputTokens - cached) * price.inputPerMTok + cached * cachedPrice + usage.outputTokens * price.outputPerMTok) / 1e6;
  // Rounded to a millionth of a dollar, so sums in the ledger stay readable.
  return Math.round(dollars * 1e6) / 1e6;
}

/**
 * `usage` with its cost filled in from `price` when the agent did not report one, or reported 0
 * for tokens it spent (a CLI's "0" for a model it has no price of): then the price replaces it,
 * and without a price the cost stays unknown, never 0.
 */
export function withCost(usage: AgentUsage, price: ModelPrice | null): AgentUsage {
  const spent = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0) > 0;
  if (usage.costUsd !== null && !(usage.costUsd === 0 && spent)) return usage;
  return { ...usage, costUsd: costOf(usage, price) };
}

/** True when nothing at all is known (then the ledger records `usage: null`). */
export function isUnknownUsage(usage: AgentUsage): boolean {
  return usage.inputTokens === null && usage.outputTokens === null && usage.cachedTokens === null && usage.costUsd === null;
}
