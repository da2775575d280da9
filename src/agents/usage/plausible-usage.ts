import type { AgentUsage } from './usage.js';

/**
 * Figures no agent can honestly report in one episode. Above them a figure is kept (a budget then
 * stops the run, the safe side) but flagged as nonsense.
 */
export const ABSURD_USAGE: Readonly<{ tokens: number; costUsd: number }> = Object.freeze({ tokens: 1e10, costUsd: 1e5 });

export interface CheckedUsage {
  usage: AgentUsage;
  /** What was wrong with the figures as reported, one line each; empty when they were sane. */
  problems: string[];
}

type Field = keyof AgentUsage;
const FIELDS: readonly Field[] = ['inputTokens', 'outputTokens', 'cachedTokens', 'costUsd'];

/**
 * Usage as the ledger may record it: every figure a finite number ≥ 0 or null. A negative figure
 * would lower the spend a budget (`maxCostUsd`, `maxTokens`) counts, so it becomes 0; a figure that
 * is not a finite number (NaN, Infinity, a string) becomes null (unknown); each is named in
 * `problems`, as is an absurd one and a cached share larger than the input.
 */
export function checkUsage(reported: AgentUsage): CheckedUsage {
  const problems: string[] = [];
  const usage = { ...reported };
  for (const field of FIELDS) {
    const value: unknown = reported[field];
    if (value === null || value === undefined) {
      usage[field] = null;
    } else if (typeof value !== 'number' || !Number.isFinite(value)) {
      problems.push(`${field} was ${JSON.stringify(String(value))}, not a finite number; recorded as unknown`);
      usage[field] = null;
    } else if (value < 0) {
      problems.push(`${field} was ${value}, below zero; recorded as 0`);
      usage[field] = 0;
    } else if (value > (field === 'costUsd' ? ABSURD_USAGE.costUsd : ABSURD_USAGE.tokens)) {
      problems.push(`${field} was ${value}, more than one episode can spend; recorded as reported`);
    }
  }
  if (usage.cachedTokens !== null && usage.inputTokens !== null && usage.cachedTokens > usage.inputTokens) {
    problems.push(`cachedTokens (${usage.cachedTokens}) exceeds inputTokens (${usage.inputTokens}); recorded as inputTokens`);
    usage.cachedTokens = usage.inputTokens;
  }
  return { usage, problems };
}

/** What a record's usage adds to a budget: never below zero, whatever was written. */
export function spendOf(usage: { inputTokens: number | null; outputTokens: number | null; costUsd: number | null } | null): {
  costUsd: number;
  tokens: number;
} {
  const sane = (n: number | null | undefined) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0);
  return { costUsd: sane(usage?.costUsd), tokens: sane(usage?.inputTokens) + sane(usage?.outputTokens) };
}
