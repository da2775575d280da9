import type { AgentUsage } from './usage.js';

/**
 * What one episode may report at most, unless `agent.limits.maxCostUsd` / `maxTokens` say
 * otherwise: far above what an agent spends in an episode, far below what would spend a world's
 * budget at once.
 */
export const EPISODE_USAGE_CAPS: Readonly<UsageCaps> = Object.freeze({ tokens: 200_000_000, costUsd: 100 });

/** The most one episode can honestly report: beyond it a figure is `usage-implausible`. */
export interface UsageCaps {
  /** Input or output tokens, and their sum. */
  tokens: number;
  costUsd: number;
}

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
 * is not a finite number (NaN, Infinity, a string) becomes null (unknown); a figure over the
 * episode's cap becomes null too (`usage-implausible`: an agent's own report must not spend a
 * world's budget, and so stop every later run, at once); each is named in `problems`, as is a
 * cached share larger than the input.
 */
export function checkUsage(reported: AgentUsage, caps: UsageCaps = EPISODE_USAGE_CAPS): CheckedUsage {
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
    } else if (value > (field === 'costUsd' ? caps.costUsd : caps.tokens)) {
      problems.push(
        `usage-implausible: ${field} was ${value}, over the cap of one episode (${capName(field)} ${field === 'costUsd' ? caps.costUsd : caps.tokens}); not charged`,
      );
      usage[field] = null;
    }
  }
  const sum = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
  if (sum > caps.tokens) {
    problems.push(`usage-implausible: inputTokens + outputTokens was ${sum}, over the cap of one episode (agent.limits.maxTokens ${caps.tokens}); not charged`);
    usage.inputTokens = null;
    usage.outputTokens = null;
    usage.cachedTokens = null;
  }
  if (usage.cachedTokens !== null && usage.inputTokens !== null && usage.cachedTokens > usage.inputTokens) {
    problems.push(`cachedTokens (${usage.cachedTokens}) exceeds inputTokens (${usage.inputTokens}); recorded as inputTokens`);
    usage.cachedTokens = usage.inputTokens;
  }
  return { usage, problems };
}

function capName(field: Field): string {
  return field === 'costUsd' ? 'agent.limits.maxCostUsd' : 'agent.limits.maxTokens';
}

/** What a record's usage adds to a budget: never below zero, whatever was written. */
export function spendOf(usage: { inputTokens: number | null; outputTokens: number | null; costUsd: number | null } | null): {
  costUsd: number;
  tokens: number;
} {
  const sane = (n: number | null | undefined) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0);
  return { costUsd: sane(usage?.costUsd), tokens: sane(usage?.inputTokens) + sane(usage?.outputTokens) };
}
